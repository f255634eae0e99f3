"""``linking = "pip-deps"``: the official nvidia-* pins recorded with their source (the official
wheels' METADATA), and the refusal that names them while the wheel step is not carried out."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement

from tests.unit.planner.kb import ci_host
from torchsmith.errors import PlanError
from torchsmith.kb import load
from torchsmith.kb.pipdeps import all_pins, pins_for
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec


def test_torch_260_cu124_pins_are_the_official_wheels() -> None:
    pins = pins_for("2.6.0", "12.4")
    assert pins is not None and "torch-2.6.0.dist-info/METADATA" in pins.source
    specs = {Requirement(r).name: str(Requirement(r).specifier) for r in pins.requires}
    assert specs["nvidia-cuda-runtime-cu12"] == "==12.4.127"
    assert specs["nvidia-cudnn-cu12"] == "==9.1.0.70"
    assert specs["nvidia-nccl-cu12"] == "==2.21.5"
    assert len(specs) == 13


def test_every_record_has_a_source_and_valid_requirements() -> None:
    for pins in all_pins():
        assert pins.source.startswith("https://pypi.org/project/torch/")
        assert all(Requirement(r).marker is not None for r in pins.requires)
    assert pins_for("2.5.1", "12.4") is None


def _plan(torch: str, **linking: str) -> object:
    cli = {"torch": torch, "accelerator": "12.4", "gpus": ("8.6",)}
    cli |= {f"linking.{lib}": mode for lib, mode in linking.items()}
    return resolve(resolve_spec(cli=cli), load(), ci_host())


def test_pip_deps_is_planned_where_the_official_pins_are_recorded() -> None:
    plan = _plan("2.6.0", cuda="pip-deps")
    assert plan.linking["cuda"].value == "pip-deps"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("torch", "linking", "said"),
    [
        ("2.5.1", {"cuda": "pip-deps"}, "no official nvidia-* pins are recorded for torch 2.5.1"),
        ("2.6.0", {"cudnn": "pip-deps"}, "covers every CUDA library at once"),
    ],
)
def test_pip_deps_is_refused_naming_what_is_known(
    torch: str, linking: dict[str, str], said: str
) -> None:
    with pytest.raises(PlanError) as info:
        _plan(torch, **linking)
    text = info.value.render()
    assert said in text and "--link" in text
