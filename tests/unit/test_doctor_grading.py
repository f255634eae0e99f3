"""The doctor graded on the public set: real logs of other reports than the rules' own excerpts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from torchsmith.doctor import diagnose

ROOT = Path(__file__).parents[2]
GRADING = ROOT / "tests" / "fixtures" / "doctor" / "grading"
RULE_FIXTURES = ROOT / "tests" / "fixtures" / "doctor"


def _grader() -> ModuleType:
    script = ROOT / "scripts" / "grade_doctor.py"
    spec = importlib.util.spec_from_file_location("grade_doctor", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sources(path: Path) -> set[str]:
    return {
        line.split(":", 1)[1].strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("#@ source:")
    }


def test_top1_accuracy_on_the_public_set_is_at_least_90_percent() -> None:
    grader = _grader()
    expected = grader.read_expected(GRADING / "expected.csv")
    assert len(expected) >= 140
    hits = [
        grader.hit(diagnose((GRADING / name).read_text(encoding="utf-8").splitlines()), want, 1)
        for name, want in expected.items()
    ]
    assert sum(hits) / len(hits) >= 0.9


def test_grading_logs_are_not_the_rules_own_excerpts() -> None:
    rows = (GRADING / "expected.csv").read_text(encoding="utf-8").splitlines()[1:]
    graded = {row.split(",")[2] for row in rows}
    used = set().union(*(_sources(p) for p in RULE_FIXTURES.glob("*.log")))
    assert not graded & used, sorted(graded & used)
