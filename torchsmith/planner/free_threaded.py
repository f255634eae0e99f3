"""Free-threaded Python (``--python 3.13t``, ``3.14t``; PEP 703): planned where the release
supports it, refused naming the first release that does. The release's support is its official
``cpXYt`` wheels (``kb/data/arch_parsers.toml``: ``free_threaded``, read from PyPI's file lists);
a release whose free-threaded Linux binaries were experimental (published on
download.pytorch.org, not PyPI) is planned with a warning that says so. The build runs on a
free-threaded interpreter (``python3.13t``): the machine's answer is a readiness row. Pure."""

from __future__ import annotations

from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.kb.models import Release
from torchsmith.plan_model import ReadinessItem
from torchsmith.planner.context import minor_version

EXPERIMENTAL = {
    "2.6": (
        "3.13",
        "pytorch/pytorch#130249 (the 3.13/3.13t support matrix, updated 2025-01-13: source "
        "builds of 3.13t work on Linux, and 'Release 2.6' ships Linux 3.13t binaries — on "
        "download.pytorch.org; PyPI has no cp313t wheel of torch 2.6.0, its first is 2.7.0)",
    ),
}
"""Releases (major.minor) whose free-threaded Linux binaries were experimental, with the source."""
WHERE_TO_GET = (
    "`uv python install {v}t` (python-build-standalone's free-threaded build), "
    "`pyenv install {v}t`, or the distribution's python{v}-nogil package where it has one "
    "(Debian trixie and Ubuntu 24.10 package python3.13-nogil, which installs python3.13t)"
)
"""Where a free-threaded interpreter comes from (docs.python.org/3/howto/free-threading-python.html
'Installation': the official installers, and distributions' packages)."""


def experimental(rel: Release, python: str) -> str | None:
    """The source saying torch ``rel``'s ``python``t Linux binaries were experimental, or None."""
    minor = ".".join(rel.torch.split(".")[:2])
    found = EXPERIMENTAL.get(minor)
    return found[1] if found is not None and found[0] == python else None


def experimental_note(python: str) -> str:
    """' (torch X's …t binaries were experimental: SOURCE)' for a refusal, or ''."""
    found = [(m, src.split(" (")[0]) for m, (p, src) in EXPERIMENTAL.items() if p == python]
    return "".join(
        f" (torch {m}'s Linux {python}t binaries were experimental: {src})" for m, src in found
    )


def is_free_threaded(py: PythonInfo) -> bool:
    """An interpreter installed under the free-threaded name (``python3.13t``)."""
    return py.path.rsplit("/", 1)[-1].endswith("t")


def interpreter_row(python: str, host: HostFacts) -> ReadinessItem:
    """The machine's free-threaded interpreter for ``python`` ('3.13t')."""
    minor = python.removesuffix("t")
    want = minor_version(minor)
    found = [p for p in host.pythons if is_free_threaded(p) and minor_version(p.minor) == want]
    same = [p.path for p in host.pythons if minor_version(p.minor) == want]
    others = ", ".join(same) or "no Python " + minor
    have = ", ".join(p.path for p in found) or f"none (with the GIL: {others})"
    return ReadinessItem(
        tool="free-threaded Python",
        needed=f"python{python} (CPython {minor} built with --disable-gil)",
        found=have,
        provider="this machine" if found else "you install it: " + WHERE_TO_GET.format(v=minor),
        ready=bool(found),
        provisionable=False,
    )
