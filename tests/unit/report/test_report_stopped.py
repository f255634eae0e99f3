"""Issue 28 item 9 (trial R16): `report` on the workspace of a build that stopped before
compiling says so and what to do, instead of a hint pointing back at that same path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import UsageError
from torchsmith.report.inputs import load_inputs


def test_a_workspace_that_stopped_before_compiling_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "timings.json").write_text(json.dumps({"fetch": 1.2, "copy": 0.4, "fixes": 0.1}))
    with pytest.raises(UsageError, match="stopped before anything was compiled") as caught:
        load_inputs(tmp_path)
    assert "stages run: fetch, copy, fixes" in caught.value.message
    assert "run the same `torchsmith build` again" in caught.value.hint
    assert str(tmp_path / "logs") in caught.value.hint


def test_a_folder_that_is_no_workspace_keeps_its_message(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"holds neither a build manifest nor a \.ninja_log"):
        load_inputs(tmp_path)
