"""Host C/C++ compilers: candidates (gcc, gcc-N, clang, clang-N on PATH, /usr/bin, Red Hat
toolsets) in priority order, deduplicated by real path, then asked for their versions."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, entry_names, parallel, query, which
from torchsmith.host.model import Compiler, Family
from torchsmith.runner import Runner

GCC_MAJORS = range(15, 4, -1)
CLANG_MAJORS = range(21, 5, -1)
EXTRA_DIRS = (Path("/usr/bin"), Path("/usr/local/bin"))
TOOLSET_GLOBS = ("opt/rh/gcc-toolset-*/root/usr/bin", "opt/rh/devtoolset-*/root/usr/bin")
_NAME = re.compile(r"^(gcc|clang)(-\d+)?$")


class CompilerCandidate(NamedTuple):  # a NamedTuple: no generated code at import (start-up)
    family: Family
    cc: Path
    cxx: Path | None


def candidate_names() -> list[str]:
    gcc = ["gcc", *(f"gcc-{n}" for n in GCC_MAJORS)]
    return [*gcc, "clang", *(f"clang-{n}" for n in CLANG_MAJORS)]


def cxx_name(cc_name: str) -> str:
    """'gcc-12' → 'g++-12', 'clang-14' → 'clang++-14'."""
    return re.sub(r"^gcc", "g++", cc_name) if cc_name.startswith("gcc") else "clang++" + cc_name[5:]


def _make(path: Path) -> CompilerCandidate | None:
    match = _NAME.match(path.name)
    if not match or not (path.is_file() and os.access(path, os.X_OK)):
        return None
    cxx = path.with_name(cxx_name(path.name))
    family: Family = "gcc" if match.group(1) == "gcc" else "clang"
    return CompilerCandidate(family, path, cxx if cxx.is_file() else None)


def _dir_paths(folders: Iterable[Path]) -> Iterable[Path]:
    """The compiler-named entries of ``folders`` (names matched before a Path is made)."""
    for folder in folders:
        try:
            names = sorted(entry_names(folder))
        except OSError:
            continue
        yield from (folder / name for name in names if _NAME.match(name))


def compiler_candidates(
    env: Mapping[str, str], extra_dirs: Sequence[Path] = EXTRA_DIRS, root: Path = Path("/")
) -> list[CompilerCandidate]:
    """Every compiler found, in priority order (PATH names first), one per real file."""
    on_path = (which(name, env) for name in candidate_names())
    toolsets = [d for pattern in TOOLSET_GLOBS for d in sorted(root.glob(pattern), reverse=True)]
    paths = [p for p in on_path if p is not None] + list(_dir_paths([*extra_dirs, *toolsets]))
    found: dict[str, CompilerCandidate] = {}
    for path in paths:
        cand = _make(path)
        if cand is not None:
            found.setdefault(os.path.realpath(cand.cc), cand)
    return list(found.values())


def compiler_version(family: Family, path: Path, env: Mapping[str, str], runner: Runner) -> str:
    if family == "gcc":
        text = query([path, "-dumpfullversion", "-dumpversion"], env, runner, cacheable=True)
        version = parse.parse_gcc_dumpversion(text)
    else:
        text = query([path, "--version"], env, runner, cacheable=True)
        version = parse.parse_clang_version(text)
    if version is None:
        raise ProbeError(f"{path}: cannot read a version from {text.strip()[:80]!r}")
    return version


def _cxx_pair(
    cand: CompilerCandidate, version: str, env: Mapping[str, str], runner: Runner
) -> tuple[Path | None, list[str]]:
    """The C++ compiler beside ``cand.cc``, if it is the same version."""
    if cand.cxx is None:
        return None, []
    try:
        cxx_version = compiler_version(cand.family, cand.cxx, env, runner)
    except ProbeError as exc:
        return None, [exc.message]
    if cxx_version != version:
        return None, [f"{cand.cxx} is version {cxx_version} but {cand.cc} is {version}: ignored"]
    return cand.cxx, []


def probe_compiler(
    cand: CompilerCandidate, env: Mapping[str, str], runner: Runner
) -> tuple[Compiler | None, list[str]]:
    try:
        version = compiler_version(cand.family, cand.cc, env, runner)
    except ProbeError as exc:
        return None, [exc.message]
    cxx, warnings = _cxx_pair(cand, version, env, runner)
    cxx_path = str(cxx) if cxx is not None else None
    return Compiler(family=cand.family, version=version, cc=str(cand.cc), cxx=cxx_path), warnings


def probe_compilers(env: Mapping[str, str], runner: Runner) -> tuple[list[Compiler], list[str]]:
    results = parallel(lambda c: probe_compiler(c, env, runner), compiler_candidates(env))
    compilers = [c for c, _ in results if c is not None]
    return compilers, [w for _, warns in results for w in warns]
