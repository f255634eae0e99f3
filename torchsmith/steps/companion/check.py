"""A companion's ``verify`` step: its (repaired) wheel pins exactly its torch, links torch's own
libraries with the torch's C++ ABI (and, for CUDA ops, holds GPU code for exactly the plan's
archs), carries no build-machine RPATH and needs nothing the machine it lands on may lack; then
the smoke test in a fresh venv holding the torch and the companion wheels (skipped with
``--no-verify``, which still checks the Requires-Dist)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from torchsmith.companions import buildenv
from torchsmith.companions.binary import check_binaries
from torchsmith.companions.torchsource import install_args, link
from torchsmith.companions.verify import SMOKE_EXTRAS, SMOKE_SCRIPTS, check_torch_pin
from torchsmith.companions.wheelcheck import check_repaired
from torchsmith.errors import VerifyError
from torchsmith.inspect.companion import inspect_companion_wheel
from torchsmith.plan_types import CompanionBuild, CompanionBuildPlan
from torchsmith.steps.companion.repair import platform_tag
from torchsmith.steps.companion.run import CompanionRun, Env, companion, need, need_run, root
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState


def _smoke_python(ctx: BuildContext, e: Env, env: dict[str, str], log: Path) -> Path:
    """One fresh venv per run with the torch alone (made at the first companion's smoke test);
    each companion's wheel joins it, so the last smoke test imports them all together."""
    venv = root(ctx) / "smoke-venv"
    python = venv / "bin" / "python"
    if "smoke" not in e.made:
        ctx.executor.run([e.source.creator, "-m", "venv", "--clear", venv], env=env, log_path=log)
        link(e.source, venv)
        torch = install_args(e.source)
        if torch:
            ctx.executor.run(buildenv.pip(python, *torch), env=env, log_path=log)
        e.made["smoke"] = python
    return python


def smoke(ctx: BuildContext, e: Env, comp: CompanionBuild, wheel: Path) -> dict[str, Any]:
    log = ctx.log(f"{comp.name}-verify")
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    env = {k: v for k, v in e.base.items() if k not in drop}
    python = _smoke_python(ctx, e, env, log)
    ctx.executor.run(buildenv.pip(python, wheel, *SMOKE_EXTRAS[comp.name]), env=env, log_path=log)
    with tempfile.TemporaryDirectory(prefix="torchsmith-smoke-") as work:
        script = Path(work) / "smoke.py"
        script.write_text(SMOKE_SCRIPTS[comp.name], encoding="utf-8")
        done = ctx.executor.run([python, script, work], env=env, cwd=Path(work), log_path=log)
    result: dict[str, Any] = json.loads(done.tail[-1])
    if result.get("torch") != e.torch.get("version"):
        raise VerifyError(
            f"{comp.name}'s smoke venv imports torch {result.get('torch')}, not the "
            f"{e.torch.get('version')} it was built against",
            f"see {log}",
        )
    return result


def what(ctx: BuildContext, plan: CompanionBuildPlan, comp: CompanionBuild) -> str:
    smoke_what = comp.smoke if ctx.options.verify else "smoke test skipped (--no-verify)"
    code = f", GPU code for {plan.arch_list}" if plan.arch_list else ""
    return (
        f"Requires-Dist pins torch=={plan.torch.version}; links, C++ ABI{code}; no "
        f"build-machine RPATH; {smoke_what}"
    )


def static(run: CompanionRun, wheel: Path, repair: dict[str, Any] | None) -> dict[str, Any]:
    """The checks that read the wheel only."""
    plan, e = run.plan, run.env
    insp = inspect_companion_wheel(wheel)
    kept = list((repair or {}).get("excluded", []))
    recorded = (repair or {}).get("tag")
    return {
        "requires_torch": check_torch_pin(wheel, plan.torch.version),
        "binaries": check_binaries(insp, e.source.libs, e.torch.get("cxx11_abi"), plan.arch_list),
        "repaired": check_repaired(wheel, platform_tag(wheel), kept, recorded),
    }


def run(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``verify`` of companion ``subject``."""
    run_ = need_run(state)
    comp, made = companion(run_.plan, subject), run_.of(subject)
    wheel = need(made.wheel, "the companion's wheel", "compile")
    with ctx.stage(f"{subject}-verify", what(ctx, run_.plan, comp)):
        verified = static(run_, wheel, made.repair)
        if ctx.options.verify:
            verified["smoke"] = smoke(ctx, run_.env, comp, wheel)
        else:
            verified["smoke"] = "smoke test skipped (--no-verify)"
            ctx.reporter.message(f"{subject}: smoke test skipped (--no-verify); wheel checked")
    made.verify = verified
