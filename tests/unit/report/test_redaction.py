"""M3: the manifest published next to the wheel holds no URL credentials."""

from __future__ import annotations

import json
from pathlib import Path

from torchsmith.plan_model import BuildPlan
from torchsmith.report.manifest import ManifestInputs, build_manifest, source_record
from torchsmith.sources.base import SourceTree

URL = "https://alice:CANARY-pw@h.example/t.tar.gz?X-Amz-Signature=CANARY-sig"


def test_manifest_redacts_plan_source_and_env(fixtures: Path, tmp_path: Path) -> None:
    plan = BuildPlan.model_validate_json(
        (fixtures / "build" / "plan-debian-1.13.1-c10.json").read_text()
    )
    source = plan.source.model_copy(update={"kind": "tarball", "location": URL, "ref": URL})
    plan = plan.model_copy(update={"source": source})
    tree = SourceTree("tarball", tmp_path, "0" * 64, "1.13.1", True, {"location": URL})
    manifest = build_manifest(
        ManifestInputs(
            plan=plan,
            source=source_record(tree, tmp_path),
            toolchain={},
            env={"CCACHE_DIR": "/c", "X": f"see {URL}"},
            cmake_cache={},
            stages={},
            stages_all_runs={},
            ninja={},
            compiler_cache={},
            fixes=[],
            artifacts=[],
            workspace=tmp_path,
        )
    )
    text = json.dumps(manifest)
    assert "CANARY" not in text
    assert manifest["plan"]["source"]["location"] == (
        "https://***@h.example/t.tar.gz?X-Amz-Signature=***"
    )
    assert manifest["plan_hash"] == plan.plan_hash()
