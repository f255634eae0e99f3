"""`verify --plan FILE` with a file that is not a plan: a precise message and a hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import UsageError
from torchsmith.inspect.model import Inspection
from torchsmith.verify import verify_inspection
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


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _plan_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> Path:
    host = FIXTURES / "plan" / "host-ci.json"
    assert main(["plan", *flags, "--json", "--host-facts", str(host)]) == 0
    path = tmp_path / "plan.json"
    path.write_text(capsys.readouterr().out)
    return path


def test_plan_json_round_trips_into_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `plan --json` writes (with its plan_hash key) is what `verify --plan` reads."""
    path = _plan_json(tmp_path, capsys, "--torch", "2.13.0", "--cpu")
    written = json.loads(path.read_text())
    plan = load_plan(path)
    assert plan.plan_hash() == written["plan_hash"]
    insp = Inspection.model_validate_json(
        (FIXTURES / "inspect" / "inspect-2.13.0-cpu-wheel.json").read_text()
    )
    failed = [c.name for c in verify_inspection(insp, plan) if c.ok is False]
    assert "torch version" not in " ".join(failed)


def test_edited_plan_with_stale_hash_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _plan_json(tmp_path, capsys, "--torch", "2.13.0", "--cpu")
    data = json.loads(path.read_text())
    data["targets"] = ["torch_cpu"]
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=r"plan_hash .* does not match") as err:
        load_plan(path)
    assert "delete the plan_hash key" in err.value.hint


def test_deeply_nested_plan_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000)
    with pytest.raises(UsageError, match="nested too deeply"):
        load_plan(path)
