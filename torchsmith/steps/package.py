"""Step "package": the wheel, made by the frontend the release needs.

``setup.py`` releases: ``python setup.py bdist_wheel``; newer ones (setup.py deprecated):
``pip wheel --no-build-isolation --no-deps`` (PEP 517, in the prepared env). Both reuse the
finished CMake build (its ``install`` target has nothing left to compile). The wheel is written
into the workspace; :mod:`torchsmith.steps.publish` moves it to the output directory.
"""

from __future__ import annotations

from pathlib import Path

from torchsmith.errors import BuildError
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState

STAGE = "package"


def package_command(frontend: str, python: Path, wheelhouse: Path) -> list[str]:
    if frontend == "setup.py":
        return [str(python), "setup.py", "bdist_wheel", "--dist-dir", str(wheelhouse)]
    return [
        str(python), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
        "--disable-pip-version-check", "-w", str(wheelhouse), ".",
    ]  # fmt: skip


def newest_wheel(wheelhouse: Path) -> Path | None:
    wheels = sorted(wheelhouse.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    return wheels[-1] if wheels else None


def make_wheel(ctx: BuildContext, tree: Path, benv: BuildEnv) -> Path:
    wheelhouse = ctx.workspace.root / "wheelhouse"
    for old in wheelhouse.glob("*.whl"):
        old.unlink()
    frontend = ctx.plan.frontend.value
    with ctx.stage(STAGE, f"wheel via {frontend}"):
        argv = package_command(frontend, benv.python, wheelhouse)
        ctx.executor.run(argv, env=benv.env, cwd=tree, log_path=ctx.log(STAGE))
    wheel = newest_wheel(wheelhouse)
    if wheel is None:
        raise BuildError(
            f"the {frontend} frontend finished but left no wheel in {wheelhouse}",
            log_path=str(ctx.log(STAGE)),
        )
    return wheel


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``package``."""
    state.wheel = make_wheel(ctx, state.need_tree(), state.need_benv())
