#!/usr/bin/env python3
"""Compare a real CUDA toolkit with the knowledge base's CUDA record.

Reads ``include/crt/host_config.h`` (newest GCC and Clang majors nvcc accepts) and the archs the
toolkit compiles (``nvcc --list-gpu-arch``, or ``ptxas --help`` where a toolkit ships no nvcc,
as the cu11/cu12 PyPI wheels do) from a toolkit root, e.g. ``/usr/local/cuda`` or a directory
unpacked from the PyPI wheels, and prints what differs from ``torchsmith/kb/data/cuda.toml``.

    python scripts/refresh_cuda.py --root /usr/local/cuda-13.0
    python scripts/refresh_cuda.py --root /tmp/nvcc-12.4 --version 12.4

Exit status: 0 when the toolkit agrees with the KB, 1 when something differs, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GCC_RE = re.compile(r"^#if __GNUC__ > (\d+)")
CLANG_BLOCK_RE = re.compile(r"^#if defined\(__clang__\)")
CLANG_GE_RE = re.compile(r"__clang_major__ >= (\d+)")
CLANG_GT_RE = re.compile(r"__clang_major__ > (\d+)")
ARCH_RE = re.compile(r"\b(?:sm|compute)_(\d+)\b")
RELEASE_RE = re.compile(r"release (\d+\.\d+)")
CUDA_TOML = Path(__file__).resolve().parent.parent / "torchsmith" / "kb" / "data" / "cuda.toml"


@dataclass(frozen=True)
class ToolkitFacts:
    """What one toolkit says about itself."""

    version: str | None
    gcc_max: int | None
    clang_max: int | None
    archs: tuple[str, ...]


def parse_gcc_max(header: str) -> int | None:
    """The N of the first ``#if __GNUC__ > N`` check: nvcc refuses any newer GCC major."""
    for line in header.splitlines():
        match = GCC_RE.match(line.strip())
        if match:
            return int(match.group(1))
    return None


def parse_clang_max(header: str) -> int | None:
    """Newest Clang major of the generic clang check (not the HOS/Grace variants)."""
    lines = [line.strip() for line in header.splitlines()]
    for index, line in enumerate(lines):
        if not CLANG_BLOCK_RE.match(line):
            continue
        for follow in lines[index + 1 : index + 6]:
            if ge := CLANG_GE_RE.search(follow):
                return int(ge.group(1)) - 1
            if gt := CLANG_GT_RE.search(follow):
                return int(gt.group(1))
    return None


def cc_of(number: int) -> str:
    """sm_86 -> '8.6', sm_100 -> '10.0'."""
    return f"{number // 10}.{number % 10}"


def parse_archs(text: str) -> tuple[str, ...]:
    """Plain compute capabilities named in nvcc/ptxas output ('sm_90a' counts as neither)."""
    numbers = {int(m.group(1)) for m in ARCH_RE.finditer(text)}
    return tuple(cc_of(n) for n in sorted(numbers))


def parse_release(nvcc_version: str) -> str | None:
    match = RELEASE_RE.search(nvcc_version)
    return match.group(1) if match else None


def find_one(root: Path, pattern: str) -> Path | None:
    return next(iter(sorted(root.rglob(pattern))), None)


def _query(argv: Sequence[str | Path], env: Mapping[str, str]) -> str:
    from torchsmith.proc import capture

    return capture(argv, env=env).stdout


def read_toolkit(root: Path, env: Mapping[str, str], version: str | None) -> ToolkitFacts:
    header_path = find_one(root, "crt/host_config.h")
    header = header_path.read_text(errors="replace") if header_path else ""
    nvcc = find_one(root, "bin/nvcc")
    if nvcc is not None:
        archs = parse_archs(_query([nvcc, "--list-gpu-arch"], env))
        version = version or parse_release(_query([nvcc, "--version"], env))
    elif (ptxas := find_one(root, "bin/ptxas")) is not None:
        archs = parse_archs(_gpu_name_section(_query([ptxas, "--help"], env)))
    else:
        archs = ()
    return ToolkitFacts(version, parse_gcc_max(header), parse_clang_max(header), archs)


def _gpu_name_section(help_text: str) -> str:
    start = help_text.find("--gpu-name")
    end = help_text.find("\n\n", start)
    return help_text[start:end] if start >= 0 else ""


def compare(facts: ToolkitFacts, kb_record: Mapping[str, object]) -> list[str]:
    """One line per fact; '!' marks a difference, '=' agreement, '?' a fact the root lacks."""
    lines = []
    for name in ("gcc_max", "clang_max"):
        have, want = getattr(facts, name), kb_record.get(name)
        mark = "?" if have is None else "=" if have == want else "!"
        lines.append(f"{mark} {name}: toolkit {have}, kb {want}")
    if not facts.archs:
        return [*lines, "? archs: no nvcc or ptxas under the root"]
    kb_archs = set(_strings(kb_record.get("archs", ())))
    extra = sorted(set(facts.archs) - kb_archs, key=_cc_key)
    missing = sorted(kb_archs - set(facts.archs), key=_cc_key)
    mark = "=" if not (extra or missing) else "!"
    lines.append(f"{mark} archs: toolkit {' '.join(facts.archs)}")
    if extra or missing:
        lines.append(
            f"    only in toolkit: {' '.join(extra) or '-'}; only in kb: {' '.join(missing) or '-'}"
        )
    return lines


def _strings(value: object) -> Iterable[str]:
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _cc_key(cc: str) -> tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def kb_record_for(version: str) -> dict[str, object] | None:
    """The cuda.toml record for ``version``, validated by the KB model (only that file is read,
    so a half-edited neighbour data file cannot get in the way)."""
    from torchsmith.kb.schema import CudaRelease

    data = tomllib.loads(CUDA_TOML.read_text(encoding="utf-8"))
    for row in data.get("cuda", []):
        if row.get("version") == version:
            return CudaRelease.model_validate(row).model_dump()
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, required=True, help="toolkit root to read")
    parser.add_argument("--version", help="CUDA X.Y when the root has no nvcc to ask")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        print(f"error: {args.root} is not a directory", file=sys.stderr)
        return 2
    facts = read_toolkit(args.root, dict(os.environ), args.version)
    if facts.version is None:
        print("error: no nvcc under the root; pass --version X.Y", file=sys.stderr)
        return 2
    record = kb_record_for(facts.version)
    print(f"CUDA {facts.version} at {args.root}")
    if record is None:
        print(f"! kb has no [[cuda]] record for {facts.version}: add one with these facts")
        print(f"  gcc_max={facts.gcc_max} clang_max={facts.clang_max} archs={list(facts.archs)}")
        return 1
    lines = compare(facts, record)
    print("\n".join(lines))
    return 1 if any(line.startswith("!") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
