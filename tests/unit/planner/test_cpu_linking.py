"""Trial E09 (issue 28, with item 4): a CUDA library's linking asked for a CPU build is refused
from every layer, as a --gpu target with --cpu is (it was dropped without a word)."""

from __future__ import annotations

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith.errors import PlanError
from torchsmith.plan import resolve
from torchsmith.spec_sources import resolve_spec


@pytest.mark.parametrize(
    "layer",
    [{"cli": {"linking.cuda": "pip-deps"}}, {"env": {"TORCHSMITH_LINKING_NCCL": "static"}}],
)
def test_linking_a_cuda_library_on_a_cpu_build_is_refused(layer: dict[str, dict[str, str]]) -> None:
    cli = {"torch": "2.5.1", "accelerator": "cpu", **layer.get("cli", {})}
    spec = resolve_spec(cli=cli, env=layer.get("env"))
    with pytest.raises(PlanError, match="links a CUDA library; this is a CPU build"):
        resolve(spec, mini_kb(), ci_host())


def test_a_cpu_build_without_linking_plans() -> None:
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    assert plan.linking["cuda"].value is None
