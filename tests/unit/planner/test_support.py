"""Accepted means done: what the pipeline cannot carry out yet is refused at plan time, one
test per kind (backend, output, companion, step, spec key), never dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith import kb
from torchsmith.backends import EXECUTORS
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan, StepName
from torchsmith.planner import resolve
from torchsmith.planner.support import KNOWLEDGE_ONLY, PIPELINE
from torchsmith.spec import Output
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"


def plan(**cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli=cli), mini_kb(), ci_host())


def refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_the_pipeline_capabilities_are_the_real_registries() -> None:
    assert PIPELINE.backends == set(EXECUTORS)
    assert PIPELINE.steps == set(get_args(StepName))
    assert PIPELINE.outputs <= set(get_args(Output))


def test_backend_the_pipeline_cannot_run_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", backend="docker")
    assert "backend 'docker'" in text and "not carried out yet" in text
    assert "--backend local" in text


def test_output_the_pipeline_cannot_make_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", outputs=("wheel", "conda"))
    assert "outputs conda: only wheels are produced yet" in text and "--output wheel" in text


def test_companions_are_refused_until_the_companion_step_exists() -> None:
    text = refusal(torch="2.5.1", accelerator="cpu", companions=("torchvision",))
    assert "companions torchvision" in text and "drop --with" in text


def test_a_step_the_pipeline_lacks_is_refused_repair_for_pip_deps() -> None:
    text = refusal(torch="2.5.1", accelerator="12.4", gpus=("8.6",), **{"linking.cuda": "pip-deps"})
    assert "linking.cuda" in text and "not yet repaired" in text


def test_spec_key_toolkit_container_is_refused() -> None:
    text = refusal(torch="2.5.1", accelerator="12.4", gpus=("8.6",), toolkit="container")
    assert "toolkit 'container'" in text


def test_spec_key_cache_dir_is_carried_into_the_plan() -> None:
    p = plan(torch="2.5.1", accelerator="cpu", cache_dir="/srv/ccache")
    assert p.cache_dir == "/srv/ccache"
    assert p.plan_hash() == plan(torch="2.5.1", accelerator="cpu").plan_hash()


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(PlanError) as info:
        plan(torch="2.5.1", accelerator="cpu", backend="docker", outputs=("conda",),
             companions=("torchvision",))  # fmt: skip
    assert [p.field for p in info.value.problems] == ["backend", "outputs", "companions"]


SEEDS = sorted((ROOT / "examples").glob("seed-*.toml"))


@pytest.mark.parametrize("spec_file", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_specs_run_or_are_refused_by_name(spec_file: Path) -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    spec = resolve_spec(file=spec_file)
    resolve(spec, kb.load(), host, can=KNOWLEDGE_ONLY)  # the knowledge plans them all
    if (
        spec.spec.backend == "local"
        and spec.spec.outputs == ("wheel",)
        and not spec.spec.companions
    ):
        assert resolve(spec, kb.load(), host).steps
        return
    with pytest.raises(PlanError, match=r"not carried out yet|only wheels|not yet built"):
        resolve(spec, kb.load(), host)
