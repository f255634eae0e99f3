"""A companion's ``repair`` step: what the torch wheel gets, its wheel gets — auditwheel grafts
the system libraries it links (libjpeg, libpng for torchvision's image decoders) into
``<name>.libs/`` behind ``$ORIGIN`` RPATHs and gives it the manylinux tag it measures; every
RPATH entry left that names the build machine (the build venv's or a pyenv lib dir) is removed.
torch's own libraries stay external (the companion loads the torch it was built against: its
torch/lib/ sonames are ``--exclude``-d), and so do the driver and, for CUDA ops, the toolkit's
libraries, as for torch. Reruns reuse the repaired wheel of the same compiled wheel."""

from __future__ import annotations

import re
import time
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from torchsmith.hashing import sha256_file
from torchsmith.packaging.wheel_rpath import PatchRun, scrub_wheel
from torchsmith.planner.reproducible import companion_build_epoch
from torchsmith.steps.companion.build import marker
from torchsmith.steps.companion.run import companion, need, need_run, root
from torchsmith.steps.context import BuildContext
from torchsmith.steps.repair import (
    excluded_sonames,
    normalise,
    only_wheel,
    repair_tools,
    run_auditwheel,
    tool_env,
    tool_versions,
)
from torchsmith.steps.state import BuildState

_OWN_LIB = re.compile(r"^lib[^/]*\.so(\.[0-9.]+)?$")


def own_libraries(wheel: Path) -> list[str]:
    """The shared libraries the wheel holds itself (torchaudio's ``lib/libtorchaudio.so``, which
    its ``_torchaudio.so`` needs and torchaudio loads by path first): auditwheel cannot locate
    them on an RPATH, and they need no grafting — they are in the wheel."""
    with zipfile.ZipFile(wheel) as zf:
        names = {PurePosixPath(n).name for n in zf.namelist()}
    return sorted(n for n in names if _OWN_LIB.match(n))


def excluded(ctx: BuildContext, torch_libs: frozenset[str], wheel: Path) -> list[str]:
    """The driver's (and with CUDA ops the toolkit's) sonames, as for torch, torch's own
    libraries (torch/lib/ of the torch the companion was built against) and the wheel's own."""
    own = [n for n in own_libraries(wheel) if n not in torch_libs]
    return [*excluded_sonames(ctx.plan), *sorted(torch_libs), *own]


def platform_tag(wheel: Path) -> str:
    """'torchvision-0.21.0-cp311-cp311-manylinux_2_34_x86_64.whl' -> its platform tag(s)."""
    return wheel.name.removesuffix(".whl").split("-")[-1]


def repair(
    ctx: BuildContext,
    stage: str,
    wheel: Path,
    skip: list[str],
    env: dict[str, str],
    *,
    epoch: int,
) -> tuple[Path, dict[str, Any]]:
    """The repaired wheel (in the companion's own directory) and what the repair did."""
    out, start = root(ctx) / stage.removesuffix("-repair") / "repaired", time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    with ctx.stage(stage, f"{wheel.name}: auditwheel, $ORIGIN RPATHs"):
        tools = repair_tools()
        policy = run_auditwheel(ctx, stage, wheel, out, skip=skip, env=tool_env(env, tools))
        repaired = only_wheel(out)
        patch = PatchRun(ctx.executor, str(tools.patchelf), tool_env(env, tools), ctx.log(stage))
        scrubbed = scrub_wheel(repaired, patch)
        normalised = normalise(epoch, repaired)
    return repaired, {
        "tools": tool_versions(),
        "policy": policy,
        "tag": platform_tag(repaired),
        "wheel": repaired.name,
        "excluded": skip,
        "rpath_scrubbed": scrubbed,
        "normalised": normalised,
        "bytes_before": wheel.stat().st_size,
        "bytes_after": repaired.stat().st_size,
        "seconds": round(time.monotonic() - start, 2),
    }


def _reused(ctx: BuildContext, stage: str, built: str) -> tuple[Path, dict[str, Any]] | None:
    done = marker(ctx, stage)
    wheel = Path(done.get("repaired", ""))
    if done.get("from_sha256") != built or not wheel.is_file():
        return None
    ctx.reporter.message(f"{stage}: repaired by an earlier run, {wheel}")
    return wheel, done["record"]


def run(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``repair`` of companion ``subject``: its wheel becomes the repaired one."""
    run_ = need_run(state)
    made, stage = run_.of(subject), f"{subject}-repair"
    built = need(made.built, "the compiled wheel", "compile")
    digest = sha256_file(built)
    again = _reused(ctx, stage, digest)
    if again is None:
        skip = excluded(ctx, run_.env.source.libs, built)
        epoch = companion_build_epoch(ctx.plan, companion(run_.plan, subject), made.source)
        again = repair(ctx, stage, built, skip, run_.env.base, epoch=epoch)
        done = {"from_sha256": digest, "repaired": str(again[0]), "record": again[1]}
        ctx.workspace.mark_done(stage, done)
    made.wheel, made.repair = again
    ctx.reporter.message(f"{stage}: {made.wheel.name} ({made.repair['bytes_after']} bytes)")
