"""`verify --plan FILE` with a file that is not a plan: a precise message and a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import UsageError
from torchsmith.verify.expect import load_plan


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is a directory, not a plan file"),
        (b"\xff\xfe\x00binary\x00", "is not a text file"),
        (b"{not json", "is not JSON"),
        (b'{"torch": "2.5.1"}', "is neither a build plan nor a manifest"),
    ],
)
def test_bad_plan_files(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "plan.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(UsageError, match=message) as err:
        load_plan(path)
    assert "torchsmith plan --json" in err.value.hint


def test_missing_plan_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "nope.json"
    assert main(["verify", "--python", "python3", "--plan", str(plan)]) == UsageError.exit_code
    err = capsys.readouterr().err
    assert f"--plan {plan}: cannot read it: No such file or directory" in err
    assert "→ pass the JSON file" in err
