"""Selectors: pick the best candidate of a :class:`HostFacts` for a version request.

Candidates are kept in priority order by the probes (CUDA_HOME before PATH before
/usr/local/cuda...). ``select_*`` return ``None`` when nothing fits; ``require_*`` raise a
:class:`HostError` that names what was found instead."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from torchsmith.errors import HostError, UsageError
from torchsmith.host.model import Compiler, CudaToolkit, Family, HostFacts, PythonInfo


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def version_matches(version: str, spec: str | None) -> bool:
    """'12.4' matches '12', '12.4', '>=12.1,<13'; ``None`` matches anything. A bare version
    is a prefix: '12' is any 12.x, '12.4' any 12.4.x."""
    if spec is None or not spec.strip():
        return True
    spec = spec.strip()
    if spec[0].isdigit():
        have, want = version.split("."), spec.split(".")
        return have[: len(want)] == want
    try:
        return _version(version) in SpecifierSet(spec)
    except InvalidSpecifier as exc:
        raise UsageError(
            f"not a version or version range: {spec!r}", "write e.g. '12.4', '12' or '>=12.1,<13'"
        ) from exc


def select_cuda(host: HostFacts, version_spec: str | None = None) -> CudaToolkit | None:
    """The first toolkit (in priority order) whose version matches ``version_spec``."""
    return next((t for t in host.cuda_toolkits if version_matches(t.version, version_spec)), None)


def select_compiler(
    host: HostFacts,
    family: Family = "gcc",
    max_major: int | None = None,
    min_major: int | None = None,
    need_cxx: bool = True,
) -> Compiler | None:
    """The newest compiler of ``family`` with ``min_major <= major <= max_major`` (and a C++
    compiler beside it, unless ``need_cxx`` is false); ties go to the earlier candidate."""
    fitting = [
        c
        for c in host.compilers
        if c.family == family
        and (max_major is None or c.major <= max_major)
        and (min_major is None or c.major >= min_major)
        and (c.cxx is not None or not need_cxx)
    ]
    return max(fitting, key=lambda c: _version(c.version), default=None)


def select_python(host: HostFacts, version_spec: str | None = None) -> PythonInfo | None:
    """The first interpreter whose version matches: '3.11', '3.11.7' or '>=3.9,<3.12'."""
    return next((p for p in host.pythons if version_matches(p.version, version_spec)), None)


def _found(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def require_cuda(host: HostFacts, version_spec: str | None = None) -> CudaToolkit:
    found = select_cuda(host, version_spec)
    if found is None:
        have = _found([f"{t.version} ({t.root})" for t in host.cuda_toolkits])
        raise HostError(
            f"no CUDA toolkit {version_spec or 'at all'} on this machine (found: {have})",
            "install it (e.g. under /usr/local/cuda-X.Y) or point CUDA_HOME at it",
        )
    return found


def require_compiler(
    host: HostFacts,
    family: Family = "gcc",
    max_major: int | None = None,
    min_major: int | None = None,
) -> Compiler:
    found = select_compiler(host, family, max_major, min_major)
    if found is None:
        bounds = f"{min_major or ''}..{max_major or ''}"
        have = _found([f"{c.label} ({c.cc})" for c in host.compilers])
        raise HostError(
            f"no {family} with C++ support in major range {bounds} here (found: {have})",
            f"install a fitting {family} (e.g. apt-get install g++-{max_major or 'N'})",
        )
    return found
