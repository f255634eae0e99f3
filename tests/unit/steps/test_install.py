"""Step ``install``: the published wheel pip-installed into the named interpreter (never the
build environment), then verified there unless --no-verify."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.unit.steps.conftest import Rig, make_plan, make_rig, make_tree
from tests.unit.steps.recording import RecordingExecutor
from tests.unit.steps.test_package import _compiled
from torchsmith.errors import BuildError, HostError
from torchsmith.spec import BuildSpec
from torchsmith.steps import install, outputs, package, repair
from torchsmith.steps.preflight import preflight


def test_install_commands_replace_the_same_version_then_resolve_dependencies() -> None:
    first, second = install.install_commands("/v/bin/python", Path("/d/t.whl"))
    assert first[:4] == ["/v/bin/python", "-m", "pip", "install"]
    assert {"--force-reinstall", "--no-deps"} <= set(first) and first[-1] == "/d/t.whl"
    assert "--no-deps" not in second and second[-1] == "/d/t.whl"


def test_the_build_environment_is_never_an_install_target(tmp_path: Path) -> None:
    venv = tmp_path / "ws" / "venv"
    with pytest.raises(BuildError, match="build environment"):
        install.refuse_build_env(str(venv / "bin" / "python"), venv)
    install.refuse_build_env(str(tmp_path / "user-venv" / "bin" / "python"), venv)


def _published(tmp_path: Path, verify: bool = False) -> Rig:
    rig = make_rig(
        tmp_path, verify=verify, outputs=("wheel", "install"), install_python="/u/bin/python"
    )
    _compiled(rig)
    for step in (package.run, repair.run, outputs.run, install.run):
        step(rig.ctx, rig.state)
    return rig


def test_the_step_installs_the_published_wheel_into_the_named_interpreter(
    tmp_path: Path,
) -> None:
    rig = _published(tmp_path)
    published = rig.state.published[0]
    ran = rig.executor.ran[-2:]
    assert [a[0] for a in ran] == ["/u/bin/python", "/u/bin/python"]
    assert all(a[-1] == str(published) for a in ran) and published.parent == tmp_path / "dist"
    assert rig.state.installed == {
        "python": "/u/bin/python",
        "wheel": published.name,
        "verified": None,
    }
    assert any("not verified" in line for line in rig.reporter.lines)


class OtherPython(RecordingExecutor):
    """The target interpreter answers Python 3.10; every other one 3.11."""

    def capture(self, argv: Any, **kw: Any) -> subprocess.CompletedProcess[str]:
        if str(argv[0]) == "/u/bin/python":
            return subprocess.CompletedProcess(argv, 0, "/u/bin/python\n3.10\n", "")
        return super().capture(argv, **kw)


def test_an_install_target_of_another_python_is_refused_before_the_build(tmp_path: Path) -> None:
    plan = make_plan(make_tree(tmp_path), outputs=("install",), install_python="/u/bin/python")
    executor = OtherPython()
    with pytest.raises(HostError, match=r"--install-python: /u/bin/python is Python 3\.10") as info:
        preflight(executor, plan, executor.environment(), tmp_path / "cache")
    assert "--python X.Y" in info.value.hint
    assert executor.ran == []  # nothing was built


def test_an_interpreter_path_given_as_the_python_version_points_to_install_python() -> None:
    with pytest.raises(ValidationError, match="install_python"):
        BuildSpec(python="/opt/venv/bin/python")
    assert BuildSpec(install_python="/opt/venv/bin/python").python is None


def test_a_relative_install_python_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from torchsmith.steps.install import target_python

    monkeypatch.chdir(tmp_path)
    ctx = SimpleNamespace(plan=SimpleNamespace(install_python=".venv/bin/python"))
    assert target_python(ctx) == str(tmp_path / ".venv/bin/python")  # type: ignore[arg-type]
