"""Environment variables and CMake arguments, spelled the way the release at hand reads them.

torch ≤ 1.1 read ``NO_*``/``WITH_*`` in setup.py itself (``env_style = legacy-no``); later
releases forward every ``BUILD_*``, ``USE_*`` and ``CMAKE_*`` variable to CMake. The options
catalogue (``kb/data/options.toml``) holds both spellings and the releases that read each.
"""

from __future__ import annotations

from packaging.version import Version

from torchsmith.kb.models import BuildOption
from torchsmith.plan_model import Decision, EnvSetting
from torchsmith.planner.context import Ctx

# Variables setup.py reads as "set at all" (pytorch/pytorch@v1.13.1:setup.py USE_SYSTEM_LIBS).
PRESENCE_ONLY = frozenset({"system_libs"})


def _in_range(opt: BuildOption, torch: str) -> bool:
    if torch == "main" or not torch[0].isdigit():
        return opt.until is None
    tv = Version(torch)
    if opt.since and tv < Version(opt.since):
        return False
    return not (opt.until and tv > Version(opt.until))


def options_for(ctx: Ctx, feature: str) -> list[BuildOption]:
    """Every switch of this feature that the release reads (1.x has USE_QNNPACK and
    USE_PYTORCH_QNNPACK for the one `qnnpack` feature)."""
    torch = ctx.release.torch if ctx.release else "main"
    return [o for o in ctx.kb.options_for_feature(feature) if _in_range(o, torch)]


def spell(ctx: Ctx, opt: BuildOption, on: bool, reason: str) -> EnvSetting:
    """``USE_X=1/0``, or the legacy ``NO_X=1`` where this release only reads that."""
    legacy = ctx.release is not None and ctx.release.env_style == "legacy-no"
    if legacy and opt.legacy:
        if opt.legacy_inverted and not on:
            return EnvSetting(name=opt.legacy, value="1", reason=f"{reason} (legacy spelling)")
        if not opt.legacy_inverted:
            return EnvSetting(name=opt.legacy, value="1" if on else "0", reason=reason)
    return EnvSetting(name=opt.name, value="1" if on else "0", reason=reason)


def _blas(ctx: Ctx, decision: Decision[bool | None]) -> EnvSetting:
    """There is no USE_MKL: MKL is chosen with BLAS=MKL (kb option BLAS); off means Eigen."""
    ctx.kb.option("BLAS")  # the catalogue must know the switch
    value = "MKL" if decision.value else "Eigen"
    return EnvSetting(name="BLAS", value=value, reason=f"{decision.reason} (mkl via BLAS)")


def feature_env(ctx: Ctx, features: dict[str, Decision[bool | None]]) -> list[EnvSetting]:
    settings = []
    for name, decision in features.items():
        if decision.value is None:
            continue
        if name == "mkl":
            settings.append(_blas(ctx, decision))
            continue
        if name in PRESENCE_ONLY and not decision.value:
            continue  # setup.py tests bool(os.getenv(...)): any value, even 0, switches it on
        opts = options_for(ctx, name)
        if not opts:
            if decision.origin == "user":
                torch = ctx.release.torch if ctx.release else "?"
                ctx.problem(
                    f"torch {torch} has no build switch for {name!r}",
                    f"drop features.{name}; `torchsmith kb release {torch}` lists the release",
                    f"features.{name}",
                )
            continue
        spelled = [spell(ctx, opt, bool(decision.value), decision.reason) for opt in opts]
        settings += list({e.name: e for e in spelled}.values())
    return settings


def by_option(ctx: Ctx, name: str, on: bool, reason: str) -> EnvSetting:
    """Spell a switch that is not a Features field (USE_CUDA, USE_STATIC_NCCL, ...)."""
    for opt in ctx.kb.options:
        torch = ctx.release.torch if ctx.release else "main"
        if opt.name == name and _in_range(opt, torch):
            return spell(ctx, opt, on, reason)
    return EnvSetting(name=name, value="1" if on else "0", reason=reason)


def cmake_args(env: list[EnvSetting]) -> list[str]:
    """The same switches as ``-D`` arguments, for configuring with CMake directly."""
    args = []
    for setting in env:
        if setting.name.startswith(("USE_", "BUILD_")) and setting.value in {"0", "1"}:
            args.append(f"-D{setting.name}={'ON' if setting.value == '1' else 'OFF'}")
        elif setting.name in {"TORCH_CUDA_ARCH_LIST", "CMAKE_BUILD_TYPE"}:
            args.append(f"-D{setting.name}={setting.value}")
    return args
