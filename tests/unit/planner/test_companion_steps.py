"""Each companion's own steps in the plan (issue 22 item 3): the same step kinds as torch's
with the companion as their subject, after torch's own steps (one run) or alone (--against);
``--output conda`` gives each companion a conda step; what is never carried out is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.planner.test_companion_plan import WHEEL, torch_260
from torchsmith import kb
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan, PlanStep
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec

HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"
KINDS = ["environment", "fetch", "compile", "repair", "verify", "publish"]


def one_run(**cli: Any) -> BuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    base = {"torch": "1.13.1", "accelerator": "cpu", "source": "debian"}
    return resolve(
        resolve_spec(cli={**base, "companions": ("torchvision",), **cli}), kb.load(), host
    )


def against(**cli: Any) -> BuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    base = {"against": WHEEL, "source": "debian", "accelerator": "cpu"}
    return resolve(resolve_spec(cli={**base, **cli}), kb.load(), host, against=torch_260())


def test_one_run_lists_every_companion_step_after_torchs_own() -> None:
    p = one_run(outputs=("wheel", "conda"))
    labels = [s.label for s in p.steps]
    vision = [f"torchvision-{k}" for k in [*KINDS, "conda"]]
    assert labels[labels.index("conda") + 1 :] == [*vision, "attest"]
    assert [s.subject for s in p.steps[: labels.index("conda") + 1]] == [None] * (
        labels.index("conda") + 1
    )


def test_against_plans_the_companions_steps_alone_with_conda() -> None:
    cuda = {"accelerator": "12.4", "gpus": ("8.6",)}  # torchaudio needs the toolkit
    p = against(companions=("torchvision", "torchaudio"), outputs=("conda",), **cuda)
    assert p.steps[0].label == "toolchain"
    assert [(s.subject, s.name) for s in p.steps[1:-1]] == [
        (name, kind) for name in ("torchvision", "torchaudio") for kind in [*KINDS, "conda"]
    ]
    assert (p.steps[-1].name, p.steps[-1].subject) == ("attest", None)
    assert "(torchvision, torchaudio), unsigned" in p.steps[-1].what


def test_each_step_says_what_is_companion_specific() -> None:
    steps = {s.name: s.what for s in against(companions=("torchvision",)).steps}
    assert "--no-deps" in steps["environment"]
    assert "signed Sources index" in steps["fetch"]
    assert "pip wheel --no-build-isolation --no-deps" in steps["compile"]
    assert "(libjpeg, libpng) grafted" in steps["repair"] and "torch's libraries" in steps["repair"]
    assert "manylinux" in steps["repair"]
    assert "torch==2.6.0" in steps["verify"] and "RPATH" in steps["verify"]


def test_a_step_of_torchs_own_dumps_without_a_subject() -> None:
    torch, vision = (
        PlanStep(name="compile", what="w"),
        PlanStep(name="compile", what="w", subject="torchvision"),
    )
    assert torch.model_dump() == {"name": "compile", "what": "w"}  # plans dump as before
    assert vision.model_dump()["subject"] == "torchvision" and vision.label == "torchvision-compile"
    assert PlanStep.model_validate(vision.model_dump()) == vision
    p = one_run()
    assert BuildPlan.model_validate(p.model_dump(mode="json")).steps == p.steps


def test_an_own_source_url_is_redacted_in_the_fetch_step() -> None:
    url = "https://user:secret@example.org/vision-0.21.0.tar.gz#sha256=" + "a" * 64
    p = against(companions=("torchvision",), **{"companion_source.torchvision": f"tarball:{url}"})
    [fetch] = [s for s in p.steps if s.name == "fetch"]
    assert "secret" not in fetch.what and "example.org" in fetch.what


def test_install_with_against_is_refused_and_one_run_says_what_is_installed() -> None:
    with pytest.raises(PlanError, match="installing the companions is not carried out yet"):
        against(companions=("torchvision",), outputs=("wheel", "install"), install_python="/p")
    p = one_run(outputs=("wheel", "install"), install_python="/venv/bin/python")
    assert any("companions' wheels are published" in w for w in p.warnings)
