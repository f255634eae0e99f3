"""A companion's publish and conda steps: one run puts the companions into the torch build's own
manifest (one manifest for all the wheels, no second one); ``--output conda`` makes the
companion's own conda package (``torchvision-0.14.1-py3.11_cpu_0.conda``, depending on exactly
its torch) in the channel torch's package goes to."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.steps.companion.rig import FETCHED, companion_rig, companion_wheel
from torchsmith.errors import InternalError
from torchsmith.steps.companion import env, outputs
from torchsmith.steps.publish import publish_manifest
from torchsmith.steps.state import BuildState

REQUIRES = ["filelock", "typing-extensions>=4.8.0", "sympy", "networkx", "jinja2", "fsspec"]


def torch_wheel(folder: Path) -> Path:
    path = folder / "torch-1.13.1-cp311-cp311-linux_x86_64.whl"
    meta = "Metadata-Version: 2.1\nName: torch\nVersion: 1.13.1\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in REQUIRES)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch-1.13.1.dist-info/METADATA", meta)
    return path


def test_the_companions_are_built_against_the_published_torch_wheel(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    plan = rig.ctx.plan.companion_build
    assert plan is not None and plan.torch.location == "" and plan.torch.requires_dist == []
    published = torch_wheel(tmp_path)
    state = BuildState(tools=None, base_env={}, published=[published])  # type: ignore[arg-type]
    torch = env.runtime_plan(plan, state).torch
    assert (torch.kind, torch.location, torch.version) == ("build", str(published), "1.13.1")
    assert torch.requires_dist == REQUIRES
    with pytest.raises(InternalError, match="before the 'package' step"):
        env.runtime_plan(plan, BuildState(tools=None, base_env={}))  # type: ignore[arg-type]


def test_the_companion_joins_the_torch_manifest(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    out, ws = rig.ctx.options.output_dir, rig.ctx.workspace.root
    out.mkdir(parents=True)
    torch_artifact = {"name": "torch-1.13.1-cp311-cp311-linux_x86_64.whl", "sha256": "aa"}
    first: dict[str, Any] = {"plan_hash": rig.ctx.plan.plan_hash(), "artifacts": [torch_artifact]}
    rig.state.manifest, rig.state.artifacts = first, [torch_artifact]
    rig.state.manifest_paths = publish_manifest(first, [out, ws], "torch.manifest.json")
    assert rig.state.companions is not None
    rig.state.companions.of("torchvision").wheel = companion_wheel(tmp_path / "repaired")
    rig.state.companions.of("torchvision").source = dict(FETCHED)
    for _ in range(2):  # a second publish (a rerun) replaces the record, never duplicates it
        outputs.run_publish(rig.ctx, rig.state, "torchvision")
    vision = "torchvision-0.14.1-cp311-cp311-linux_x86_64.whl"
    for path in (out / "torch.manifest.json", ws / "torch.manifest.json"):
        data = json.loads(path.read_text())
        assert [a["name"] for a in data["artifacts"]] == [torch_artifact["name"], vision]
        assert [c["name"] for c in data["companions"]] == ["torchvision"]
        assert data["companions_torch_in_build_env"]["version"] == "1.13.1"
    assert sorted(p.name for p in out.iterdir()) == ["torch.manifest.json", vision]
    assert rig.state.published[-1] == out / vision


def test_a_companion_published_before_the_torch_manifest_is_an_ordering_bug(
    tmp_path: Path,
) -> None:
    rig = companion_rig(tmp_path)
    assert rig.state.companions is not None
    rig.state.companions.of("torchvision").wheel = companion_wheel(tmp_path / "repaired")
    rig.state.companions.of("torchvision").source = dict(FETCHED)
    with pytest.raises(InternalError, match="before the torch's manifest"):
        outputs.run_publish(rig.ctx, rig.state, "torchvision")


def test_conda_makes_the_companions_own_package(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path, outputs=("wheel", "conda"))
    assert rig.state.companions is not None
    rig.state.companions.of("torchvision").published = companion_wheel(tmp_path / "dist")
    rig.state.companions.of("torchvision").source = dict(FETCHED)
    outputs.run_conda(rig.ctx, rig.state, "torchvision")
    channel = rig.ctx.options.output_dir / "conda-channel"
    [package] = list(channel.glob("linux-64/*.conda"))
    assert package.name == "torchvision-0.14.1-py3.11_cpu_0.conda"
    repodata = json.loads((channel / "linux-64" / "repodata.json").read_text())
    [record] = repodata["packages.conda"].values()
    assert "pytorch ==1.13.1" in record["depends"]
