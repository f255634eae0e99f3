"""The compiler choice respects refusing fixes instead of choosing what it then refuses."""

from __future__ import annotations

from tests.unit.planner.kb import ci_host
from torchsmith import kb
from torchsmith.plan import resolve
from torchsmith.spec_sources import resolve_spec


def test_gcc_refused_by_a_known_fix_is_skipped_not_chosen() -> None:
    # torch 1.13.1 from git: the registry refuses gcc >= 12 (gloo); the host has only gcc 12.
    plan = resolve(resolve_spec(cli={"torch": "1.13.1"}), kb.load(), ci_host())
    assert plan.compiler.value == "gcc-11"
    assert "gcc 12 skipped" in plan.compiler.reason
    row = next(r for r in plan.readiness if r.tool == "host compiler")  # the machine's answer
    assert not row.ready and "apt-get install gcc-11 g++-11" in row.provider


def test_asked_for_refused_compiler_is_still_refused() -> None:
    import pytest

    from torchsmith.errors import PlanError

    spec = resolve_spec(cli={"torch": "1.13.1", "compiler": "gcc-12"})
    with pytest.raises(PlanError, match=r"GCC 12 cannot build torch < 2\.0"):
        resolve(spec, kb.load(), ci_host())
