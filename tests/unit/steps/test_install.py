"""Step ``install``: the published wheel pip-installed into the named interpreter (never the
build environment), then verified there unless --no-verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.steps.conftest import Rig, make_rig
from tests.unit.steps.test_package import _compiled
from torchsmith.errors import BuildError
from torchsmith.steps import install, outputs, package, repair


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
