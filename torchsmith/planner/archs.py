"""GPU targets → the TORCH_CUDA_ARCH_LIST: names, compute capabilities, `native`, `official`,
the +PTX policy, and refusal of archs the chosen CUDA cannot compile."""

from __future__ import annotations

import re

from packaging.version import Version

from torchsmith.errors import UnknownEntryError
from torchsmith.kb.models import CudaRelease, OfficialArchList
from torchsmith.plan_model import Decision
from torchsmith.planner.arch_bounds import too_new_cuda, too_old_cuda
from torchsmith.planner.context import Ctx, decide
from torchsmith.planner.ranges import release_accepts
from torchsmith.planner.toolchain import newest_cuda, releases_with_cuda

_CC = re.compile(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$", re.IGNORECASE)
_SM = re.compile(r"^(?:sm_|compute_)(\d+?)(\d)([af]?)$", re.IGNORECASE)


def _canon(entry: str) -> str | None:
    """'8.6', '8.6+ptx', 'sm_86', '9.0A' -> canonical '8.6', '8.6+PTX', '9.0a'; else None."""
    text = entry.strip()
    sm = _SM.match(text)
    if sm:
        text = f"{sm.group(1)}.{sm.group(2)}{sm.group(3)}"
    match = _CC.match(text)
    if not match:
        return None
    ptx = "+PTX" if match.group(4) else ""
    return f"{int(match.group(1))}.{match.group(2)}{match.group(3).lower()}{ptx}"


def base_cc(entry: str) -> str:
    """'9.0a+PTX' -> '9.0'."""
    return re.sub(r"[af]?(\+PTX)?$", "", entry)


def _cc_key(entry: str) -> tuple[int, int, str]:
    major, minor = base_cc(entry).split(".")
    return int(major), int(minor), entry


def _expand(ctx: Ctx, target: str, cuda: str) -> list[str]:
    low = target.lower()
    if low == "native":
        if not ctx.host.gpus:
            ctx.problem(
                "'native' asks for the GPUs of this machine, but none was detected",
                "name the GPUs or compute capabilities instead, e.g. --gpu 8.6 or --gpu 'RTX 4090'",
                "gpus",
            )
        return sorted({g.compute_capability for g in ctx.host.gpus})
    if low == "official":
        return _official(ctx, cuda)
    canon = _canon(target)
    if canon is not None:
        return [canon]
    try:
        return [ctx.kb.gpu(target).compute_capability]
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "gpus")
        return []


def _entries(entry: OfficialArchList) -> list[str]:
    return [c for c in (_canon(e) for e in entry.arch_list.split(";")) if c]


def _official(ctx: Ctx, cuda: str) -> list[str]:
    torch = _lists_torch(ctx)
    entry = ctx.kb.official_arch_list(torch, cuda) if torch else None
    if entry is not None:
        return _entries(entry)
    clipped = _nearest_clipped(ctx, ctx.kb.cuda(cuda))
    if clipped is None:
        ctx.problem(
            f"the knowledge base has no official arch list for torch {torch}",
            "name the GPU targets (e.g. --gpu 8.6 --gpu 9.0) or use a CUDA the release shipped",
            "gpus",
        )
        return []
    ctx.warnings.append(clipped[1])
    return clipped[0]


def _lists_torch(ctx: Ctx) -> str:
    """The release whose official lists apply (``main``: the newest release's)."""
    rel = ctx.release
    if rel is None:
        return ""
    return ctx.kb.newest_release().torch if rel.torch == "main" else rel.torch


def _lists_of(ctx: Ctx) -> list[OfficialArchList]:
    torch = _lists_torch(ctx)
    return ctx.kb.release_arch_lists(torch) if torch else []


def _nearest(ctx: Ctx, cuda: str) -> OfficialArchList | None:
    """The release's official list for the CUDA nearest ``cuda`` (a tie goes to the newer)."""
    lists = sorted(_lists_of(ctx), key=lambda e: Version(e.cuda), reverse=True)
    return min(lists, key=lambda e: abs(_cuda_number(e.cuda) - _cuda_number(cuda)), default=None)


def _cuda_number(cuda: str) -> int:
    """'12.1' -> 1201: a distance where 11.8 is nearer 12.1 than 11.7 is."""
    version = Version(cuda)
    return version.major * 100 + version.minor


