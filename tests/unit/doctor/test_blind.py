"""The doctor on its blind grading sets (tests/fixtures/doctor/blind*/, see the README there):
each set scored no worse than it did when it was collected, and every log of the last round that
shows an error gets a finding."""

from __future__ import annotations

import csv
from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.doctor.rule_cases import load_script, log_lines
from torchsmith.doctor import diagnose

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
ROOT = Path(__file__).parents[3]
# top-1 each set scored at its own freeze (rounds 1-6 were trained on afterwards; 4 and 5 share one)
FLOORS = {
    "blind": 34,
    "blind2": 36,
    "blind3": 31,
    "blind4": 37,
    "blind5": 34,
    "blind6": 42,
    "blind7": 31,
    "blind8": 37,
    "blind9": 28,
    "blind10": 25,
    "blind11a": 3,
    "blind11b": 5,
    "blind12": 23,
    "blind13": 25,
    "blind14": 19,
    "blind15": 25,
    "blind16": 17,
    "blind17": 25,
    "blind18": 25,
    "blind19": 25,
    "blind20": 22,
    "blind21": 19,
    "blind22": 21,
    "blind23": 29,
    "blind24": 27,
    "blind25": 12,
    "blind26": 31,
    "blind27": 24,
    "blind28": 28,
    "blind29": 28,
    "blind30": 28,
}
# rounds 1-10, 12, 15-20, 23 and 24 hold >= 40 logs; the fixed queries of rounds
# 11a/11b/13/14/21/22/25 gave 13, 17, 37, 33, 31, 36 and 32 (their READMEs say why)
MIN_LOGS = {
    "blind11a": 13,
    "blind11b": 17,
    "blind13": 37,
    "blind14": 33,
    "blind21": 31,
    "blind22": 36,
    "blind25": 32,
}


def _grader() -> ModuleType:
    return load_script("grade_doctor")


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_blind_set_scores_no_worse_than_when_collected(name: str) -> None:
    grader = _grader()
    folder = FIXTURES / name
    expected = grader.read_expected(folder / "expected.csv")
    assert len(expected) >= MIN_LOGS.get(name, 40)
    hits = sum(
        grader.hit(diagnose(log_lines(folder / log)), want, 1) for log, want in expected.items()
    )
    assert hits >= FLOORS[name]


@pytest.mark.parametrize("name", ["blind4", "blind5"])
def test_every_log_of_the_shipped_rules_rounds_gets_a_finding(name: str) -> None:
    for log in sorted((FIXTURES / name).glob("*.log")):
        assert diagnose(log_lines(log)).findings, log.name


def test_blind_threads_are_distinct_across_sets() -> None:
    urls = [
        row.split(",")[2]
        for name in FLOORS
        for row in (FIXTURES / name / "expected.csv").read_text(encoding="utf-8").splitlines()[1:]
    ]
    assert len(urls) == len(set(urls))


@pytest.mark.parametrize(
    ("name", "freeze", "logs", "right"),
    [
        ("blind7", "b6fc1c5", 43, 27),
        ("blind8", "71eb7d9", 40, 31),
        ("blind9", "71eb7d9", 43, 22),
        ("blind10", "c33b20f", 42, 18),
        ("blind11a", "d228702", 13, 1),
        ("blind11b", "d228702", 17, 2),
        ("blind12", "5188785", 40, 12),
        ("blind13", "2e021db", 37, 13),
        ("blind14", "2bdfd22", 33, 11),
        ("blind15", "de8d748", 41, 17),
        ("blind16", "f84cb3d", 40, 13),
        ("blind17", "839d528", 40, 12),
        ("blind18", "4842e24", 40, 17),
        ("blind19", "2592e75", 40, 19),
        ("blind20", "ba01f32", 40, 11),
        ("blind21", "4050186", 31, 11),
        ("blind22", "b384b5b", 36, 13),
        ("blind23", "f948f3e", 40, 16),
        ("blind24", "7b199e0", 40, 20),
        ("blind25", "6788cba", 32, 12),
        ("blind26", "8c05fe8", 40, 25),
        ("blind27", "bbe997c", 40, 15),
        ("blind28", "b54f5b7", 40, 20),
        ("blind29", "1c61031", 40, 23),
        ("blind30", "e84c5bd", 40, 18),
    ],
)
def test_logs_judged_right_at_their_freeze_keep_their_finding(
    name: str, freeze: str, logs: int, right: int
) -> None:
    """outcomes.csv records, per log, the top finding at the round's freeze and whether its
    component and fix were right against the thread's answer; a log judged right must still be
    named right (its label), even where a rule fitted later now ranks first; one judged right
    without a label hit (round 15: a generic finding whose fix is the answer) keeps its finding
    or comes to hit the label."""
    grader = _grader()
    folder = FIXTURES / name
    rows = list(csv.DictReader((folder / "outcomes.csv").read_text(encoding="utf-8").splitlines()))
    assert len(rows) == logs
    judged = [r for r in rows if r["component_and_fix_right"] == "yes"]
    assert len(judged) == right
    for row in judged:
        diagnosis = diagnose(log_lines(folder / row["file"]))
        got = row[f"got_at_{freeze}"].split(" (")[0]  # without a note: "(category driver)"
        top = [finding.rule_id for finding in diagnosis.findings[:1]]
        kept = row["label_hit"] == "no" and top == [got]
        assert grader.hit(diagnosis, row["expected"], 1) or kept, (row["file"], got)


def test_every_log_of_round_8_gets_a_finding() -> None:
    for log in sorted((FIXTURES / "blind8").glob("*.log")):
        assert diagnose(log_lines(log)).findings, log.name
