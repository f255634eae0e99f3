#!/usr/bin/env python3
"""Re-derive the official arch lists of torchsmith/kb/data/arch_lists.toml from the CI scripts
their records name, and print where they differ.

Each record's source names the script it was read from as ``owner/repo@ref:path`` (pytorch's
``.ci/manywheel/build_cuda.sh``, pytorch/builder's ``manywheel/build_cuda.sh``, or a pytorch
fork's copy at a commit). This script fetches every such file once from
``https://raw.githubusercontent.com/<owner>/<repo>/<ref>/<path>``, evaluates its ``case
${CUDA_VERSION} in`` block for the record's CUDA (x86_64: aarch64-only branches are skipped) and
compares the TORCH_CUDA_ARCH_LIST it yields with the record. A record whose first source is not
such a script (a measured wheel, a maintainer's statement) is listed as not re-derivable, and a
script without a case block (the if/elif chains of the 1.x builder) as not evaluated: those stay
curated by hand.

Usage: scripts/refresh_arch_lists.py [--torch 2.6] [--cache DIR]
Exit status: 0 all re-derived lists agree, 1 some differ, 2 no source could be fetched.
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
ARCH_LISTS = ROOT / "torchsmith/kb/data/arch_lists.toml"
DEFAULT_CACHE = Path.home() / ".cache/torchsmith/refresh_arch_lists"
RAW = "https://raw.githubusercontent.com/{repo}/{ref}/{path}"
SCRIPT_SOURCE = re.compile(r"^([\w.-]+/[\w.-]+)@([\w./-]+):(\S*build(?:_cuda)?\.sh)")
TIMEOUT = 60


# -- pure parsing (unit-tested) ---------------------------------------------------------------
def script_source(source: str) -> tuple[str, str, str] | None:
    """(repo, ref, path) of the CI script a record's source names first, if it names one."""
    m = SCRIPT_SOURCE.match(source.strip())
    return (m.group(1), m.group(2), m.group(3)) if m else None


def _arm_matches(label: str, cuda: str) -> bool:
    """A case label ('12.4 | 12.6', '11.[67]', '*') against a CUDA version, as bash globs."""
    for alt in (a.strip() for a in label.split("|")):
        regex = re.escape(alt).replace(r"\*", ".*").replace(r"\[", "[").replace(r"\]", "]")
        if re.fullmatch(regex, cuda):
            return True
    return False


CASE = re.compile(r"case \$\{?CUDA_VERSION\}? in\n(.*?)\n\s*esac", re.S)


def _case_block(text: str) -> list[tuple[str, str]]:
    """The arms of the ``case ${CUDA_VERSION} in`` block: (label, body)."""
    m = CASE.search(text)
    if not m:
        return []
    out = []
    for arm in re.split(r";;", m.group(1)):
        head = re.match(r"\s*(?:#[^\n]*\n\s*)*([^)\n#]+)\)(.*)", arm, re.S)
        if head:
            out.append((head.group(1).strip(), head.group(2)))
    return out


def _x86_body(body: str) -> str:
    """Drop aarch64-only branches: keep the else branch of an aarch64 test, and evaluate the
    ``$([[ "$ARCH" == "aarch64" ]] && echo "X" || echo "Y")`` idiom as Y."""
    body = re.sub(
        r'if \[\[ "\$GPU_ARCH_TYPE" = "cuda-aarch64" \]\]; then.*?else(.*?)fi',
        r"\1",
        body,
        flags=re.S,
    )
    body = re.sub(r'if \[\[ "\$PACKAGE_TYPE" == "libtorch" \]\]; then.*?fi', "", body, flags=re.S)
    return re.sub(
        r'\$\(\[\[ "\$ARCH" == "aarch64" \]\] && echo "[^"]*" \|\| echo "([^"]*)"\)', r"\1", body
    )


def _assign(value: str, current: str) -> str:
    return value.replace("${TORCH_CUDA_ARCH_LIST}", current).replace(
        "$TORCH_CUDA_ARCH_LIST", current
    )


def evaluate(text: str, cuda: str) -> str | None:
    """TORCH_CUDA_ARCH_LIST of an x86_64 wheel build for ``cuda``; None when the script has no
    case block or no arm for that CUDA."""
    arms = _case_block(text)
    if not arms:
        return None
    start = CASE.search(text).start()  # type: ignore[union-attr]
    base = None
    for m in re.finditer(r'(?m)^\s*(?:export )?TORCH_CUDA_ARCH_LIST="([^"]*)"', text[:start]):
        base = _assign(m.group(1), base or "")
    for label, body in arms:
        if label == "*" or not _arm_matches(label, cuda):
            continue
        value = base or ""
        for m in re.finditer(r'TORCH_CUDA_ARCH_LIST="([^"]*)"', _x86_body(body)):
            value = _assign(m.group(1), value)
        return value.strip(";")
    return None


def compare(records: Iterable[Mapping[str, Any]], fetch: Any) -> tuple[list[str], int]:
    """Diff lines, and how many records were re-derived."""
    lines, derived = [], 0
    for rec in records:
        where = script_source(rec.get("sources", {}).get("*", ""))
        label = f"torch {rec['torch']} cuda {rec['cuda']}"
        if where is None:
            lines.append(f"  {label}: not re-derivable (source is not a CI script)")
            continue
        text = fetch(*where)
        if text is None:
            lines.append(f"? {label}: {where[0]}@{where[1]}:{where[2]} could not be fetched")
            continue
        value = evaluate(text, rec["cuda"])
        if value is None:
            lines.append(f"  {label}: {where[2]} has no case arm for CUDA {rec['cuda']} (by hand)")
            continue
        derived += 1
        if value != rec["arch_list"]:
            lines.append(f"~ {label}: kb={rec['arch_list']!r} script={value!r}")
    return lines, derived


# -- I/O --------------------------------------------------------------------------------------
def fetcher(cache: Path) -> Any:
    def fetch(repo: str, ref: str, path: str) -> str | None:
        local = cache / repo.replace("/", "+") / ref.replace("/", "+") / path
        if local.exists():
            return local.read_text(encoding="utf-8")
        try:
            url = RAW.format(repo=repo, ref=ref, path=path)
            with urllib.request.urlopen(url, timeout=TIMEOUT) as resp:
                text = str(resp.read().decode("utf-8", "replace"))
        except (urllib.error.URLError, TimeoutError):
            return None
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text, encoding="utf-8")
        return text

    return fetch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", help="only records whose range starts with this, e.g. 2.6")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE))
    args = parser.parse_args(argv)
    records = tomllib.loads(ARCH_LISTS.read_text(encoding="utf-8"))["arch_list"]
    if args.torch:
        records = [r for r in records if r["torch"].startswith(f">={args.torch}")]
    lines, derived = compare(records, fetcher(Path(args.cache)))
    print("\n".join(lines))
    differ = [ln for ln in lines if ln.startswith("~")]
    unfetched = [ln for ln in lines if ln.startswith("?")]
    print(f"{derived} of {len(records)} lists re-derived, {len(differ)} differ")
    if unfetched and not derived:
        return 2
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
