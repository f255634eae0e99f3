"""Issue 13 part 2, for real: the official torch 2.13.0+cpu wheel (PyPI's CPU index, the
session's ``cpu_torch_wheel``) goes through the ``conda`` step — a ``.conda`` package named as
PyTorch's own (``pytorch-2.13.0-py3.11_cpu_0``) with the wheel's run dependencies — into a
local channel it indexes; py-rattler solves and installs it offline into a fresh prefix from
that channel plus a second local channel this test builds with what it depends on, and the
smoke tests pass with that prefix's interpreter. ``publish --to conda-channel:DIR`` then copies
it into another channel: again is a no-op, another package under that name is refused.

The dependency channel, honestly: conda-forge is unreachable here (components-checked.md), so
its packages are PyPI's wheels of the same projects (pinned below) turned into conda packages by
the same torchsmith code, and ``python`` is a package holding a venv-shaped prefix
(``pyvenv.cfg`` + ``bin/python3.11`` → this machine's interpreter): the prefix's own
``lib/python3.11/site-packages`` is what that interpreter imports from. About 60-90 s."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.unit.planner.kb import ci_host
from torchsmith.backends.local import LocalExecutor
from torchsmith.packaging import conda
from torchsmith.proc import HOST
from torchsmith.publish.conda_channel import add_to_channel, repodata
from torchsmith.steps import conda as conda_step
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.steps.state import BuildState
from torchsmith.verify import load_plan, verify_artifact
from torchsmith.verify.smoke import SmokeOptions
from torchsmith.workspace import prepare_workspace

from . import conftest
from .small_tree import cli_env, run_cli
from .test_repair_install import PLANS, Said

pytestmark = [pytest.mark.slow, pytest.mark.network]

# torch 2.13.0's Requires-Dist (no extras) and theirs, as resolved from PyPI on 2026-11-24
DEPENDENCIES = (
    "filelock==4.2.12", "typing-extensions==4.16.0", "setuptools==84.2.1", "sympy==1.14.0",
    "mpmath==1.3.0", "networkx==3.6.1", "jinja2==3.1.6", "markupsafe==3.0.4",
    "fsspec==2026.9.0",
)  # fmt: skip
PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def _dependency_wheels() -> list[Path]:
    dest = conftest.test_cache() / "conda-deps"
    with conftest.cache_lock("conda-deps"):
        if len(list(dest.glob("*.whl"))) != len(DEPENDENCIES):
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
            argv = [*pip, "--only-binary=:all:", *conftest.WHEEL_TARGET, "-d", str(dest)]
            subprocess.run([*argv, *DEPENDENCIES], check=True)
        return sorted(dest.glob("*.whl"))


def _python_package(stage: Path, out: Path) -> None:
    """``python`` as a venv-shaped prefix over this machine's interpreter."""
    base = Path(sys.base_prefix) / "bin" / f"python{PY}"
    (stage / "bin").mkdir(parents=True)
    (stage / "pyvenv.cfg").write_text(f"home = {base.parent}\ninclude-system-site-packages = "
                                      f"false\nversion = {sys.version.split()[0]}\n")  # fmt: skip
    (stage / "bin" / f"python{PY}").symlink_to(base)
    (stage / "bin" / "python").symlink_to(f"python{PY}")
    site = stage / "lib" / f"python{PY}" / "site-packages"
    site.mkdir(parents=True)
    (site / "README.txt").write_text("this prefix's packages\n")
    package = conda.CondaPackage("python", sys.version.split()[0], "host_venv_0", ())
    conda.assemble(stage, out, package, compression=1)


def dependency_channel(root: Path) -> Path:
    """A channel with ``python`` and torch's run dependencies (from their PyPI wheels)."""
    channel = root / "deps-channel"
    _python_package(root / "python-stage", channel / conda.SUBDIR)
    for wheel in _dependency_wheels():
        package = conda.package_for(wheel, PY, conda.plain_build(PY))
        conda.stage_wheel(wheel, root / "stage" / wheel.name, PY)
        conda.assemble(root / "stage" / wheel.name, channel / conda.SUBDIR, package, 1)
    conda.index_channel(channel)
    return channel


