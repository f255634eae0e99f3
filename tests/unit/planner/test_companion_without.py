"""Parts left out of a companion's build (``--companion-without torchaudio=rnnt,rir``): the plan
puts each part's switch into the companion's environment with its reason and source, refuses a
part the planned release has no switch for (with the releases that have it) and a part of a
companion the build does not build."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.planner.test_companion_plan import HOST, plan, torch_260
from torchsmith import kb
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.planner.companion_env import companion_env
from torchsmith.spec_sources import resolve_spec

CUDA = {"companions": ("torchaudio",), "accelerator": "12.4", "gpus": ("8.6",)}


def _audio_env(p: BuildPlan) -> dict[str, Any]:
    assert p.companion_build is not None
    [audio] = [b for b in p.companion_build.builds if b.name == "torchaudio"]
    return {v.name: v for v in audio.env}


def _refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_each_part_left_out_is_a_planned_switch_with_its_reason() -> None:
    env = _audio_env(plan(**CUDA, **{"companion_without.torchaudio": ("rir", "rnnt")}))
    assert (env["BUILD_RNNT"].value, env["BUILD_RIR"].value) == ("0", "0")
    assert "BUILD_ALIGN" not in env  # built, as the release does by default
    rnnt = env["BUILD_RNNT"].reason
    assert "RNN-T loss" in rnnt and "companion_without.torchaudio = rnnt" in rnnt
    assert "pytorch/audio@v2.6.0:tools/setup_helpers/extension.py" in rnnt
    assert "companion_without.torchaudio = rir" in env["BUILD_RIR"].reason
    assert env["USE_CUDA"].value == "1" and env["TORCH_CUDA_ARCH_LIST"].value == "8.6"


def test_the_switches_come_in_the_order_of_the_known_parts() -> None:
    env = companion_env("torchaudio", "2.6.0", torch_260(), 2, without=("align", "rnnt"))
    assert [v.name for v in env if v.name.startswith("BUILD_")][-2:] == [
        "BUILD_RNNT",
        "BUILD_ALIGN",
    ]


def test_nothing_left_out_plans_no_switch_and_keeps_the_plan_hash() -> None:
    env = _audio_env(plan(**CUDA))
    assert not {"BUILD_RNNT", "BUILD_RIR", "BUILD_ALIGN"} & set(env)
    slim = plan(**CUDA, **{"companion_without.torchaudio": ("rnnt",)})
    assert slim.plan_hash() != plan(**CUDA).plan_hash()  # its own workspace and wheel


def test_a_part_the_planned_release_has_no_switch_for_is_refused_with_its_releases() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())

    def refused(torch: str, python: str, parts: tuple[str, ...]) -> list[str]:
        cli = {"torch": torch, "python": python, "companions": ("torchaudio",)}
        spec = resolve_spec(cli={**cli, "companion_without.torchaudio": parts})
        with pytest.raises(PlanError) as info:
            resolve(spec, kb.load(), host)
        return [p.render() for p in info.value.problems]

    # torch 1.10.0 pairs torchaudio 0.10.0: BUILD_RNNT, not yet BUILD_RIR nor BUILD_ALIGN
    rir, align = refused("1.10.0", "3.9", ("rnnt", "rir", "align"))
    assert "torchaudio 0.10.0's build has no switch for it" in rir
    assert "BUILD_RIR is read by torchaudio 2.0.1 to 2.9.1" in rir
    assert "a torch paired with torchaudio 2.0.1 to 2.9.1" in rir
    assert "BUILD_ALIGN is read by torchaudio 2.1.0 to 2.11.0" in align
    [gone] = refused("2.10.0", "3.11", ("rir",))  # RIR's extension is gone from 2.10
    assert "torchaudio 2.10.0's build has no switch for it" in gone


def test_a_part_of_a_companion_the_build_does_not_build_is_refused() -> None:
    text = _refusal(companions=("torchvision",), **{"companion_without.torchaudio": ("rnnt",)})
    assert "companion_without.torchaudio = rnnt, but this build does not build torchaudio" in text
    assert "add --with torchaudio, or drop --companion-without torchaudio=" in text


def test_a_part_of_a_companion_with_auto_does_not_plan_is_refused() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    cli = {"torch": "1.1.0", "companions": ("auto",), "accelerator": "cpu"}
    spec = resolve_spec(cli={**cli, "companion_without.torchaudio": ("rnnt",)})
    with pytest.raises(PlanError) as info:
        resolve(spec, kb.load(), host)
    text = info.value.render()  # torch 1.1.0 has no torchaudio (its first pins torch 1.2.0)
    assert "--with auto plans no torchaudio for this torch" in text


def test_a_build_without_auto_is_never_told_that_auto_planned_nothing() -> None:
    """--with torchvision and a torchaudio part: one refusal, the real cause (seen by hand:
    a second one blamed --with auto, which was not asked)."""
    text = _refusal(companions=("torchvision",), **{"companion_without.torchaudio": ("rnnt",)})
    assert "--with auto" not in text and text.count("companion_without.torchaudio = rnnt") == 1
