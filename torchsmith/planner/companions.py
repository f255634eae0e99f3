"""Companions built against a given torch (``--against``): the torch's facts as the plan's
torch, the pairing the knowledge base records, and each companion's source and environment —
spelled the way that companion release reads it, each value with its reason and source.

Pure: the facts come from ``torchsmith inspect`` (:mod:`torchsmith.companions.facts`, read by
the CLI layer before planning)."""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from torchsmith.errors import UnknownEntryError
from torchsmith.plan_model import CompanionPlan, Decision, SourcePlan
from torchsmith.plan_types import CompanionBuild, CompanionBuildPlan, TorchFacts
from torchsmith.planner.companion_env import companion_env, system_packages
from torchsmith.planner.companion_source import route, source_fields
from torchsmith.planner.companion_without import parts_ok, unplanned
from torchsmith.planner.context import Ctx, decide
from torchsmith.planner.reproducible import companion_epoch

DEBIAN_PACKAGE = {
    "torchvision": "pytorch-vision",
    "torchaudio": "pytorch-audio",
    "torchtext": "pytorch-text",
}
BUILDABLE = ("torchvision", "torchaudio")
"""Companions whose steps (planner/companion_steps.py) are carried out today."""
NOT_YET = {
    "torchtext": "no smoke test and no build recipe exist for it yet (its last release is 0.18.0, "
    "paired with torch 2.3; development stopped: pytorch/text@v0.18.0:README.rst)",
}
AUDIO_NEEDS_TOOLKIT = (
    "torchaudio builds through torch's CMake package, and a CUDA torch's Caffe2Config.cmake "
    "stops without a CUDA toolkit ('Your installed Caffe2 version uses CUDA but I cannot find "
    "the CUDA libraries', torch 2.6.0 share/cmake/Caffe2/Caffe2Config.cmake:90; measured with "
    "PyPI's torch 2.6.0+cu124, 2026-11-24)"
)
__all__ = ["companion_env", "system_packages"]  # the companion's variables, planned with it
SMOKE = {
    "torchvision": "torchvision.ops.nms and roi_align; decode a JPEG and a PNG the test writes",
    "torchaudio": "load a WAV the test writes and resample it (torchaudio.functional.resample)",
}


def public(version: str) -> str:
    """'2.6.0+cu124' -> '2.6.0' (the release the knowledge base knows)."""
    try:
        return Version(version).public
    except InvalidVersion:
        return version


def resolve_against(ctx: Ctx, facts: TorchFacts) -> Decision[str]:
    """The plan's torch is the one ``--against`` names, as inspect read it."""
    release = public(facts.version)
    if ctx.spec.torch is not None and public(ctx.spec.torch) != release:
        ctx.problem(
            f"--torch {ctx.spec.torch} and --against {facts.location} (torch {facts.version}) "
            "name different torches",
            "drop --torch: the companions are built against the --against torch",
            "torch",
        )
    try:
        ctx.release = ctx.kb.release(release)
    except UnknownEntryError as exc:
        ctx.problem(f"--against torch {facts.version}: {exc.message}", exc.hint, "against")
    _same_abi(ctx, facts)
    shown = facts.runtime_version or facts.version
    return decide(
        facts.version, "host", f"torch {shown} of --against {facts.location} (read by inspect)"
    )


def _same_abi(ctx: Ctx, facts: TorchFacts) -> None:
    """``--cxx11-abi``/``--no-cxx11-abi`` cannot differ from the --against torch's own ABI: the
    companions follow the torch they load (round-3 trial B17: the flag was silently ignored)."""
    asked, has = ctx.spec.cxx11_abi, facts.cxx11_abi
    if asked is None or has is None or asked == has:
        return
    ctx.problem(
        f"--{'' if asked else 'no-'}cxx11-abi, but the --against torch uses "
        f"_GLIBCXX_USE_CXX11_ABI={int(has)} ({facts.abi_evidence[:200]})",
        "drop the flag: companions are compiled with the ABI of the torch they are built against",
        "cxx11_abi",
    )