def _nearest_clipped(ctx: Ctx, cuda: CudaRelease) -> tuple[list[str], str] | None:
    """The nearest official list clipped to what this nvcc compiles and this release accepts,
    with the reason; None when the release has no official list at all."""
    near = _nearest(ctx, cuda.version)
    if near is None or ctx.release is None:
        return None
    parser = ctx.kb.arch_parser(ctx.release.torch)
    entries = _entries(near)
    kept = [
        e for e in entries if base_cc(e) in cuda.archs and (parser is None or parser.accepts(e))
    ]
    dropped = [e for e in entries if e not in kept]
    why = (
        f"torch {ctx.release.torch} shipped no CUDA {cuda.version} build, so it has no official "
        f"arch list for it: planned the nearest one (CUDA {near.cuda}: {near.arch_list}) "
        f"clipped to what CUDA {cuda.version}'s nvcc can target"
        + (f" (dropped {', '.join(dropped)})" if dropped else "")
    )
    return kept, why


def _native_default(ctx: Ctx) -> list[str]:
    """This machine's GPUs, when the build runs here and the release accepts every one."""
    if ctx.spec.backend != "local" or not ctx.host.gpus or ctx.release is None:
        return []
    ccs = sorted({g.compute_capability for g in ctx.host.gpus}, key=_cc_key)
    parser = ctx.kb.arch_parser(ctx.release.torch)
    refused = [cc for cc in ccs if parser is not None and not parser.accepts(cc)]
    if refused:
        ctx.warnings.append(
            f"this machine's GPU target(s) {', '.join(refused)} are not ones torch "
            f"{ctx.release.torch}'s build accepts: not planned (`--gpu {refused[0]}` says which "
            "release does)"
        )
        return []
    return ccs


def _default(ctx: Ctx, cuda: CudaRelease) -> tuple[list[str], str]:
    """No GPU target given: the official list; for a CUDA the release did not ship, this
    machine's GPUs where it has some, else the nearest official list clipped."""
    torch = _lists_torch(ctx)
    entry = ctx.kb.official_arch_list(torch, cuda.version) if torch else None
    if entry is not None:
        return _entries(entry), "default: the official binaries' arch list for this release"
    ccs = _native_default(ctx)
    if ccs:
        return ccs, (
            f"default 'native': torch {torch} shipped no CUDA {cuda.version} build (no official "
            f"arch list for it); built for this machine's GPUs ({', '.join(ccs)})"
        )
    clipped = _nearest_clipped(ctx, cuda)
    if clipped is None:
        return _official(ctx, cuda.version), "default: no official list"
    return clipped[0], "default: " + clipped[1]


def _cudas_for(ctx: Ctx, cc: str) -> list[str]:
    return [c.version for c in ctx.kb.cuda_releases if cc in c.archs]


def _suffix_ok(ctx: Ctx, entry: str, cuda: CudaRelease) -> bool:
    """'9.0a' needs the CUDA that introduced arch-specific targets, and a torch that parses it."""
    match = _CC.match(entry)
    suffix = match.group(3) if match else ""
    if not suffix:
        return True
    info = ctx.kb.arch_suffix(suffix)
    cc = base_cc(entry)
    if info is None or not info.torch_accepts:
        ctx.problem(
            f"TORCH_CUDA_ARCH_LIST cannot express {entry!r}: torch's arch parser accepts only "
            "plain compute capabilities and the 'a' suffix",
            f"use {cc} (or {cc}a for arch-specific features)",
            "gpus",
        )
        return False
    if Version(cuda.version) < Version(info.cuda_min):
        ctx.problem(
            f"sm_{cc.replace('.', '')}{suffix} needs CUDA ≥ {info.cuda_min}; "
            f"you asked for CUDA {cuda.version}",
            f"use {cc} or --cuda {info.cuda_min}",
            "gpus",
        )
        return False
    return True


def _is_plain(entry: str) -> bool:
    match = _CC.match(entry)
    return bool(match) and not match.group(3)  # type: ignore[union-attr]


def _check_buildable(ctx: Ctx, entries: list[str], cuda: CudaRelease) -> list[str]:
    ok = []
    for entry in entries:
        if not _suffix_ok(ctx, entry.removesuffix("+PTX"), cuda):
            continue
        if not release_accepts(ctx, entry, cuda):
            continue
        cc = base_cc(entry)
        if cc in cuda.archs:
            ok.append(entry)
            continue
        able = sorted(_cudas_for(ctx, cc), key=Version)
        if not able:
            ctx.problem(
                f"compute capability {cc} is not one any known CUDA can compile",
                "check the number (`torchsmith kb gpu NAME` gives a GPU's capability)",
                "gpus",
            )
            continue
        if Version(able[0]) > Version(cuda.version):  # the way out in numbers, with sources
            ctx.problems.append(too_old_cuda(ctx, cc, cuda.version, able[0]))
        else:
            ctx.problems.append(too_new_cuda(ctx, cc, cuda.version, able[-1]))
    return ok


