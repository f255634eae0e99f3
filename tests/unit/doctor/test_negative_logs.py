"""The doctor on logs of runs that succeeded (tests/fixtures/doctor/negative/, see the README
there): real output recorded on the 2-core Debian 12 machine, each command exiting 0. The error
reader's soft words (failed, cannot, not found, not available, ...) appear in all of them, and
none may become an error finding. A warning finding is allowed only where it is listed below with
why it is true for the log. The corpus found four false error findings (fixed at the round 26
freeze: collect_env's and a script's 'CUDA available: False', collect_env's 'Could not collect',
pytest's 'SKIPPED (CUDA not available)'); each such line now has a named test below."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.doctor.rule_cases import log_lines
from torchsmith.doctor import Diagnosis, diagnose

NEGATIVE = Path(__file__).parents[2] / "fixtures" / "doctor" / "negative"
LOGS = sorted(p.name for p in NEGATIVE.glob("*.log"))

# warning findings that are true for their log: (file, rule id) -> why
ALLOWED_WARNINGS: dict[tuple[str, str], str] = {
    ("torch-collect-env-cpu-machine.log", "cuda-reported-unavailable"): "collect_env's 'Is CUDA "
    "available: False': true, this machine has no GPU and torch runs on the CPU",
    ("torch-cpp-extension-jit-load.log", "cuda-reported-unavailable"): "the script's own 'CUDA "
    "available: False': true, as above",
}

def _errors(diagnosis: Diagnosis) -> list[tuple[str, int]]:
    """The error findings, each as its rule id and its first evidence line."""
    return [(f.rule_id, f.evidence[0].line) for f in diagnosis.findings if f.severity == "error"]


def test_the_corpus_is_there_and_small() -> None:
    assert len(LOGS) >= 10
    assert sum((NEGATIVE / name).stat().st_size for name in LOGS) < 1_500_000
    readme = (NEGATIVE / "README.md").read_text(encoding="utf-8")
    for name in LOGS:
        text = (NEGATIVE / name).read_text(encoding="utf-8")
        assert "#@ outcome: success (exit 0)" in text and "#@ command: " in text, name
        assert f"`{name}`" in readme, name
    assert {name for name, _ in ALLOWED_WARNINGS} <= set(LOGS)


@pytest.mark.parametrize("name", LOGS)
def test_a_successful_log_gets_no_error_finding(name: str) -> None:
    diagnosis = diagnose(log_lines(NEGATIVE / name))
    assert _errors(diagnosis) == [], name
    warnings = {f.rule_id for f in diagnosis.findings if f.severity == "warning"}
    assert {(name, rule) for rule in warnings} <= set(ALLOWED_WARNINGS), name
    assert not diagnosis.failed, name


def test_every_allowed_warning_is_still_given() -> None:
    """An allowed warning the doctor no longer gives is dropped from the list, not kept."""
    for name, rule in ALLOWED_WARNINGS:
        assert rule in {f.rule_id for f in diagnose(log_lines(NEGATIVE / name)).findings}, name


@pytest.mark.parametrize(
    "line",
    [
        "Clang version: Could not collect",
        "test_ops.py::test_add_on_gpu SKIPPED (CUDA not available)                [ 33%]",
        "CUDA available: False",
        "Is CUDA available: False",
    ],
)
def test_the_lines_found_false_are_no_error(line: str) -> None:
    assert not diagnose([line]).failed