def _install(channels: list[Path], prefix: Path, cache: Path) -> list[str]:
    """py-rattler: solve ``pytorch`` from local channels only, install into ``prefix``."""
    from rattler import install, solve

    sources = [c.as_uri() for c in channels]
    records = asyncio.run(solve(sources, ["pytorch"], platforms=["linux-64", "noarch"]))
    asyncio.run(install(records, prefix, cache_dir=cache, show_progress=False))
    return sorted(r.file_name for r in records)


def _conda_step(tmp_path: Path, wheel: Path) -> Path:
    plan = load_plan(PLANS / "plan-2.13.0-cpu.json")
    workspace = prepare_workspace(tmp_path / "cache", plan, {}, lambda _t: None)
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    env = dict(os.environ)
    ctx = BuildContext(plan, workspace, LocalExecutor(env), Said(), options, ci_host())
    state = BuildState(tools=None, base_env=env, published=[wheel])  # type: ignore[arg-type]
    try:
        conda_step.run(ctx, state)
    finally:
        workspace.release()
    return tmp_path / "dist" / conda_step.CHANNEL


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_official_cpu_wheel_as_a_conda_package_installs_offline_and_runs(
    tmp_path: Path, cpu_torch_wheel: Path
) -> None:
    deps = dependency_channel(tmp_path)
    channel = _conda_step(tmp_path, cpu_torch_wheel)
    (package,) = (channel / "linux-64").glob("*.conda")
    assert package.name == "pytorch-2.13.0-py3.11_cpu_0.conda"
    record = repodata(channel, "linux-64")["packages.conda"][package.name]  # type: ignore[index]
    assert record["build"] == "py3.11_cpu_0" and record["name"] == "pytorch"
    assert "python >=3.11,<3.12.0a0" in record["depends"]
    assert (
        "sympy >=1.13.3" in record["depends"] and "typing_extensions >=4.10.0" in record["depends"]
    )

    prefix = tmp_path / "prefix"
    installed = _install([channel, deps], prefix, tmp_path / "pkgs")
    assert package.name in installed and "python-3.11" in " ".join(installed)
    python = str(prefix / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    shown = subprocess.run([python, "-c", "import torch; print(torch.__file__)"], env=env,
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert shown.stdout.startswith(str(prefix / "lib" / "python3.11" / "site-packages"))
    plan = load_plan(PLANS / "plan-2.13.0-cpu.json")
    smoke = SmokeOptions(python=python, workdir=tmp_path / "smoke", runner=HOST, mode="interpreter")
    verdict = verify_artifact(None, plan, env, runner=HOST, python=python, smoke=smoke)
    assert verdict.passed, [c for c in [*verdict.checks, *verdict.smoke] if c.ok is False]
    assert any(c.name == "autograd" and c.ok for c in verdict.smoke)

    again = add_to_channel(package, channel)  # the step's own channel: same file, no-op
    assert again.outcome == "already-there"
    other_channel = tmp_path / "published"
    env_cli = cli_env()
    first = run_cli(["publish", str(channel / "linux-64"), "--to",
                     f"conda-channel:{other_channel}", "--json"], env_cli)  # fmt: skip
    assert first.returncode == 0 and '"outcome": "uploaded"' in first.stdout, first.stderr
    assert (other_channel / "linux-64" / "repodata.json").is_file()
    second = run_cli(["publish", str(package), "--to", f"conda-channel:{other_channel}",
                      "--json"], env_cli)  # fmt: skip
    assert '"outcome": "already-there"' in second.stdout, second.stderr
    different = _other_package(deps, tmp_path / "other", package.name)
    clash = run_cli(["publish", str(different), "--to", f"conda-channel:{other_channel}"], env_cli)
    assert clash.returncode == 13 and "already exists" in clash.stderr, clash.stderr


def _other_package(deps: Path, dest: Path, name: str) -> Path:
    """A real conda package (a dependency's) under the torch package's file name."""
    dest.mkdir()
    source = next((deps / "linux-64").glob("filelock-*.conda"))
    other = dest / name
    shutil.copy(source, other)
    assert zipfile.is_zipfile(other)  # .conda is a zip: still a readable package
    return other
