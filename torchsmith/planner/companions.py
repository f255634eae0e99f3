"""Companions built against a given torch (``--against``): the torch's facts as the plan's
torch, the pairing the knowledge base records, and each companion's source and environment —
spelled the way that companion release reads it, each value with its reason and source.

Pure: the facts come from ``torchsmith inspect`` (:mod:`torchsmith.companions.facts`, read by
the CLI layer before planning)."""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from torchsmith.companions.model import (
    CompanionBuild,
    CompanionBuildPlan,
    EnvValue,
    TorchFacts,
)
from torchsmith.errors import UnknownEntryError
from torchsmith.plan_model import CompanionPlan, Decision, PlanStep, SourcePlan
from torchsmith.planner.context import Ctx, decide

DEBIAN_PACKAGE = {
    "torchvision": "pytorch-vision",
    "torchaudio": "pytorch-audio",
    "torchtext": "pytorch-text",
}
BUILDABLE = ("torchvision",)
"""Companions the ``companion`` step builds and smoke-tests today."""
NOT_YET = {
    "torchaudio": "torchaudio builds through torch's CMake package, and a CUDA torch's "
    "Caffe2Config.cmake stops without a CUDA toolkit ('Your installed Caffe2 version uses CUDA "
    "but I cannot find the CUDA libraries', torch 2.6.0 share/cmake/Caffe2/Caffe2Config.cmake:90; "
    "measured with PyPI's torch 2.6.0+cu124, 2026-11-24); companions get no toolkit yet, and a "
    "build against a CPU torch has not been verified",
    "torchtext": "its Debian orig (pytorch-text 0.14.1) is not served by the mirror and no "
    "smoke test exists yet",
}
VISION = "pytorch/vision@v{v}:setup.py"
AUDIO = "pytorch/audio@v{v}:tools/setup_helpers/extension.py"
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


def resolve_against(ctx: Ctx, facts: TorchFacts) -> Decision[Any]:
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
    shown = facts.runtime_version or facts.version
    return decide(
        facts.version, "host", f"torch {shown} of --against {facts.location} (read by inspect)"
    )


def against_python(ctx: Ctx, facts: TorchFacts) -> Decision[Any]:
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


def against_steps(plan: CompanionBuildPlan) -> list[PlanStep]:
    names = ", ".join(f"{b.name} {b.version}" for b in plan.builds)
    what = (
        f"{names} from Debian source against torch {plan.torch.version} "
        f"({plan.torch.location}): build env with that exact torch (--no-deps), build, "
        "check Requires-Dist, smoke tests in a fresh venv, publish"
    )
    return [PlanStep(name="companion", what=what)]


def built_torch(torch: str, python: str | None) -> TorchFacts:
    """The torch this build makes, as its companions see it before it exists: the release it
    builds (the wheel's version; a local ``+…`` part still satisfies ``torch==X.Y.Z``) and the
    Python it builds for. The wheel and its ``Requires-Dist`` are filled in by the companion
    step once the wheel is published; its C++ ABI is the torch's own (cpp_extension passes it)."""
    return TorchFacts(
        kind="build",
        location="",
        version=public(torch),
        cuda=None,
        cxx11_abi=None,
        abi_evidence="the torch this build makes (the companions read it from the wheel)",
        python=python,
    )


def built_steps(plan: CompanionBuildPlan) -> list[PlanStep]:
    """The companion step after the torch's own steps (one run: torch, then its companions)."""
    names = ", ".join(f"{b.name} {b.version}" for b in plan.builds)
    what = (
        f"{names} from Debian source against the torch wheel this build publishes: build env "
        "with that exact torch (--no-deps), build, check Requires-Dist, smoke tests in a "
        "fresh venv, publish (one manifest for all wheels)"
    )
    return [PlanStep(name="companion", what=what)]


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


def _cuda_ok(ctx: Ctx, facts: TorchFacts) -> bool:
    if facts.kind == "build" and ctx.spec.cuda is not None:
        ctx.problem(
            f"--with together with --cuda {ctx.spec.cuda}: companions' CUDA ops are not built "
            "yet (no CUDA toolkit step for companions)",
            "build the CUDA torch alone (drop --with), or build both for the CPU (--cpu); "
            "the CPU-only companions of a CUDA torch: --with torchvision --cpu --against "
            "dist/torch-….whl",
            "accelerator",
        )
        return False
    if ctx.spec.cuda is not None:
        ctx.problem(
            f"--cuda {ctx.spec.cuda}: companions' CUDA ops against an --against torch are not "
            "built yet (no CUDA toolkit step for companions)",
            "ask --cpu: the companions' CPU ops, loadable with this torch",
            "accelerator",
        )
        return False
    if facts.cuda is not None and not ctx.asked("accelerator"):
        ctx.problem(
            f"the --against torch is a CUDA {facts.cuda} build; building the companions' CUDA "
            "ops is not carried out yet",
            "ask --cpu explicitly to build their CPU ops only (they load with this torch; ops "
            "on CUDA tensors, e.g. torchvision.ops.nms on cuda, are then missing)",
            "accelerator",
        )
        return False
    return True


def _source_ok(ctx: Ctx) -> bool:
    if ctx.spec.source == "debian":
        return True
    ctx.problem(
        f"companion source {ctx.spec.source!r}: only Debian's source packages (pytorch-vision, "
        "pytorch-audio) are built for companions yet",
        "use --source debian",
        "source",
    )
    return False