def against_python(ctx: Ctx, facts: TorchFacts) -> Decision[str | None]:
    """The companions' Python is the one the torch was built for."""
    if ctx.spec.python is not None and facts.python and ctx.spec.python != facts.python:
        ctx.problem(
            f"--python {ctx.spec.python}, but the --against torch is for Python {facts.python}",
            f"drop --python (or use --python {facts.python})",
            "python",
        )
    return decide(facts.python, "host", f"the Python the --against torch is for ({facts.python})")


def against_source(facts: TorchFacts) -> SourcePlan:
    """torch itself is not built: its 'source' is the artifact named by --against."""
    return SourcePlan(
        kind="path",
        location=facts.location,
        ref="",
        reason="torch is not built: the companions are built against this torch (--against)",
    )


def built_torch(torch: str, python: str | None, cuda: str | None = None) -> TorchFacts:
    """The torch this build makes, as its companions see it before it exists: the release it
    builds (the wheel's version; a local ``+…`` part still satisfies ``torch==X.Y.Z``) and the
    Python it builds for. The wheel and its ``Requires-Dist`` are filled in by the companion
    step once the wheel is published; its C++ ABI is the torch's own (cpp_extension passes it)."""
    return TorchFacts(
        kind="build",
        location="",
        version=public(torch),
        cuda=cuda,
        cxx11_abi=None,
        abi_evidence="the torch this build makes (the companions read it from the wheel)",
        python=python,
    )


def one_run_ok(ctx: Ctx) -> bool:
    """A torch build with companions makes a wheel for them to be built against."""
    if ctx.spec.targets:
        ctx.problem(
            "--with together with --target: a partial build makes no torch wheel for the "
            "companions to be built against",
            "drop --target, or drop --with",
            "companions",
        )
        return False
    return True


def _same_cuda(a: str, b: str) -> bool:
    return a.split(".")[:2] == b.split(".")[:2]


def _cuda_ok(ctx: Ctx, facts: TorchFacts) -> bool:
    """Companions' CUDA ops are compiled with the CUDA their torch was built with."""
    asked = ctx.spec.cuda
    if facts.kind == "build" or (asked is None and facts.cuda is None):
        return True
    if asked is not None and facts.cuda is None:
        ctx.problem(
            f"--cuda {asked}, but the --against torch is a CPU build: CUDA ops compiled for its "
            "companions could never run with it",
            "ask --cpu",
            "accelerator",
        )
        return False
    if asked is not None and facts.cuda is not None and not _same_cuda(asked, facts.cuda):
        ctx.problem(
            f"--cuda {asked}, but the --against torch is a CUDA {facts.cuda} build",
            f"use --cuda {facts.cuda}: the companions' CUDA ops are compiled with the CUDA "
            "their torch was built with",
            "accelerator",
        )
        return False
    if asked is None and not ctx.asked("accelerator"):
        ctx.problem(
            f"the --against torch is a CUDA {facts.cuda} build: say which ops its companions get",
            f"--cuda {facts.cuda} builds their CUDA ops too (torchsmith provisions the toolkit; "
            "--gpu picks the archs); --cpu builds their CPU ops only (ops on CUDA tensors, "
            "e.g. torchvision.ops.nms on cuda, are then missing)",
            "accelerator",
        )
        return False
    return True


def _where_from(ctx: Ctx, comp: CompanionPlan) -> dict[str, Any]:
    """The companion's source fields: git, a path or tarball, or Debian's source package."""
    package = DEBIAN_PACKAGE[comp.name]
    fields = source_fields(ctx, comp)
    if fields is not None:
        return {"package": package, **fields}
    pkg = ctx.kb.debian_package(package, comp.version)
    why = f"Debian {pkg.suite} source package {package} {pkg.version}"
    return {"package": package, "debian_version": pkg.version, "suite": pkg.suite, "why": why}


