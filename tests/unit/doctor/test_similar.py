"""The nearest known case (torchsmith/doctor/similar.py): offered, as a generic finding, only when
no rule matched and the error's class says little; never the build's cause."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.unit.doctor.rule_cases import load_script, log_lines
from torchsmith.doctor import diagnose
from torchsmith.doctor.linear import MAX_LINE
from torchsmith.doctor.ruledb import rule_by_id
from torchsmith.doctor.similar import CaseBase, case_base, terms

ROOT = Path(__file__).parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "doctor"


def _without(case: str) -> CaseBase:
    """The shipped cases less one log's own: what the search would have without that log."""
    text = (ROOT / "torchsmith" / "doctor" / "cases.json").read_text(encoding="utf-8")
    return CaseBase([c for c in json.loads(text)["cases"] if c["case"] != case])


def test_the_shipped_cases_are_what_the_script_writes() -> None:
    """cases.json is generated from the fixtures: rerun scripts/gen_doctor_cases.py."""
    shipped = (ROOT / "torchsmith" / "doctor" / "cases.json").read_text(encoding="utf-8")
    assert shipped == load_script("gen_doctor_cases").generate()


def test_every_case_is_an_error_rule_with_a_public_source() -> None:
    for case in case_base().cases:
        assert rule_by_id(case.rule).severity == "error", case.case
        assert case.source.startswith(("https://", "repo:docs/")), case.case


@pytest.mark.parametrize(
    ("log", "rule"),
    [
        # round 20's wrapped "Bus\nerror" that no rule matched: another round's case of it
        ("blind20/fastai-docker-dataloader-bus-error-shm-21.log", "dataloader-shared-memory"),
        # round 19's Arc GPU without XPU: the CUDA wording's cases
        ("blind19/sdnext-arc-torch-not-compiled-xpu-4357.log", "torch-not-compiled-with-cuda"),
    ],
)
def test_a_log_finds_the_case_of_another_thread(log: str, rule: str) -> None:
    match = _without(f"tests/fixtures/doctor/{log}").nearest(log_lines(FIXTURES / log))
    assert match is not None and match.rule == rule
    assert match.case != f"tests/fixtures/doctor/{log}"


def test_the_case_is_a_generic_finding_that_says_where_it_comes_from() -> None:
    log = FIXTURES / "blind20" / "fastai-docker-dataloader-bus-error-shm-21.log"
    diagnosis = diagnose(log_lines(log))
    top = diagnosis.top
    assert top is not None and top.rule_id == "dataloader-shared-memory"
    assert top.generic and top.similar_case is not None
    assert "/issues/" in top.similar_case and "alike" in top.similar_case
    assert "alike" in top.cause
    assert diagnosis.cause is None  # a likeness is never the build's cause
    assert [f.generic for f in diagnosis.findings] == [True, True]  # then the class's own


@pytest.mark.parametrize(
    ("text", "top"),
    [
        # a rule that matches ranks first: no case is looked for
        ("AssertionError: Torch not compiled with CUDA enabled", "torch-not-compiled-with-cuda"),
        # a short line alike by one rare word ('something else'): fewer than 4 shared words
        ("RuntimeError: something else entirely", "generic-python"),
        # a pip failure names its package: not the case of torch's own missing release
        (
            "ERROR: Could not find a version that satisfies the requirement torchmetrics==0.8.1 "
            "(from versions: 0.11.0, 0.12.0)",
            "generic-pip",
        ),
        # a sourced message fact says more than a case
        ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "generic-python"),
    ],
)
def test_no_case_where_the_log_says_more(text: str, top: str) -> None:
    finding = diagnose(text.split("\n")).top
    assert finding is not None and finding.rule_id == top and finding.similar_case is None


def test_a_clean_log_still_gives_no_finding() -> None:
    text = "Installing torch (2.2.2)\nSuccessfully installed av-12.0.0 torch-2.2.2\nok: float64"
    assert diagnose(text.split("\n")).findings == ()


def test_two_rules_as_alike_give_no_case() -> None:
    words = {"alpha": 1, "beta": 1, "gamma": 1, "delta": 1, "epsilon": 1}
    base = CaseBase(
        [
            {"rule": "a", "case": "x", "source": "https://a", "terms": words},
            {"rule": "b", "case": "y", "source": "https://b", "terms": words},
            {"rule": "c", "case": "z", "source": "https://c", "terms": {"zeta": 1}},
        ]
    )
    assert base.nearest(["alpha beta gamma delta epsilon"]) is None
    assert base.nearest(["zeta"]) is None  # one shared word is not enough


def test_words_are_read_from_capped_lines_in_linear_time() -> None:
    start = time.process_time()
    counted = terms(["RuntimeError: " + "a/" * 500_000 + " word" * 200_000])
    assert time.process_time() - start < 2.0
    assert sum(counted.values()) <= MAX_LINE



@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("ImportError: libcudart.so.12: cannot", ["importerror", "libcudart", "cannot"]),
        ("9abc _x+yz 12 ab c++17 sm_90a", ["abc", "x+yz", "c++17", "sm_90a"]),
        ("naïve café_torch 3rd", ["caf", "torch"]),  # a non-ASCII letter ends a word
    ],
)
def test_words_are_those_of_the_documented_expression(line: str, words: list[str]) -> None:
    """A word is what r"[a-z][a-z0-9_+]{2,}" finds in the lower-cased line (the split that
    replaced RE2's findall gave the same words on every fixture line)."""
    assert list(terms([line])) == words


def test_a_line_of_thousands_of_words_is_read_fast() -> None:
    """google-re2's sub and findall run Python code per match: 50 lines of 2000 words took 2 s
    in normalise's white-space rewrite and the case search's words; str.split takes ~0.1 s."""
    diagnose(["TypeError: MPS float64"])  # the rules and cases load once per process
    start = time.process_time()
    diagnose(["TypeError: " + "MPS " * 2000 + "float64"] * 50)
    assert time.process_time() - start < 0.5
