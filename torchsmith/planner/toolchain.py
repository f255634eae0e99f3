"""CUDA version, toolkit provider and host compiler."""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.version import Version

from torchsmith.errors import UnknownEntryError
from torchsmith.host.model import Compiler
from torchsmith.kb.models import CudaRelease, Fix, Release
from torchsmith.plan_model import Decision
from torchsmith.planner.context import Ctx, decide
from torchsmith.planner.ranges import check_cuda_min, gcc_way_out
from torchsmith.planner.readiness import (
    compiler_row,
    compilers_found,
    first_toolkit,
    image_toolkit_row,
    toolkit_row,
)
from torchsmith.planner.toolkit_offers import OFFERERS

_COMPILER_RE = re.compile(r"^(gcc|clang)-?(\d+)$")
Refusal = Callable[[int], Fix | None]


def resolve_cuda(ctx: Ctx) -> tuple[Decision[str | None], CudaRelease | None]:
    cuda = ctx.spec.cuda
    if cuda is None:
        reason = "asked for a CPU build" if ctx.asked("accelerator") else "default: CPU build"
        if ctx.asked("accelerator"):
            return ctx.user("accelerator", None, reason), None
        return decide(None, "default", reason), None
    try:
        info = ctx.kb.cuda(cuda)
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "accelerator")
        return ctx.user("accelerator", cuda), None
    rel = ctx.release
    if rel:
        check_cuda_min(ctx, rel, cuda)
    if rel and rel.cuda and cuda not in rel.cuda:
        _unofficial_cuda(ctx, rel, cuda)
    return ctx.user("accelerator", cuda), info


# A CUDA this many majors newer than a release's newest official CUDA is refused: the release
# never met the APIs and GPU targets the majors in between removed. One major newer is untested
# but plausible (seed 004: torch 1.13, made for 11.6/11.7, built with 11.8), hence a warning.
CUDA_MAJOR_MARGIN = 2


def _major(version: str) -> int:
    return Version(version).major


def newest_cuda(rel: Release) -> str | None:
    """The newest CUDA of the release's official binaries (KB), if any."""
    return max(rel.cuda, key=Version) if rel.cuda else None


def releases_with_cuda(ctx: Ctx, cuda: str) -> str:
    """The way out: the oldest release whose official binaries use this CUDA (or its major)."""
    major = f"{_major(cuda)}.x"
    for wanted, match in (
        (cuda, lambda c: c == cuda),
        (major, lambda c: _major(c) == _major(cuda)),
    ):
        found = [r.torch for r in ctx.kb.releases if r.torch != "main" and any(map(match, r.cuda))]
        if found:
            return (
                f"torch {min(found, key=Version)} or newer (official binaries with CUDA {wanted})"
            )
    return "a newer torch release"


def _unofficial_cuda(ctx: Ctx, rel: Release, cuda: str) -> None:
    newest = newest_cuda(rel)
    assert newest is not None
    if _major(cuda) - _major(newest) >= CUDA_MAJOR_MARGIN:
        ctx.problem(
            f"torch {rel.torch} was released for CUDA {', '.join(rel.cuda)} (its official "
            f"binaries); CUDA {cuda} is {_major(cuda) - _major(newest)} major versions newer, and "
            "every CUDA major removes APIs and GPU targets that older releases use: this source "
            "cannot build with it",
            f"use --cuda {newest} with torch {rel.torch}, or {releases_with_cuda(ctx, cuda)}",
            "accelerator",
        )
        return
    newer = _major(cuda) > _major(newest)
    ctx.warnings.append(
        f"CUDA {cuda} is not among torch {rel.torch}'s official CUDA versions "
        f"({', '.join(rel.cuda)}): an untested combination; the known fixes for it, if any, "
        "are listed in the plan"
        + (
            f"; a CUDA major newer than any it was built with — {releases_with_cuda(ctx, cuda)} "
            "is the tested way"
            if newer
            else ""
        )
    )


def resolve_toolkit(ctx: Ctx, cuda: str | None) -> Decision[str | None]:
    """Which provider supplies nvcc: torchsmith.toolchains.cuda decides, from the host's facts."""
    if cuda is None:
        return decide(None, "default", "CPU build: no CUDA toolkit")
    if ctx.spec.backend != "local" or ctx.spec.toolkit == "container":
        ctx.readiness.append(image_toolkit_row(cuda, ctx.spec.backend))
        return decide(
            "container",
            "user" if ctx.asked("toolkit") or ctx.asked("backend") else "default",
            f"the {ctx.spec.backend} backend's NVIDIA CUDA {cuda} devel image provides nvcc",
        )
    wanted = ctx.spec.toolkit
    names = [n for n in OFFERERS if wanted in ("auto", n)]
    found = [OFFERERS[n](cuda, ctx.host) for n in names]
    ctx.readiness.append(toolkit_row(cuda, ctx.host, found))
    chosen = first_toolkit(found)
    if chosen is None:  # the machine's answer, not the combination's: see the readiness table
        reason = f"no CUDA {cuda} on this machine yet: install it (readiness), then it is found"
        return decide("system", "host", reason)
    provider, reason = chosen.provider, chosen.reason
    if wanted != "auto":
        return ctx.user("toolkit", provider, reason)
    return decide(provider, "host" if provider == "system" else "kb", reason)


