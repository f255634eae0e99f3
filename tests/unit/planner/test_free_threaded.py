"""Issue 24 item 3: free-threaded Python (PEP 703) is planned where the release has official
``cpXYt`` wheels (PyPI's file lists: kb/data/arch_parsers.toml), warned where its binaries were
experimental (torch 2.6: pytorch/pytorch#130249), refused naming the first release elsewhere; the
build runs on ``python3.13t``, which the machine has or the readiness table says where to get."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.planner.kb import ci_host
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.kb import load
from torchsmith.plan import BuildPlan, resolve
from torchsmith.planner.free_threaded import interpreter_row
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.preflight import base_python

FREE = PythonInfo(path="/usr/bin/python3.13t", version="3.13.5")


def plan(host: HostFacts | None = None, **cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli={"accelerator": "cpu", **cli}), load(), host or ci_host())


def test_a_release_with_official_wheels_plans_the_free_threaded_interpreter() -> None:
    p = plan(torch="2.7.0", python="3.13t")
    assert p.python.value == "3.13t" and "runs on python3.13t" in p.python.reason
    assert base_python(p)[0] == "python3.13t"
    [row] = [r for r in p.readiness if r.tool == "free-threaded Python"]
    assert not row.ready and not row.provisionable  # build refuses until it is installed
    assert "uv python install 3.13t" in row.provider and "python3.13-nogil" in row.provider


def test_the_machines_free_threaded_interpreter_makes_the_row_ready() -> None:
    host = ci_host().model_copy(update={"pythons": [*ci_host().pythons, FREE]})
    p = plan(host=host, torch="2.9.0", python="3.13t")
    [row] = [r for r in p.readiness if r.tool == "free-threaded Python"]
    assert row.ready and row.found == "/usr/bin/python3.13t"
    assert not interpreter_row("3.14t", host).ready  # 3.13t is not 3.14t


def test_torch_26_with_313t_is_planned_as_experimental() -> None:
    p = plan(torch="2.6.0", python="3.13t")
    assert any("3.13t with torch 2.6.0 is experimental" in w for w in p.warnings)
    assert any("pytorch/pytorch#130249" in w for w in p.warnings)


@pytest.mark.parametrize(
    ("torch", "python", "said"),
    [
        ("2.5.1", "3.13t", "needs torch ≥ 2.7.0"),
        ("2.8.0", "3.14t", "Python 3.14 needs torch ≥ 2.9.0"),
        ("2.13.0", "3.13t", "needs torch ≤ 2.12.0"),  # 2.12.1 dropped the cp313t wheels
    ],
)
def test_a_release_without_them_is_refused_naming_the_release_that_has(
    torch: str, python: str, said: str
) -> None:
    with pytest.raises(PlanError) as info:
        plan(torch=torch, python=python)
    assert said in info.value.render()
