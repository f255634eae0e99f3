"""The doctor runs in linear time: every rule pattern is an RE2 automaton, all triggers are one
search per chunk, lines are capped, and crafted 1 MiB lines (which made the old backtracking
matcher run for minutes) are diagnosed in well under a second."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from torchsmith.doctor import diagnose
from torchsmith.doctor.classify import GENERIC_TRIGGERS, classify
from torchsmith.doctor.linear import MAX_LINE, PatternSet, TriggerFinder, capped, check_linear
from torchsmith.doctor.ruledb import Rule, load_rules

MIB = 1 << 20
HOSTILE = {
    "relocation-against-repeated": " can not be used when making a shared object; recompile "
    "with -fPIC " + "relocation R_X86_64_32 against " * (MIB // 31),
    "c10-reference-repeated": "undefined reference to `c10::f(" * (MIB // 29),
    "undefined-symbol-word-run": "undefined symbol: " + "a" * MIB,
    "repeated-error-prefix": "error: " * (MIB // 7),
    "quote-run": "error: command '" + "'" * MIB,
    "many-colons": "x:1:" * (MIB // 4) + " error",
    # security review f1b4bec N8's slowest shapes (a 1 MiB line took > 300 s with Python's re)
    "wheel-tags-dots": ".whl is not a supported wheel on this platform" + "." * MIB,
    "wheel-tags-dots-first": "." * MIB + ".whl is not a supported wheel on this platform",
    "pybind11-run": "pybind11/a" * (MIB // 10),
}


def test_every_rule_pattern_is_linear_time() -> None:
    for rule in load_rules():
        for pattern in rule.patterns:
            assert check_linear(pattern) is None, (rule.id, pattern)


def test_a_backtracking_pattern_is_refused_at_load() -> None:
    row = {
        "id": "x-lookahead",
        "category": "t",
        "severity": "error",
        "stage": "compile",
        "title": "t",
        "patterns": [r"cannot find -lcuda(?!rt)"],
        "cause": "c",
        "fix": "f",
        "affected": "a",
        "source": "https://example.org/x",
    }
    with pytest.raises(ValueError, match="not linear-time"):
        Rule.model_validate(row)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_1mib_line_is_diagnosed_in_under_a_second(tmp_path: Path, name: str) -> None:
    log = tmp_path / "h.log"
    log.write_text("[1/2] Building CXX object a.o\n" + HOSTILE[name] + "\n", encoding="utf-8")
    start = time.process_time()
    diagnosis = diagnose(log)
    assert time.process_time() - start < 1.0
    assert all(len(e.text) <= MAX_LINE for f in diagnosis.findings for e in f.evidence)


def test_every_rule_and_the_classifier_on_hostile_capped_lines_is_fast() -> None:
    rules = load_rules()
    patterns = PatternSet([p for r in rules for p in r.patterns])
    start = time.process_time()
    for line in HOSTILE.values():
        text = capped(line)
        patterns.matches(text)
        classify(text)
    assert time.process_time() - start < 0.5


def test_trigger_finder_agrees_with_a_naive_scan() -> None:
    rng = random.Random(25)  # deterministic
    words = [b"ok", b"error", b"FAIL", b"x", b"Killed", b"ound", b"", b"err", b"or"]
    lines = [b" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(2000)]
    chunk = b"\n".join(lines) + b"\n"
    naive, pos = [], 0
    for line in lines:
        if any(t in line for t in GENERIC_TRIGGERS):
            naive.append(pos)
        pos += len(line) + 1
    assert list(TriggerFinder(GENERIC_TRIGGERS).line_starts(chunk)) == naive


def test_capped_cuts_at_max_line() -> None:
    assert capped("a" * (MAX_LINE + 10)) == "a" * MAX_LINE
    assert capped("short") == "short"