def _one_build(
    ctx: Ctx, comp: CompanionPlan, facts: TorchFacts, jobs: int, arch_list: str | None
) -> CompanionBuild:
    where = _where_from(ctx, comp)
    why, without = where.pop("why"), ctx.spec.companion_without.of(comp.name)
    return CompanionBuild(
        name=comp.name,
        version=comp.version,
        **where,
        env=[
            *companion_env(comp.name, comp.version, facts, jobs, arch_list, without=without),
            companion_epoch(where.get("source", {}).get("kind"), ctx.release),
        ],
        system_packages=system_packages(comp.name, comp.version, ctx.host.os_id),
        smoke=SMOKE[comp.name],
        reason=f"{why}; {comp.reason}",
    )


def _buildable(ctx: Ctx, comp: CompanionPlan, facts: TorchFacts) -> bool:
    if comp.name not in BUILDABLE:
        ctx.problem(
            f"{comp.name}: building it is not carried out yet (only {', '.join(BUILDABLE)}): "
            f"{NOT_YET.get(comp.name, '')}",
            f"drop {comp.name}; build it by hand against the published torch wheel",
            "companions",
        )
        return False
    if comp.name == "torchaudio" and facts.cuda is not None and ctx.spec.cuda is None:
        ctx.problem(
            f"torchaudio against the CUDA {facts.cuda} torch needs its CUDA toolkit: "
            f"{AUDIO_NEEDS_TOOLKIT}",
            f"add --cuda {facts.cuda} (torchsmith provisions the toolkit, and torchaudio's CUDA "
            "kernels are built too), or drop torchaudio",
            "companions",
        )
        return False
    if not parts_ok(ctx, comp.name, comp.version):
        return False
    if route(ctx, comp.name) != "debian":
        return True
    try:
        ctx.kb.debian_package(DEBIAN_PACKAGE[comp.name], comp.version)
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "companions")
        return False
    return True


def _install_note(ctx: Ctx, facts: TorchFacts) -> None:
    """``--output install`` installs torch's wheel only: said, never silently."""
    if "install" not in ctx.spec.outputs:
        return
    if facts.kind != "build":
        ctx.problem(
            "output install with --against: installing the companions is not carried out yet",
            "drop --output install, then pip install the published wheels into your env",
            "outputs",
        )
        return
    ctx.warnings.append(
        "output install: torch is installed; the companions' wheels are published into the "
        "output directory (pip install them there)"
    )


def plan_companion_builds(
    ctx: Ctx,
    facts: TorchFacts,
    companions: list[CompanionPlan],
    jobs: int,
    arch_list: str | None = None,
) -> CompanionBuildPlan | None:
    """The companions' builds against ``facts``' torch, or None (problems recorded).
    ``arch_list``: the plan's TORCH_CUDA_ARCH_LIST when their CUDA ops are built (--cuda)."""
    if not ctx.spec.companions:
        ctx.problem(
            "--against names a torch to build companions against, but no companion was asked",
            "add --with torchvision (or torchaudio, or auto)",
            "companions",
        )
        return None
    unplanned(ctx, [c.name for c in companions])
    cuda_ok = _cuda_ok(ctx, facts)
    ok = [c for c in companions if _buildable(ctx, c, facts)]
    if not cuda_ok or len(ok) != len(companions) or not ok:
        return None
    if facts.cuda is not None and arch_list is None:
        ctx.warnings.append(
            f"torch {facts.runtime_version or facts.version} is a CUDA {facts.cuda} build; the "
            "companions get CPU ops only (--cpu): their ops on CUDA tensors are missing"
        )
    _install_note(ctx, facts)
    builds = [_one_build(ctx, c, facts, jobs, arch_list) for c in ok]
    cuda = ctx.spec.cuda if arch_list is not None else None
    return CompanionBuildPlan(
        torch=facts, builds=builds, max_jobs=jobs, cuda=cuda, arch_list=arch_list or ""
    )
