"""The ranges of each release checked together: a request outside them is refused naming the
first release (or version) that works — "Python 3.12 needs torch ≥ 2.2.0", "sm_120 needs
torch ≥ 2.7.0 and CUDA ≥ 12.8" — never just "pick another"."""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.version import Version

from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import ArchParser, CudaRelease, Release
from torchsmith.planner.arch_bounds import dropped_note, older, older_needs
from torchsmith.planner.context import Ctx, minor_version
from torchsmith.planner.fixes import applicable_fixes
from torchsmith.planner.free_threaded import experimental, experimental_note

CPP_EXTENSION = "torch/utils/cpp_extension.py"

Wanted = Callable[[Release], bool]


def numbered(kb: KnowledgeBase) -> list[Release]:
    """The releases oldest first, without ``main``."""
    return sorted((r for r in kb.releases if r.torch != "main"), key=lambda r: Version(r.torch))


def first_release(kb: KnowledgeBase, ok: Wanted) -> Release | None:
    return next((r for r in numbered(kb) if ok(r)), None)


def last_release(kb: KnowledgeBase, ok: Wanted) -> Release | None:
    return next((r for r in reversed(numbered(kb)) if ok(r)), None)


def way_out(kb: KnowledgeBase, rel: Release, ok: Wanted) -> str:
    """'torch ≥ 2.2.0' (the first release that fits, when newer than ``rel``) or 'torch ≤ 1.13.1'
    (the last one, when older); '' when no release fits."""
    first = first_release(kb, ok)
    if first is not None and Version(first.torch) > Version(_numbered(kb, rel).torch):
        return f"torch ≥ {first.torch}"
    last = last_release(kb, ok)
    return f"torch ≤ {last.torch}" if last is not None else ""


def _numbered(kb: KnowledgeBase, rel: Release) -> Release:
    return kb.newest_release() if rel.torch == "main" else rel


def python_fits(python: str) -> Wanted:
    wanted = minor_version(python)
    return lambda r: minor_version(r.python_min) <= wanted <= minor_version(r.python_max)


def check_python(ctx: Ctx, rel: Release, python: str) -> None:
    """Python outside the release's range (or a free-threaded '3.13t' it has no wheels for)."""
    free = python.endswith("t")
    plain = python.removesuffix("t")
    if not python_fits(plain)(rel):
        out = way_out(ctx.kb, rel, python_fits(plain))
        ctx.problem(
            f"Python {plain} needs {out or 'a torch release the knowledge base does not know'}: "
            f"torch {rel.torch} supports Python {rel.python_min}–{rel.python_max}",
            f"use --python {rel.python_max}" + (f", or --torch {out.split()[-1]}" if out else ""),
            "python",
        )
    elif free:
        check_free_threaded(ctx, rel, plain)


def free_threaded_fits(ctx: Ctx, python: str) -> Wanted:
    def ok(rel: Release) -> bool:
        parser = ctx.kb.arch_parser(rel.torch)
        return parser is not None and python in parser.free_threaded

    return ok


def check_free_threaded(ctx: Ctx, rel: Release, python: str) -> None:
    """Planned where torch ``rel`` has official ``python``t wheels (warned where they were
    experimental: planner/free_threaded.py), else refused naming the first release that has."""
    ok = free_threaded_fits(ctx, python)
    if ok(rel):
        return
    note = experimental(rel, python)
    if note is not None:
        ctx.warnings.append(
            f"free-threaded Python {python}t with torch {rel.torch} is experimental: {note}"
        )
        return
    out = way_out(ctx.kb, rel, ok) or "no torch release the knowledge base knows"
    parser = ctx.kb.arch_parser(rel.torch)
    has = ", ".join(f"{p}t" for p in parser.free_threaded) if parser else ""
    ctx.problem(
        f"free-threaded Python {python}t needs {out}: torch {rel.torch} has no official "
        f"{python}t wheels" + (f" (its free-threaded builds: {has})" if has else ""),
        f"use --python {python} (with the GIL)"
        + (f", or --torch {out.split()[-1]}" if out.startswith("torch") else "")
        + experimental_note(python),
        "python",
    )


def cuda_fits(cuda: str) -> Wanted:
    return lambda r: r.cuda_min is None or Version(r.cuda_min) <= Version(cuda)


def check_cuda_min(ctx: Ctx, rel: Release, cuda: str) -> None:
    if cuda_fits(cuda)(rel):
        return
    out = way_out(ctx.kb, rel, cuda_fits(cuda))
    ctx.problem(
        f"CUDA {cuda} needs {out}: torch {rel.torch}'s CMake requires CUDA ≥ {rel.cuda_min}",
        f"use --cuda {rel.cuda[-1] if rel.cuda else rel.cuda_min}"
        + (f", or --torch {out.split()[-1]}" if out else ""),
        "accelerator",
    )


def gcc_fits(major: int) -> Wanted:
    return lambda r: r.gcc_min is None or int(r.gcc_min.split(".")[0]) <= major


def gcc_way_out(ctx: Ctx, rel: Release, major: int) -> str:
    """', or torch ≤ 2.2.1' for a gcc older than the release's minimum; '' otherwise."""
    out = way_out(ctx.kb, rel, gcc_fits(major))
    return (
        f", or --torch {out.split()[-1]} (the last release that builds with gcc-{major})"
        if (out.startswith("torch ≤"))
        else ""
    )


