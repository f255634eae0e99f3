"""A manifest an older torchsmith wrote, unchanged since, is not called edited (round-3 trial
V04: the repo's own partial-build manifest from 2026-11-24 was 'changed after plan wrote it')."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import UsageError
from torchsmith.plan_model import hash_plan_data
from torchsmith.verify.expect import plan_from_json

MANIFEST = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "report"
    / "debian-1.13.1-cuda-partial"
    / "manifest.json"
)


def test_an_unchanged_older_manifest_is_accepted() -> None:
    data = json.loads(MANIFEST.read_text())
    plan = plan_from_json(data, "manifest")
    assert hash_plan_data(data["plan"]) == data["plan_hash"]  # the hash it was written with
    assert plan.torch.value == "1.13.1"


def test_an_edited_manifest_is_still_named(tmp_path: Path) -> None:
    data = json.loads(MANIFEST.read_text())
    data["plan"]["disk_gb"]["value"] = 1.0
    with pytest.raises(UsageError, match="changed after"):
        plan_from_json(data, "manifest")


def test_the_hash_of_a_current_plan_is_its_own(tmp_path: Path) -> None:
    plan = plan_from_json(json.loads(MANIFEST.read_text()), "manifest")
    assert hash_plan_data(plan.model_dump(mode="json")) == plan.plan_hash()


def test_a_library_with_fewer_archs_says_why_it_passes() -> None:
    # round-3 trial §2: "archs of libtorch_cuda_linalg.so: ok … (no sm_75)" with no detail
    from torchsmith.inspect.model import Inspection
    from torchsmith.verify import verify_inspection
    from torchsmith.verify.expect import load_plan

    inspect = MANIFEST.parents[2] / "inspect"
    insp = Inspection.model_validate_json((inspect / "inspect-2.14.1-cu130-wheel.json").read_text())
    checks = verify_inspection(insp, load_plan(inspect / "plans" / "plan-2.14.1-cu130.json"))
    linalg = next(c for c in checks if c.name == "archs of libtorch_cuda_linalg.so")
    assert linalg.ok is True and linalg.detail.startswith("no sm_75 here: fine")
    cuda = next(c for c in checks if c.name == "archs of libtorch_cuda.so")
    assert cuda.ok is True and cuda.detail == ""