def _wanted_compiler(ctx: Ctx) -> tuple[str, int] | None:
    if ctx.spec.compiler is None:
        return None
    match = _COMPILER_RE.match(ctx.spec.compiler.strip())
    if not match:
        ctx.problem(
            f"compiler {ctx.spec.compiler!r} is not understood",
            "write it as gcc-11 or clang-14",
            "compiler",
        )
        return None
    return match.group(1), int(match.group(2))


def _gcc_min(ctx: Ctx) -> int:
    rel = ctx.release
    return int(rel.gcc_min.split(".")[0]) if rel and rel.gcc_min else 0


def _cuda_for_compiler(ctx: Ctx, family: str, major: int) -> str:
    """'--cuda 12.4 (the first CUDA that accepts gcc-13)', or 'a newer --cuda'."""
    fits = [
        c.version
        for c in ctx.kb.cuda_releases
        if (c.gcc_max if family == "gcc" else (c.clang_max or 0)) >= major
    ]
    first = min(fits, key=Version, default=None)
    return (
        f"--cuda {first} (the first CUDA that accepts {family}-{major})"
        if first
        else "a newer --cuda"
    )


def _check_compiler(ctx: Ctx, family: str, major: int, cuda: CudaRelease | None) -> None:
    limit = None if cuda is None else (cuda.gcc_max if family == "gcc" else cuda.clang_max)
    if cuda is not None and limit is not None and major > limit:
        ctx.problem(
            f"CUDA {cuda.version} accepts {family} ≤ {limit}; you asked for {family}-{major}",
            f"use --compiler {family}-{limit} (Debian/Ubuntu: apt-get install {family}-{limit}"
            f"{' g++-' + str(limit) if family == 'gcc' else ''}) or "
            + _cuda_for_compiler(ctx, family, major),
            "compiler",
        )
    if family == "gcc" and major < _gcc_min(ctx):
        rel = ctx.release
        assert rel is not None
        ctx.problem(
            f"torch {rel.torch} needs GCC ≥ {rel.gcc_min} (C++{rel.cxx_standard}); you asked for "
            f"gcc-{major}",
            f"use --compiler gcc-{_gcc_min(ctx)} or newer{gcc_way_out(ctx, rel, major)}",
            "compiler",
        )


def _fits(ctx: Ctx, comp: Compiler, cuda: CudaRelease | None, refused: Refusal) -> bool:
    if comp.family != "gcc" or comp.cxx is None:
        return False
    limit = cuda.gcc_max if cuda else 1000
    return _gcc_min(ctx) <= comp.major <= limit and refused(comp.major) is None


def _fallback_major(ctx: Ctx, cuda: CudaRelease | None, refused: Refusal) -> int:
    """The newest gcc major that CUDA, the release and the known fixes all accept."""
    major = cuda.gcc_max if cuda else max((c.major for c in ctx.host.compilers), default=12)
    while major > max(_gcc_min(ctx), 4) and refused(major) is not None:
        major -= 1
    return major


def resolve_compiler(ctx: Ctx, cuda: CudaRelease | None, refused: Refusal) -> Decision[str]:
    wanted = _wanted_compiler(ctx)
    if wanted is not None:
        _check_compiler(ctx, *wanted, cuda)
        return ctx.user("compiler", f"{wanted[0]}-{wanted[1]}")
    fits = sorted(
        (c for c in ctx.host.compilers if _fits(ctx, c, cuda, refused)), key=lambda c: c.major
    )
    bound = f"CUDA {cuda.version} accepts gcc ≤ {cuda.gcc_max}" if cuda else "no CUDA limit"
    skipped = sorted({c.major for c in ctx.host.compilers if refused(c.major) is not None})
    if skipped:
        fix = refused(skipped[0])
        bound += f"; gcc {', '.join(map(str, skipped))} skipped: {fix.title if fix else ''}"
    have = compilers_found(ctx.host)
    if fits:
        best = fits[-1]
        ctx.readiness.append(compiler_row(best.label, have, bound, here=True))
        return decide(best.label, "host", f"newest gcc here that fits ({bound}): {best.cc}")
    major = _fallback_major(ctx, cuda, refused)
    ctx.readiness.append(compiler_row(f"gcc-{major}", have, bound, here=False))
    return decide(f"gcc-{major}", "kb", f"{bound}; not installed here yet (readiness)")
