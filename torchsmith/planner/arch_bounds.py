"""The way out of a GPU target the asked CUDA cannot compile, in numbers (issue 24 item 4):
for an old GPU the CUDA release that dropped it, the last that has it and the last torch
release whose official binaries carry it; for a new GPU the first CUDA that compiles it and
the first torch release shipping it — each with the KB fact's source. Pure: KB facts only."""

from __future__ import annotations

import re

from packaging.version import Version

from torchsmith.errors import Problem
from torchsmith.kb.models import CudaRelease, Release
from torchsmith.planner.context import Ctx

_ENTRY = re.compile(r"^\s*(\d+\.\d+)")


def _sm(cc: str) -> str:
    return f"sm_{cc.replace('.', '')}"


def _source(rel: CudaRelease) -> str:
    return rel.sources.get("archs") or rel.sources.get("*") or "KB cuda.toml"


def _releases_shipping(ctx: Ctx, cc: str) -> list[tuple[str, str]]:
    """(torch, source) of every release whose official arch lists include ``cc``, oldest first."""
    found: dict[str, str] = {}
    for rel in ctx.kb.releases:
        if rel.torch == "main":
            continue
        for entry in ctx.kb.release_arch_lists(rel.torch):
            if any((m := _ENTRY.match(e)) and m.group(1) == cc for e in entry.arch_list.split(";")):
                found.setdefault(rel.torch, entry.sources.get("*", "KB arch_lists.toml"))
    return sorted(found.items(), key=lambda item: Version(item[0]))


def _dropped_in(ctx: Ctx, last: str) -> CudaRelease | None:
    """The first CUDA release the KB knows after ``last``."""
    later = [c for c in ctx.kb.cuda_releases if Version(c.version) > Version(last)]
    return min(later, key=lambda c: Version(c.version), default=None)


def too_new_cuda(ctx: Ctx, cc: str, asked: str, last: str) -> Problem:
    """``cc`` is older than every GPU the asked CUDA compiles: name who dropped it."""
    dropped, last_rel = _dropped_in(ctx, last), ctx.kb.cuda(last)
    gone = f"CUDA {dropped.version} dropped it ({_source(dropped)}); " if dropped else ""
    shipping = _releases_shipping(ctx, cc)
    torch = (
        f"; torch {shipping[-1][0]} is the last release whose official binaries carry "
        f"{_sm(cc)} ({shipping[-1][1]})"
        if shipping
        else ""
    )
    return Problem(
        f"{_sm(cc)} needs CUDA ≤ {last}; you asked for CUDA {asked}: {gone}CUDA {last} is the "
        f"last that compiles it ({_source(last_rel)})",
        f"drop {cc} or use --cuda {last}{torch}",
        "gpus",
    )


def too_old_cuda(ctx: Ctx, cc: str, asked: str, first: str) -> Problem:
    """``cc`` is newer than every GPU the asked CUDA compiles: name the first that does."""
    shipping = _releases_shipping(ctx, cc)
    torch = (
        f"; torch {shipping[0][0]} is the first release whose official binaries carry "
        f"{_sm(cc)} ({shipping[0][1]})"
        if shipping
        else ""
    )
    return Problem(
        f"{_sm(cc)} needs CUDA ≥ {first}; you asked for CUDA {asked}: CUDA {first} is the first "
        f"that compiles it ({_source(ctx.kb.cuda(first))})",
        f"drop {cc} or use --cuda {first}{torch}",
        "gpus",
    )


def older(rel: Release, than: Release) -> bool:
    """``rel`` is an older numbered release than ``than`` ('main' is newer than all)."""
    return than.torch == "main" or Version(rel.torch) < Version(than.torch)


def older_needs(ctx: Ctx, last: Release | None, cudas: list[str], asked: str) -> list[str]:
    """An old target no newer release accepts: 'torch ≤ X' (the last release whose build takes
    it) and 'CUDA ≤ Y' (the last CUDA that compiles it), where the asked one is newer."""
    need = [f"torch ≤ {last.torch}"] if last else []
    if cudas and Version(cudas[-1]) < Version(asked):
        need.append(f"CUDA ≤ {cudas[-1]}")
    return need


def dropped_note(ctx: Ctx, cc: str, cudas: list[str]) -> str:
    """'; CUDA 11.0 dropped sm_30 (source)', where the KB knows a CUDA after the last one."""
    dropped = _dropped_in(ctx, cudas[-1]) if cudas else None
    return f"; CUDA {dropped.version} dropped {_sm(cc)} ({_source(dropped)})" if dropped else ""
