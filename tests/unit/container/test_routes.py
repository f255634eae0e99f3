"""container/routes.py: ``plan --backend docker`` and ``build --backend docker`` come to the same
route and name the same conflicts, in one list (issue 22: seed 001's example spec had ``plan``
and ``build`` each name a different one). Through the CLI's main, on the recorded CI host; the
build stops at the plan, before any engine is probed."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.cli import main

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "examples" / "seed-001-official-conda.toml"
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"


def _conflicts(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(argv) == 4
    text = capsys.readouterr().err
    return [line.strip() for line in text.splitlines() if line.startswith("  - ")]


def _both(extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    common = ["--spec", str(SEED), "--host-facts", str(HOST), *extra]
    planned = _conflicts(["plan", *common], capsys)
    where = ["--cache-root", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "dist")]
    built = _conflicts(["build", *common, *where], capsys)
    assert planned == built
    return planned


def test_seed_001_plan_and_build_name_the_same_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = _both([], tmp_path, capsys)
    assert len(found) == 1 and found[0].startswith("- base_image: ")
    assert "python3 is 3.8.10" in found[0] and "Python 3.10 or newer" in found[0]


def test_a_route_refusal_and_the_planners_conflicts_come_in_one_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The route refuses --against; the planner refuses sm_90 for torch 1.8.0: both at once.
    The planner's own word on --against (its torch not inspected) gives way to the route's."""
    wheel = tmp_path / "torch-1.8.0-cp38-cp38-linux_x86_64.whl"
    wheel.write_bytes(b"")
    found = _both(["--against", str(wheel), "--gpu", "9.0"], tmp_path, capsys)
    assert [line.split(":")[0] for line in found] == ["- against", "- gpus"]
    assert "in a container build" in found[0] and "sm_90 needs torch" in found[1]