def _vision_env(version: str, torch: str) -> list[EnvValue]:
    src = VISION.format(v=version)
    return [
        EnvValue(
            name="TORCHVISION_USE_PNG",
            value="1",
            reason=f"decode PNG (libpng; Debian libpng-dev) ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_JPEG",
            value="1",
            reason=f"decode JPEG (libjpeg; Debian libjpeg62-turbo-dev) ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_WEBP",
            value="0",
            reason=f"WebP needs libwebp-dev, not among the checked build dependencies ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_NVJPEG",
            value="0",
            reason=f"GPU JPEG decoding is a CUDA op; this build is CPU-only ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_FFMPEG",
            value="0",
            reason=f"video decoding (FFmpeg) left out: needs FFmpeg's dev libraries ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_VIDEO_CODEC",
            value="0",
            reason=f"GPU video decoding (NVDEC) is CUDA-only ({src})",
        ),
        EnvValue(
            name="FORCE_CUDA",
            value="0",
            reason=f"CPU ops only (--cpu); torch {torch}'s own kernels are unaffected ({src})",
        ),
    ]


def _audio_env(version: str) -> list[EnvValue]:
    src = AUDIO.format(v=version)
    sox = f"pytorch/audio@v{version}:third_party/sox/CMakeLists.txt"
    return [
        EnvValue(
            name="USE_CUDA",
            value="0",
            reason=f"CPU ops only (--cpu); the default is torch.backends.cuda.is_built() ({src})",
        ),
        EnvValue(name="USE_ROCM", value="0", reason=f"not a ROCm build ({src})"),
        EnvValue(
            name="USE_FFMPEG",
            value="0",
            reason=f"FFmpeg I/O (torio) left out: needs FFmpeg's dev libraries ({src})",
        ),
        EnvValue(
            name="BUILD_SOX",
            value="0",
            reason=f"BUILD_SOX=1 downloads sox 14.4.2 from SourceForge while configuring ({sox}); "
            "audio files load through the soundfile backend instead",
        ),
        EnvValue(name="BUILD_CUDA_CTC_DECODER", value="0", reason=f"a CUDA-only extension ({src})"),
    ]


def companion_env(name: str, version: str, facts: TorchFacts, jobs: int) -> list[EnvValue]:
    """Every variable of one companion's build, with its reason and source."""
    setup = (VISION if name == "torchvision" else "pytorch/audio@v{v}:setup.py").format(v=version)
    own = _vision_env(version, facts.version) if name == "torchvision" else _audio_env(version)
    return [
        EnvValue(
            name="BUILD_VERSION",
            value=version,
            reason=f"the wheel's version is the release, not version.txt + a git hash ({setup})",
        ),
        EnvValue(
            name="PYTORCH_VERSION",
            value=facts.version,
            reason=f"Requires-Dist pins torch=={facts.version}, the torch it is built against, "
            f"so pip can never swap it ({setup})",
        ),
        *own,
        EnvValue(
            name="CUDA_VISIBLE_DEVICES",
            value="",
            reason="setup.py turns CUDA sources on when torch.cuda.is_available() (and a "
            "CUDA_HOME is found); hiding the GPUs keeps the build CPU-only as planned",
        ),
        EnvValue(
            name="MAX_JOBS",
            value=str(jobs),
            reason="parallel compile jobs of torch.utils.cpp_extension (the plan's MAX_JOBS)",
        ),
        EnvValue(
            name="CMAKE_BUILD_PARALLEL_LEVEL",
            value=str(jobs),
            reason="parallel jobs of CMake-driven builds (torchaudio), the same MAX_JOBS",
        ),
    ]


def _one_build(ctx: Ctx, comp: CompanionPlan, facts: TorchFacts, jobs: int) -> CompanionBuild:
    package = DEBIAN_PACKAGE[comp.name]
    pkg = ctx.kb.debian_package(package, comp.version)
    return CompanionBuild(
        name=comp.name,
        version=comp.version,
        package=package,
        debian_version=pkg.version,
        suite=pkg.suite,
        env=companion_env(comp.name, comp.version, facts, jobs),
        smoke=SMOKE[comp.name],
        reason=f"Debian {pkg.suite} source package {package} {pkg.version}; {comp.reason}",
    )


def _buildable(ctx: Ctx, comp: CompanionPlan) -> bool:
    if comp.name not in BUILDABLE:
        ctx.problem(
            f"{comp.name}: building it is not carried out yet (only {', '.join(BUILDABLE)}): "
            f"{NOT_YET.get(comp.name, '')}",
            f"drop {comp.name}; build it by hand against the published torch wheel",
            "companions",
        )
        return False
    try:
        ctx.kb.debian_package(DEBIAN_PACKAGE[comp.name], comp.version)
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "companions")
        return False
    return True


def plan_companion_builds(
    ctx: Ctx, facts: TorchFacts, companions: list[CompanionPlan], jobs: int
) -> CompanionBuildPlan | None:
    """The companions' builds against ``facts``' torch, or None (problems recorded)."""
    if not ctx.spec.companions:
        ctx.problem(
            "--against names a torch to build companions against, but no companion was asked",
            "add --with torchvision (or torchaudio, or auto)",
            "companions",
        )
        return None
    checks = [_cuda_ok(ctx, facts), _source_ok(ctx)]
    # Debian's packages are looked up only for a Debian source (else that refusal says it all)
    ok = [c for c in companions if _buildable(ctx, c)] if checks[1] else []
    if not all(checks) or len(ok) != len(companions) or not ok:
        return None
    if facts.cuda is not None:
        ctx.warnings.append(
            f"torch {facts.runtime_version or facts.version} is a CUDA {facts.cuda} build; the "
            "companions get CPU ops only (--cpu): their ops on CUDA tensors are missing"
        )
    builds = [_one_build(ctx, c, facts, jobs) for c in ok]
    return CompanionBuildPlan(torch=facts, builds=builds, max_jobs=jobs)
