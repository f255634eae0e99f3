"""The sourced message facts of the generic diagnosis (components.toml ``[[message]]``), each
against an excerpt copied from a public report (``tests/fixtures/doctor/messages``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.doctor import diagnose
from torchsmith.doctor.components import by_message, message_facts
from torchsmith.doctor.linear import check_linear

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor" / "messages"
LOGS = sorted(FIXTURES.glob("*.log"))


def _read(path: Path) -> tuple[dict[str, str], list[str]]:
    head: dict[str, str] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#@ "):
            key, _, value = line[3:].partition(":")
            head[key.strip()] = value.strip()
        else:
            body.append(line)
    return head, body


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_generic_diagnosis_carries_the_fact(log: Path) -> None:
    head, body = _read(log)
    diagnosis = diagnose(body)
    top = diagnosis.top
    fact = next(f for f, _ in message_facts() if f.id == head["expect"])
    if "rule" in head:
        # a fact whose train excerpt a specific rule also explains: the rule ranks first and
        # the generic diagnosis below it carries the fact
        assert top is not None and top.rule_id == head["rule"], head["source"]
        top = diagnosis.generic
    assert top is not None and top.generic, head["source"]
    assert (top.title, top.fix, top.source) == (fact.title, fact.fix, fact.source)


def test_every_fact_has_an_excerpt_and_a_source() -> None:
    ids = [f.id for f, _ in message_facts()]
    assert len(ids) == len(set(ids))
    assert {p.stem for p in LOGS} == set(ids)
    for fact, _ in message_facts():
        assert fact.source.startswith("https://"), fact.id
        assert check_linear(fact.match) is None, fact.id


def test_a_message_no_fact_knows_keeps_the_class_diagnosis() -> None:
    assert by_message("RuntimeError: something else entirely") is None
    top = diagnose(["RuntimeError: something else entirely"]).top
    assert top is not None and top.rule_id == "generic-python"
