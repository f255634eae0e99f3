"""The doctor on logs of runs that succeeded (tests/fixtures/doctor/negative/, see the README
there): real output recorded on the 2-core Debian 12 machine, each command exiting 0. The error
reader's soft words (failed, cannot, not found, not available, ...) appear in all of them, and
none may become an error finding. A warning finding is allowed only where it is listed below with
why it is true for the log; the doctor's false findings still open are marked xfail, each with
the exact finding, and listed in KNOWN_FALSE so that no other one hides behind the mark."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.doctor.rule_cases import log_lines
from torchsmith.doctor import Diagnosis, diagnose

NEGATIVE = Path(__file__).parents[2] / "fixtures" / "doctor" / "negative"
LOGS = sorted(p.name for p in NEGATIVE.glob("*.log"))

# warning findings that are true for their log: (file, rule id) -> why (none so far)
ALLOWED_WARNINGS: dict[tuple[str, str], str] = {}

# false error findings the doctor still gives: file -> its error findings as
# (rule id, line of the log without its #@ header); the file's line is 5 more
KNOWN_FALSE: dict[str, list[tuple[str, int]]] = {
    # collect_env's 'Is CUDA available: False' on a machine without a GPU, and its
    # 'Clang version: Could not collect' taken for the first error (generic)
    "torch-collect-env-cpu-machine.log": [("cuda-not-available", 17), ("generic-other", 11)],
    # a script's own 'CUDA available: False' printout after the extension built and ran
    "torch-cpp-extension-jit-load.log": [("cuda-not-available", 8)],
    # pytest's 'SKIPPED (CUDA not available)' of a passing run taken for the first error
    "pytest-skipped-no-cuda.log": [("generic-other", 7)],
}


def _errors(diagnosis: Diagnosis) -> list[tuple[str, int]]:
    """The error findings, each as its rule id and its first evidence line."""
    return [(f.rule_id, f.evidence[0].line) for f in diagnosis.findings if f.severity == "error"]


def _case(name: str) -> object:
    if name not in KNOWN_FALSE:
        return name
    found = ", ".join(f"{rule} at log line {line}" for rule, line in KNOWN_FALSE[name])
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=f"false: {found}"))


def test_the_corpus_is_there_and_small() -> None:
    assert len(LOGS) >= 10
    assert sum((NEGATIVE / name).stat().st_size for name in LOGS) < 1_500_000
    readme = (NEGATIVE / "README.md").read_text(encoding="utf-8")
    for name in LOGS:
        text = (NEGATIVE / name).read_text(encoding="utf-8")
        assert "#@ outcome: success (exit 0)" in text and "#@ command: " in text, name
        assert f"`{name}`" in readme, name
    assert set(KNOWN_FALSE) <= set(LOGS)


@pytest.mark.parametrize("name", [_case(name) for name in LOGS])
def test_a_successful_log_gets_no_error_finding(name: str) -> None:
    diagnosis = diagnose(log_lines(NEGATIVE / name))
    assert _errors(diagnosis) == [], name
    warnings = {f.rule_id for f in diagnosis.findings if f.severity == "warning"}
    assert {(name, rule) for rule in warnings} <= set(ALLOWED_WARNINGS), name
    assert not diagnosis.failed, name


@pytest.mark.parametrize("name", sorted(KNOWN_FALSE))
def test_the_known_false_findings_are_exactly_these(name: str) -> None:
    """Once the doctor no longer gives one, drop it here (and its xfail goes with it)."""
    assert _errors(diagnose(log_lines(NEGATIVE / name))) == KNOWN_FALSE[name]
