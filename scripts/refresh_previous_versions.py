#!/usr/bin/env python3
"""Re-derive the companions and CUDA variants of torchsmith/kb/data/releases.toml from PyTorch's
previous-versions page and print where they differ.

The page (https://pytorch.org/get-started/previous-versions/) is read from the repository copy
the KB's records cite, ``pytorch/pytorch.github.io@<commit>:_get_started/previous-versions.md``
(``--page`` takes another commit's URL or a local file). From every ``pip install torch==X ...``
line it takes the torchvision / torchaudio pins and the CUDA variant (``+cu111``, ``/cu111``, or
the ``# CUDA 11.1`` comment above the line). This covers what PyPI cannot: releases published only
on download.pytorch.org, such as the 1.8.2 LTS. torchtext is never on the page, so it is not
compared.

Usage: scripts/refresh_previous_versions.py [--page URL_OR_FILE]
Exit status: 0 agree, 1 differ, 2 the page could not be read.
"""

from __future__ import annotations

import argparse
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
RELEASES_TOML = ROOT / "torchsmith/kb/data/releases.toml"
PAGE = (
    "https://raw.githubusercontent.com/pytorch/pytorch.github.io/"
    "04862e376ea686ba351674864400db1d93113979/_get_started/previous-versions.md"
)
PIP = re.compile(r"pip3? install torch==(?P<torch>\d+\.\d+\.\d+)(?P<local>\+\w+)?(?P<rest>.*)")
CUDA_COMMENT = re.compile(r"^#\s*CUDA (\d+\.\d+)")


# -- pure parsing (unit-tested) ---------------------------------------------------------------
def _cuda_of(local: str, rest: str, comment: str | None) -> str | None:
    tag = re.search(r"cu(\d+)(\d)\b", local or "") or re.search(r"/cu(\d+)(\d)\b", rest)
    if tag:
        return f"{tag.group(1)}.{tag.group(2)}"
    return comment


def parse_page(lines: Iterable[str]) -> dict[str, dict[str, Any]]:
    """torch version -> {'torchvision', 'torchaudio', 'cuda': sorted CUDA variants}."""
    out: dict[str, dict[str, Any]] = {}
    comment: str | None = None
    for raw in lines:
        line = raw.strip()
        m = CUDA_COMMENT.match(line)
        if m:
            comment = m.group(1)
            continue
        pip = PIP.search(line)
        if not pip:
            continue
        rec = out.setdefault(pip["torch"], {"cuda": set()})
        for name in ("torchvision", "torchaudio"):
            pin = re.search(rf"{name}==+(\d+\.\d+\.\d+)", pip["rest"])
            if pin:
                rec.setdefault(name, pin.group(1))
        cuda = _cuda_of(pip["local"] or "", pip["rest"], comment)
        if cuda and "rocm" not in line and "cpu" not in (pip["local"] or ""):
            rec["cuda"].add(cuda)
        comment = None
    return {
        v: {**r, "cuda": sorted(r["cuda"], key=lambda c: tuple(map(int, c.split("."))))}
        for v, r in out.items()
    }


def diff(page: Mapping[str, Mapping[str, Any]], records: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = []
    for rec in records:
        facts = page.get(rec["torch"])
        if facts is None:
            continue
        for name in ("torchvision", "torchaudio"):
            if facts.get(name) and rec.get(name) != facts[name]:
                lines.append(
                    f"~ torch {rec['torch']}: {name}: kb={rec.get(name)!r} page={facts[name]!r}"
                )
        missing = [c for c in facts["cuda"] if c not in rec.get("cuda", [])]
        if missing:
            lines.append(f"~ torch {rec['torch']}: cuda: the page has {missing}, not in kb")
    return lines


# -- I/O --------------------------------------------------------------------------------------
def read_page(where: str) -> list[str] | None:
    if not where.startswith(("http://", "https://")):
        return Path(where).read_text(encoding="utf-8").splitlines()
    try:
        with urllib.request.urlopen(where, timeout=60) as resp:
            return str(resp.read().decode("utf-8", "replace")).splitlines()
    except (urllib.error.URLError, TimeoutError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", default=PAGE, help="URL or local copy of previous-versions.md")
    args = parser.parse_args(argv)
    lines = read_page(args.page)
    if lines is None:
        print(f"refresh_previous_versions: cannot read {args.page}", file=sys.stderr)
        return 2
    page = parse_page(lines)
    records = tomllib.loads(RELEASES_TOML.read_text(encoding="utf-8"))["release"]
    out = diff(page, records)
    print("\n".join(out) if out else f"releases.toml agrees with the page ({len(page)} releases)")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
