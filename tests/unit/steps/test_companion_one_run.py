"""One run, torch then its companions: the companion step takes the torch wheel the publish
step published (file and Requires-Dist read from it), and the companions join the torch
build's own manifest — one manifest for all the wheels."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.steps.conftest import make_rig
from torchsmith import kb
from torchsmith.companions.model import CompanionBuildPlan
from torchsmith.errors import InternalError
from torchsmith.host.model import HostFacts
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.companion import Result, add_to_torch_manifest, runtime_plan
from torchsmith.steps.publish import publish_manifest
from torchsmith.steps.state import BuildState

HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"
REQUIRES = ["filelock", "typing-extensions>=4.8.0", "sympy", "networkx", "jinja2", "fsspec"]


def one_run() -> CompanionBuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    cli = {"torch": "1.13.1", "accelerator": "cpu", "source": "debian"}
    plan = resolve(resolve_spec(cli={**cli, "companions": ("torchvision",)}), kb.load(), host)
    assert plan.companion_build is not None
    return plan.companion_build


def wheel(folder: Path) -> Path:
    """A wheel file as `setup.py bdist_wheel` lays it out (METADATA with Requires-Dist)."""
    path = folder / "torch-1.13.1-cp311-cp311-linux_x86_64.whl"
    meta = "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in REQUIRES)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch-1.13.1.dist-info/METADATA", meta)
    return path


def state(published: list[Path]) -> BuildState:
    return BuildState(tools=None, base_env={}, published=published)  # type: ignore[arg-type]


def test_the_companions_are_built_against_the_published_torch_wheel(tmp_path: Path) -> None:
    plan = one_run()
    assert plan.torch.location == "" and plan.torch.requires_dist == []
    published = wheel(tmp_path)
    torch = runtime_plan(plan, state([published])).torch
    assert (torch.kind, torch.location, torch.version) == ("build", str(published), "1.13.1")
    assert torch.requires_dist == REQUIRES  # what the build env installs besides torch


def test_no_published_wheel_is_an_ordering_bug(tmp_path: Path) -> None:
    with pytest.raises(InternalError, match="before the 'package' step"):
        runtime_plan(one_run(), state([]))


def test_an_against_plan_is_used_as_it_is(tmp_path: Path) -> None:
    plan = one_run()
    against = plan.model_copy(
        update={"torch": plan.torch.model_copy(update={"kind": "wheel", "location": "/d/t.whl"})}
    )
    assert runtime_plan(against, state([wheel(tmp_path)])) is against


def test_the_companions_join_the_torch_manifest(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    out, ws = rig.ctx.options.output_dir, rig.ctx.workspace.root
    out.mkdir(parents=True)
    torch_artifact = {"file": "torch-1.13.1-cp311-cp311-linux_x86_64.whl", "sha256": "aa"}
    first: dict[str, Any] = {"plan_hash": rig.ctx.plan.plan_hash(), "artifacts": [torch_artifact]}
    rig.state.manifest, rig.state.artifacts = first, [torch_artifact]
    rig.state.manifest_paths = publish_manifest(first, [out, ws], "torch.manifest.json")
    vision = out / "torchvision-0.14.1-cp311-cp311-linux_x86_64.whl"
    record = {"name": "torchvision", "artifact": {"file": vision.name, "sha256": "bb"}}
    results = [Result("torchvision", record, vision)]
    add_to_torch_manifest(rig.ctx, rig.state, {"version": "1.13.1"}, results)
    for path in (out / "torch.manifest.json", ws / "torch.manifest.json"):
        data = json.loads(path.read_text())
        assert [a["file"] for a in data["artifacts"]] == [torch_artifact["file"], vision.name]
        assert data["companions"] == [record]
        assert data["companions_torch_in_build_env"] == {"version": "1.13.1"}
    assert rig.state.published[-1] == vision
    assert sorted(p.name for p in out.iterdir()) == ["torch.manifest.json"]  # no second manifest


def test_a_companion_step_before_the_torch_manifest_is_an_ordering_bug(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    with pytest.raises(InternalError, match="before the torch's manifest"):
        add_to_torch_manifest(rig.ctx, rig.state, {}, [])
