"""Step ``publish``: a partial build publishes its manifest (the targets' files, the steps run)
into the workspace and the output directory."""

from __future__ import annotations

import json

from tests.unit.steps.conftest import Rig
from torchsmith.steps import compile, configure, environment, outputs, source
from torchsmith.steps.state import build_dir


def test_partial_build_manifest_lists_the_targets_files(rig: Rig) -> None:
    for step in (source.run_fetch, source.run_copy, environment.run, configure.run, compile.run):
        step(rig.ctx, rig.state)
    lib = build_dir(rig.state.need_tree()) / "lib" / "libc10.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF")
    rig.state.executed = ["fetch", "copy", "environment", "configure", "compile", "publish"]
    outputs.run(rig.ctx, rig.state)
    assert [a["name"] for a in rig.state.artifacts] == ["lib/libc10.so"]
    written = [json.loads(p.read_text()) for p in rig.state.manifest_paths]
    assert len(written) == 2 and all(m["kind"] == "partial" for m in written)
    assert written[0]["executed_steps"][-1] == "publish"
    assert outputs.result_warnings(rig.ctx) == []
