"""Step ``install`` (``--output install --install-python PYTHON``): the published wheel is
pip-installed into the interpreter the user named — never torchsmith's build environment — and
verified there (inspection of the installed torch against the plan, then the smoke tests in that
interpreter as it is). ``--no-verify`` installs without verifying."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import BuildError, InternalError
from torchsmith.interpreter import invocable
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState
from torchsmith.verify import verify_artifact
from torchsmith.verify.smoke import SmokeOptions

STAGE = "install"
_PIP = ["-m", "pip", "install", "--no-input", "--disable-pip-version-check"]


def install_commands(python: str, wheel: Path) -> list[list[str]]:
    """This wheel replaces any installed build of the same version (``--force-reinstall``
    without touching the dependencies), then pip installs what it requires."""
    return [
        [python, *_PIP, "--force-reinstall", "--no-deps", str(wheel)],
        [python, *_PIP, str(wheel)],
    ]


def target_python(ctx: BuildContext) -> str:
    python = ctx.plan.install_python
    if python is None:  # the planner refuses --output install without one
        raise InternalError("the install step has no interpreter", "report this as a bug")
    return invocable(python)  # a relative path names the same file from the smoke's directory


def refuse_build_env(python: str, build_venv: Path) -> None:
    """The build's own environment is never an install target."""
    if Path(python).absolute().is_relative_to(build_venv.absolute()):
        raise BuildError(
            f"--install-python {python} is torchsmith's build environment ({build_venv})",
            "name the interpreter of the environment you will use the wheel in",
        )


def _install(ctx: BuildContext, python: str, wheel: Path, env: Mapping[str, str]) -> None:
    with ctx.stage(STAGE, f"pip install {wheel.name} into {python}"):
        for argv in install_commands(python, wheel):
            ctx.executor.run(argv, env=env, log_path=ctx.log(STAGE))


def _verify_there(ctx: BuildContext, python: str, env: Mapping[str, str]) -> dict[str, Any]:
    workdir = ctx.workspace.root / STAGE
    smoke = SmokeOptions(python=python, workdir=workdir, runner=ctx.executor, mode="interpreter")
    with ctx.stage(f"{STAGE}-verify", f"the torch {python} imports, smoke tests there"):
        verdict = verify_artifact(
            None, ctx.plan, env, runner=ctx.executor, python=python, smoke=smoke
        )
        verdict.raise_if_failed()
    return {"passed": True, "checks": len(verdict.checks) + len(verdict.smoke)}


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``install``: the published wheel (the one in the output directory)."""
    python, env = target_python(ctx), dict(state.base_env)
    refuse_build_env(python, ctx.workspace.venv)
    wheel = state.published[0] if state.published else state.need_wheel()
    _install(ctx, python, wheel, env)
    record: dict[str, Any] = {"python": python, "wheel": wheel.name, "verified": None}
    if ctx.options.verify:
        record["verified"] = _verify_there(ctx, python, env)
    else:
        ctx.reporter.message(f"install: {wheel.name} installed into {python}, not verified")
    state.installed = record
