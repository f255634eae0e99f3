"""The doctor graded on the public set: real logs of other reports than the rules' own excerpts."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.doctor.rule_cases import load_script
from torchsmith.doctor import diagnose

ROOT = Path(__file__).parents[3]
GRADING = ROOT / "tests" / "fixtures" / "doctor" / "grading"
RULE_FIXTURES = ROOT / "tests" / "fixtures" / "doctor"


def _grader() -> ModuleType:
    return load_script("grade_doctor")


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


# Real output of successful steps recorded on this project's machines (see each folder's README):
# a rule that fires on these would turn every passing build into a false diagnosis.
_CLEAN_OUTPUTS = [
    "build/ninja-c10-1.13.1.log",
    "build/CMakeCache-debian-1.13.1-cpu.txt",
    "build/ccache-4.7.5-print-stats-after-cold-c10.txt",
    "inspect/smoke-2.11.0-cu130.log",
    "inspect/show-2.13.0-cpu.txt",
    "host/ldconfig-p.txt",
    "host/nvcc-dryrun.txt",
    "device-h100/ldconfig-p.txt",
]


@pytest.mark.parametrize("name", _CLEAN_OUTPUTS)
def test_no_rule_fires_on_output_of_a_successful_step(name: str) -> None:
    path = RULE_FIXTURES.parent / name
    diagnosis = diagnose(path.read_text(encoding="utf-8").splitlines())
    assert diagnosis.top is None, (name, diagnosis.top.rule_id if diagnosis.top else None)
