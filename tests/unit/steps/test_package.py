"""Step ``package``: the frontend the release needs; a frontend that leaves no wheel fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.steps.conftest import Rig, make_rig
from torchsmith.errors import BuildError
from torchsmith.steps import compile, configure, environment, package, source


def test_frontends() -> None:
    py, out = Path("/v/bin/python"), Path("/w")
    assert package.package_command("setup.py", py, out)[1:] == [
        "setup.py", "bdist_wheel", "--dist-dir", "/w",
    ]  # fmt: skip
    pep517 = package.package_command("pep517", py, out)
    assert pep517[1:4] == ["-m", "pip", "wheel"] and "--no-build-isolation" in pep517


def _compiled(rig: Rig) -> None:
    for step in (source.run_fetch, source.run_copy, environment.run, configure.run, compile.run):
        step(rig.ctx, rig.state)


def test_the_step_finds_the_frontends_wheel(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    _compiled(rig)
    package.run(rig.ctx, rig.state)
    assert rig.state.need_wheel().name.startswith("torch-2.5.1")


def test_no_wheel_is_a_build_error_naming_the_frontend(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    _compiled(rig)
    rig.executor.run = lambda argv, **kw: None  # type: ignore[assignment,method-assign,return-value]
    with pytest.raises(BuildError, match="left no wheel"):
        package.run(rig.ctx, rig.state)
