#!/usr/bin/env python3
"""Record the manifest digest of every ``[[tool_image]]`` of torchsmith/kb/data/images/images.toml
(security review f1b4bec N18: the generated Dockerfile copied uv from an image pulled by tag, so
whoever can move the tag chose the binary the image build runs).

For each tool image, ``skopeo inspect --raw docker://IMAGE`` (skopeo reads the registry; no
engine, no pull) gives the tag's manifest (list) as served; its sha256 is the digest that
``COPY --from=IMAGE@DIGEST`` pulls by. The script edits only the ``digest = ...`` line of each
``[[tool_image]]`` (put after ``image = ...``) and the ``digest = ...`` line of its
``[tool_image.sources]``, so running it again changes nothing unless the tag moved — which
``--check`` reports (exit 1) without writing.

The registry must be reachable (ghcr.io for uv); this machine's sandbox is not, so the KB ships
without a digest and `torchsmith image` warns until this has been run.

Usage: scripts/refresh_tool_images.py [--check]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "torchsmith" / "kb" / "data" / "images" / "images.toml"
RECORD = re.compile(r"^\[\[tool_image\]\]\n(?:(?!\[).*\n)*?image = \"(?P<image>[^\"]+)\"\n", re.M)


def digest_of(image: str) -> str:
    """The digest the registry serves for the tag now."""
    done = subprocess.run(
        ["skopeo", "inspect", "--no-tags", "--raw", f"docker://{image}"],
        capture_output=True,
        check=True,
    )
    return "sha256:" + hashlib.sha256(done.stdout).hexdigest()


def _with_digest(text: str, image: str, digest: str) -> str:
    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    host, rest = image.split("/", 1)
    repo, tag = rest.rsplit(":", 1)
    url = f"https://{host}/v2/{repo}/manifests/{tag}"
    source = f'digest = "{url} (sha256 of the manifest as served: skopeo inspect --raw, {day})"'
    start = text.index(f'image = "{image}"\n')
    end = text.find("[[", start)
    end = len(text) if end < 0 else end
    record = re.sub(r"^digest = .*\n", "", text[start:end], flags=re.M)
    record = record.replace(f'image = "{image}"\n', f'image = "{image}"\ndigest = "{digest}"\n', 1)
    record = record.replace("[tool_image.sources]\n", f"[tool_image.sources]\n{source}\n", 1)
    return text[:start] + record + text[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report changes, write nothing")
    args = parser.parse_args()
    text = DATA.read_text(encoding="utf-8")
    new, changed = text, []
    for match in RECORD.finditer(text):
        image = match["image"]
        digest = digest_of(image)
        if f'digest = "{digest}"' not in text:
            changed.append({"image": image, "digest": digest})
        new = _with_digest(new, image, digest)
    print(json.dumps(changed, indent=2))
    if args.check:
        return 1 if changed else 0
    DATA.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
