"""Step ``attest`` of a one-run build: torch's wheel and each companion's get their SBOM and
provenance, each describing its own wheel (the companion its own source and record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.steps.companion.rig import FETCHED, companion_rig, companion_wheel
from tests.unit.steps.companion.test_outputs import torch_wheel
from torchsmith.attest.files import provenance_path, sbom_path
from torchsmith.hashing import sha256_file
from torchsmith.steps import attest
from torchsmith.steps.companion import outputs
from torchsmith.steps.publish import publish_manifest


def test_torch_and_each_companion_wheel_are_attested(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    out, ws = rig.ctx.options.output_dir, rig.ctx.workspace.root
    out.mkdir(parents=True)
    torch = torch_wheel(out)
    record = {"name": torch.name, "sha256": sha256_file(torch)}
    first: dict[str, Any] = {
        "kind": "wheel",
        "plan_hash": rig.ctx.plan.plan_hash(),
        "plan": rig.ctx.plan.model_dump(mode="json"),
        "artifacts": [record],
        "source": {"kind": "debian", "version": "1.13.1", "identity": "c5658bab", "details": {}},
    }
    rig.state.manifest, rig.state.artifacts, rig.state.published = first, [record], [torch]
    rig.state.manifest_paths = publish_manifest(first, [out, ws], "torch.manifest.json")
    assert rig.state.companions is not None
    rig.state.companions.of("torchvision").wheel = companion_wheel(tmp_path / "repaired")
    rig.state.companions.of("torchvision").source = dict(FETCHED)
    outputs.run_publish(rig.ctx, rig.state, "torchvision")
    attest.run(rig.ctx, rig.state)
    vision = out / "torchvision-0.14.1-cp311-cp311-linux_x86_64.whl"
    assert sorted(p.name for p in rig.state.attestations) == sorted(
        [*(w.name + ".cdx.json" for w in (torch, vision)),
         *(w.name + ".provenance.json" for w in (torch, vision))]
    )  # fmt: skip
    sbom = json.loads(sbom_path(vision).read_text())
    assert sbom["metadata"]["component"]["name"] == "torchvision"
    statement = json.loads(provenance_path(torch).read_text())
    assert statement["subject"][0]["digest"]["sha256"] == sha256_file(torch)
    assert statement["predicate"]["buildDefinition"]["externalParameters"]["plan"] == first["plan"]