def _cc_tuple(cc: str) -> tuple[int, int]:
    major, minor = base_cc(cc).split(".")
    return int(major), int(minor)


def release_max_arch(ctx: Ctx) -> str | None:
    """The newest target of the release's official binaries (KB arch lists), if known."""
    rel = ctx.release
    if rel is None or rel.torch == "main":
        return None
    entries = [e for a in ctx.kb.release_arch_lists(rel.torch) for e in a.arch_list.split(";")]
    ccs = [base_cc(c) for c in (_canon(e) for e in entries) if c]
    return max(ccs, key=_cc_tuple) if ccs else None


def _check_release_era(ctx: Ctx, entries: list[str]) -> None:
    """Targets newer than the release knew: refused when they need a CUDA major the release was
    never built with (see toolchain.CUDA_MAJOR_MARGIN), otherwise a warning."""
    rel, top = ctx.release, release_max_arch(ctx)
    newest = newest_cuda(rel) if rel else None
    if rel is None or top is None or newest is None:
        return
    for cc in sorted({base_cc(e) for e in entries if _cc_tuple(e) > _cc_tuple(top)}, key=_cc_tuple):
        first = min(_cudas_for(ctx, cc), key=Version, default=None)
        if first is not None and Version(first).major > Version(newest).major:
            ctx.problem(
                f"sm_{cc.replace('.', '')} is newer than any GPU torch {rel.torch} knew: its "
                f"official binaries stop at {top}, and {cc} needs CUDA ≥ {first}, a CUDA major "
                f"torch {rel.torch} was never built with (its CUDA: {', '.join(rel.cuda)})",
                f"drop {cc} (the newest target torch {rel.torch} knew is {top}), or use "
                f"{releases_with_cuda(ctx, first)}",
                "gpus",
            )
        else:
            ctx.warnings.append(
                f"GPU target {cc} is newer than torch {rel.torch}'s official targets (up to "
                f"{top}): untested; the known fixes for it, if any, are listed in the plan"
            )


def _apply_ptx(entries: list[str], policy: str) -> list[str]:
    if policy == "none":
        return [e.removesuffix("+PTX") for e in entries]
    plain = [i for i, e in enumerate(entries) if _is_plain(e)]
    if policy == "newest" and plain and not entries[plain[-1]].endswith("+PTX"):
        # PTX of an 'a' target is not forward compatible: it goes on the newest plain arch.
        i = plain[-1]
        return [*entries[:i], entries[i] + "+PTX", *entries[i + 1 :]]
    return entries


def _dedupe(entries: list[str]) -> list[str]:
    """One entry per arch; an entry with +PTX wins over the same arch without."""
    best: dict[str, str] = {}
    for entry in entries:
        key = entry.removesuffix("+PTX")
        if entry.endswith("+PTX") or key not in best:
            best[key] = entry
    return sorted(best.values(), key=_cc_key)


def resolve_archs(ctx: Ctx, cuda: CudaRelease | None) -> Decision[list[str]]:
    targets = list(ctx.spec.gpus)
    if cuda is None:
        if targets:
            ctx.problem(
                f"GPU targets {targets} need a CUDA build; this is a CPU build",
                "add --cuda VERSION, or drop the --gpu targets",
                "gpus",
            )
        return decide([], "default", "CPU build: no GPU code")
    if not targets:
        found, why = _default(ctx, cuda)
        entries = _apply_ptx(_dedupe(_check_buildable(ctx, found, cuda)), ctx.spec.ptx)
        _check_release_era(ctx, entries)
        return decide(entries, "kb", why)
    entries = [e for t in targets for e in _expand(ctx, t, cuda.version)]
    entries = _apply_ptx(_dedupe(_check_buildable(ctx, entries, cuda)), ctx.spec.ptx)
    _check_release_era(ctx, entries)
    return decide(entries, "user", f"from {', '.join(ctx.spec.gpus)} (PTX policy {ctx.spec.ptx})")
