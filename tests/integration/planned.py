"""The toolchain tests choose their compiler the way `torchsmith build` does: through the
planner (``resolve``), then find the planned compiler among the host's."""

from __future__ import annotations

from typing import Any

from torchsmith import kb
from torchsmith.host.model import Compiler, HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec


def planned(host: HostFacts, **cli: Any) -> tuple[BuildPlan, Compiler]:
    """The plan for ``cli`` on ``host`` and the host compiler it chose."""
    plan = resolve(resolve_spec(cli=cli), kb.load(), host)
    label = plan.compiler.value
    found = [c for c in host.compilers if c.label == label and c.cxx]
    assert found, f"the plan chose {label}, which this host lacks: {plan.compiler.reason}"
    return plan, found[0]


def compiler_env(compiler: Compiler) -> dict[str, str]:
    """CC, CXX and CUDAHOSTCXX, as the environment step sets them."""
    cxx = str(compiler.cxx)
    return {"CC": compiler.cc, "CXX": cxx, "CUDAHOSTCXX": cxx}
