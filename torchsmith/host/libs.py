"""cuDNN and NCCL versions: from headers (toolkit, system, pip ``nvidia/cudnn``/``nvidia/nccl``),
pip ``.dist-info`` names and, last, the libraries ``ldconfig -p`` knows."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, query
from torchsmith.runner import Runner

LD_CACHE = (Path("/etc/ld.so.cache"),)  # what `ldconfig -p` prints (ldconfig(8))
SYSTEM_INCLUDES = ("usr/include", "usr/include/x86_64-linux-gnu", "usr/include/aarch64-linux-gnu")


@dataclass(frozen=True)
class Library:
    """How to recognise one library's version."""

    prefix: str  # the header's #define prefix
    headers: tuple[str, ...]  # header file globs, most specific first
    pip_dir: str  # site-packages/nvidia/<pip_dir>/include
    dist_prefix: str  # the .dist-info name's start
    soname: str  # libcudnn
    env_vars: tuple[str, ...]


CUDNN = Library(
    "CUDNN",
    ("cudnn_version.h", "cudnn_version_v*.h", "cudnn.h", "cudnn_v*.h"),
    "cudnn",
    "nvidia_cudnn_cu",
    "libcudnn",
    ("CUDNN_HOME", "CUDNN_ROOT_DIR", "CUDNN_INCLUDE_DIR"),
)
NCCL = Library("NCCL", ("nccl.h",), "nccl", "nvidia_nccl_cu", "libnccl", ("NCCL_ROOT", "NCCL_HOME"))


def merge_versions(versions: Iterable[str]) -> list[str]:
    """Unique, in order; a bare '9' is dropped when '9.13.0' is also known."""
    unique = list(dict.fromkeys(versions))
    return [v for v in unique if not any(o.startswith(v + ".") for o in unique)]


def include_dirs(
    lib: Library,
    env: Mapping[str, str],
    roots: Sequence[Path],
    sites: Sequence[Path],
    root: Path = Path("/"),
) -> list[Path]:
    dirs = [Path(env[v]) / "include" for v in lib.env_vars if env.get(v)]
    dirs += [Path(env[v]) for v in lib.env_vars if env.get(v)]
    dirs += [r / "include" for r in roots]
    dirs += [root / d for d in SYSTEM_INCLUDES]
    dirs += [s / "nvidia" / lib.pip_dir / "include" for s in sites]
    return dirs


def header_versions(lib: Library, dirs: Iterable[Path]) -> list[str]:
    found = []
    for folder in dirs:
        for pattern in lib.headers:
            for header in sorted(folder.glob(pattern)):
                try:
                    version = parse.parse_header_version(
                        header.read_text(errors="replace"), lib.prefix
                    )
                except OSError:
                    continue
                if version:
                    found.append(version)
    return found


def dist_info_versions(lib: Library, sites: Iterable[Path]) -> list[str]:
    found = []
    for site in sites:
        for info in sorted(site.glob(f"{lib.dist_prefix}*.dist-info")):
            parsed = parse.parse_dist_info(info.name)
            if parsed:
                found.append(parse.short_version(parsed[1]))
    return found


def ldconfig_versions(
    lib: Library, ldconfig_text: str, realpath: Callable[[str], str] = os.path.realpath
) -> list[str]:
    """Versions of the libraries ``ldconfig -p`` lists (the real file names the full version)."""
    found = []
    for path in parse.parse_ldconfig(ldconfig_text, lib.soname):
        real = Path(realpath(path)).name
        version = parse.parse_soname_version(real, lib.soname)
        version = version or parse.parse_soname_version(Path(path).name, lib.soname)
        if version:
            found.append(version)
    return found


def ldconfig_text(env: Mapping[str, str], runner: Runner) -> tuple[str, list[str]]:
    """``ldconfig -p`` (from PATH, else /sbin); a warning when neither answers."""
    problems = []
    for argv in (["ldconfig", "-p"], ["/sbin/ldconfig", "-p"]):
        try:
            return query(argv, env, runner, cacheable=True, also=LD_CACHE), []
        except ProbeError as exc:
            problems.append(exc.message)
    return "", problems[-1:]


def probe_library(
    lib: Library,
    env: Mapping[str, str],
    roots: Sequence[Path],
    sites: Sequence[Path],
    ldconfig: str,
) -> list[str]:
    found = header_versions(lib, include_dirs(lib, env, roots, sites))
    found += dist_info_versions(lib, sites)
    found += ldconfig_versions(lib, ldconfig)
    return merge_versions(found)