def _accepted_by(ctx: Ctx, entry: str) -> Wanted:
    def ok(rel: Release) -> bool:
        parser = ctx.kb.arch_parser(rel.torch)
        return parser is not None and parser.accepts(entry)

    return ok


def _sm(entry: str) -> str:
    arch = entry.removesuffix("+PTX")
    return "sm_" + arch.replace(".", "")


def release_accepts(ctx: Ctx, entry: str, cuda: CudaRelease) -> bool:
    """Is ``entry`` ('12.0', '9.0a+PTX') a target the release's own build accepts (its CMake
    arch parser and torch.utils.cpp_extension, which companions build with)? If not, refused
    naming the first release that accepts it and, when needed, the first CUDA that compiles it."""
    rel = ctx.release
    parser = ctx.kb.arch_parser(rel.torch) if rel else None
    if rel is None or parser is None or parser.accepts(entry) or _patched_in(ctx, entry, cuda):
        return True
    arch = entry.removesuffix("+PTX")
    if _core_only(ctx, parser, rel, arch, cuda):
        return True
    cc = re.sub(r"[af]$", "", arch)
    newer = Version(_numbered(ctx.kb, rel).torch)
    accepted = _accepted_by(ctx, entry)
    first = first_release(ctx.kb, lambda r: Version(r.torch) > newer and accepted(r))
    cudas = sorted((c.version for c in ctx.kb.cuda_releases if cc in c.archs), key=Version)
    need = [f"torch ≥ {first.torch}"] if first else []
    if cudas and Version(cudas[0]) > Version(cuda.version):
        need.append(f"CUDA ≥ {cudas[0]}")
    last = None if first else last_release(ctx.kb, lambda r: older(r, rel) and accepted(r))
    need += older_needs(ctx, last, cudas, cuda.version) if first is None else []
    why = _parser_says(parser, arch) + (dropped_note(ctx, cc, cudas) if first is None else "")
    needs = " and ".join(need) or "a torch release the knowledge base does not know"
    ctx.problem(
        f"{_sm(entry)} needs {needs}: torch {rel.torch}'s build does not accept {arch!r} ({why})",
        _arch_hint(ctx, rel, arch, first, need),
        "gpus",
    )
    return False


def _core_only(ctx: Ctx, parser: ArchParser, rel: Release, arch: str, cuda: CudaRelease) -> bool:
    """torch's own build takes ``arch`` (its CMake parser does) though cpp_extension's list does
    not: a core build without companions goes ahead, warned — the extension list limits only
    what is later built *against* this torch (issue 24: a Jetson/aarch64 core build was refused
    by the extension limit)."""
    compiles = re.sub(r"[af]$", "", arch) in cuda.archs
    if ctx.spec.companions or not compiles or re.fullmatch(parser.cmake_pattern, arch) is None:
        return False
    ctx.warnings.append(
        f"{_sm(arch)}: torch {rel.torch}'s own build takes {arch!r} (its CMake arch parser), but "
        f"{_parser_says(parser, arch)} — extensions built against this torch must name an arch "
        "it knows (or a torch that knows it)"
    )
    return True


def _patched_in(ctx: Ctx, entry: str, cuda: CudaRelease) -> bool:
    """A planned known fix adds ``entry`` to cpp_extension's list (and CMake takes it)."""
    rel, arch = ctx.release, entry.removesuffix("+PTX")
    parser = ctx.kb.arch_parser(rel.torch) if rel else None
    if rel is None or parser is None or re.fullmatch(parser.cmake_pattern, arch) is None:
        return False
    fixes = applicable_fixes(
        ctx.kb, torch=rel.torch, cuda=cuda.version, gcc=None, python=None,
        source_kind=ctx.spec.source.split(":")[0],
    )  # fmt: skip
    quoted = f"'{arch}'"
    return any(
        quoted in e.replace and quoted not in e.find
        for fix in fixes
        for e in fix.edits
        if e.path == CPP_EXTENSION
    )


def _parser_says(parser: ArchParser, arch: str) -> str:
    if re.fullmatch(parser.cmake_pattern, arch) is None:
        return "its CMake arch parser stops with 'Unknown CUDA Architecture Name'"
    known = ", ".join(parser.extension_archs[-4:])
    return f"torch.utils.cpp_extension knows up to … {known}: extensions and companions fail"


def _arch_hint(ctx: Ctx, rel: Release, arch: str, first: Release | None, need: list[str]) -> str:
    moves = [f"--torch {first.torch}" if first else ""]
    moves += [f"--cuda {n.split()[-1]}" for n in need if n.startswith("CUDA")]
    moves += [f"--torch {n.split()[-1]}" for n in need if n.startswith("torch ≤")]
    hint = f"use {' '.join(m for m in moves if m)}" if first else "drop it"
    hint += f", or use {' '.join(m for m in moves if m)}" if not first and any(moves) else ""
    parser = ctx.kb.arch_parser(rel.torch)
    cc = re.sub(r"[af]$", "", arch)
    if cc != arch and parser is not None and parser.accepts(cc):
        return hint + f", or {cc} (without the arch-specific suffix)"
    older = [a for a in (parser.extension_archs if parser else []) if _same_major(a, arch)]
    if older:
        hint += f", or build for {older[-1]} (its code runs on {arch} GPUs: same major)"
    return hint


def _same_major(known: str, arch: str) -> bool:
    if re.fullmatch(r"\d+\.\d", known) is None or re.fullmatch(r"\d+\.\d", arch) is None:
        return False
    a, b = Version(known), Version(arch)
    return a.major == b.major and a < b
