"""Every doctor rule against log text copied from the public report it was learned from.

Data-driven: each ``tests/fixtures/doctor/<rule-id>[--N].log`` names its report's URL and the
rule that must rank first (see the README there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.doctor import diagnose
from torchsmith.doctor.classify import GENERIC_TRIGGERS
from torchsmith.doctor.ruledb import (
    Rule,
    _parse_file,
    literal_runs,
    load_rules,
    needle,
    rule_by_id,
)
from torchsmith.doctor.scan import RuleMatcher
from torchsmith.errors import KnowledgeBaseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
LOGS = sorted(FIXTURES.glob("*.log"))


def _header(path: Path) -> tuple[dict[str, str], list[str]]:
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
def test_rule_ranks_first_on_its_report(log: Path) -> None:
    head, body = _header(log)
    diagnosis = diagnose(body)
    assert diagnosis.top is not None, f"nothing matched {head['source']}"
    assert diagnosis.top.rule_id == head["expect"], head["source"]
    assert diagnosis.top.evidence, "a finding shows the lines it rests on"
    for ev in diagnosis.top.evidence:
        assert body[ev.line - 1] == ev.text or ev.text in body[ev.line - 1]


@pytest.mark.parametrize("log", [p for p in LOGS if "--" not in p.stem], ids=lambda p: p.stem)
def test_first_fixture_comes_from_the_rules_source(log: Path) -> None:
    head, _ = _header(log)
    assert head["source"] == rule_by_id(log.stem).source


def test_every_rule_has_a_fixture() -> None:
    covered = {p.stem.split("--")[0] for p in LOGS}
    assert {r.id for r in load_rules()} <= covered


def test_at_least_150_distinct_failure_modes() -> None:
    ids = [r.id for r in load_rules()]
    assert len(ids) == len(set(ids)) >= 150


def test_sources_are_public_reports() -> None:
    notes = "repo:docs/measured/debian-source-builds.md"
    for rule in load_rules():
        assert rule.source.startswith("https://github.com/") or rule.source == notes, rule.id


def test_warning_rules_name_the_feature_they_switch_off() -> None:
    for rule in load_rules():
        assert (rule.severity == "warning") == (rule.feature is not None), rule.id


def test_every_pattern_is_reachable_by_the_prefilter() -> None:
    generic = [t.decode() for t in GENERIC_TRIGGERS]
    matcher = RuleMatcher(load_rules())
    extra = [t.decode() for t in matcher.triggers()[len(GENERIC_TRIGGERS) :]]
    for p in (p for rule in load_rules() for p in rule.patterns):
        runs = literal_runs(p)
        covered = any(g in run for g in generic for run in runs)
        assert covered or needle(p) in extra, p


@pytest.mark.parametrize(
    ("pattern", "runs"),
    [
        (r"directory \S+ is different", ["directory ", " is different"]),
        (r"ab?c", ["a", "c"]),
        (r"x\.y{2,3}z", ["x.", "z"]),
        (r"foo (bar|baz) qux", ["foo ", " qux"]),
        (r"a[bc]d\d+e", ["a", "d", "e"]),
        (r"a|b", []),
        (r"g\+\+: internal", ["g++: internal"]),
    ],
)
def test_literal_runs(pattern: str, runs: list[str]) -> None:
    assert literal_runs(pattern) == runs


def test_needle_is_the_longest_run() -> None:
    assert needle(r"CMake (?P<v>[\d.]+) or higher is required\.") == " or higher is required."
    assert needle(r"(a|b)") == ""


def _rule(**changes: object) -> Rule:
    base = rule_by_id("cmake-too-old").model_dump()
    base.update(changes)
    return Rule.model_validate(base)


def test_context_fit() -> None:
    rule = _rule(when={"cuda": ">=11.0,<12", "torch": "<2"})
    assert rule.context_fit({"cuda": "11.8"}) is True
    assert rule.context_fit({"cuda": "12.1", "torch": "1.13.0"}) is False
    assert rule.context_fit({"gcc": "12"}) is None
    assert rule.context_fit({"cuda": "not-a-version"}) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"patterns": ["(unclosed"]}, "does not compile"),
        ({"source": "a forum somewhere"}, "source"),
        ({"when": {"cuda": "eleven"}}, "version range"),
        ({"when": {"driver": ">=1"}}, "unknown component"),
        ({"patterns": ["(?i)segfault"]}, "no plain text"),
        ({"patterns": ["Segmentation fault|core dumped"]}, "no plain text"),
    ],
)
def test_bad_rules_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _rule(**change)


def test_bad_rule_file_names_file_and_rule() -> None:
    text = '[[rule]]\nid = "x-y"\ncategory = "c"\n'
    with pytest.raises(KnowledgeBaseError, match=r"bad\.toml: bad rule 'x-y'"):
        _parse_file("bad.toml", text)
    with pytest.raises(KnowledgeBaseError, match="not valid TOML"):
        _parse_file("bad.toml", "[[rule]\n")


def test_rule_file_with_a_pattern_without_literal_text_names_the_rule() -> None:
    row = rule_by_id("cmake-too-old").model_dump()
    lines = [f"{k} = {json.dumps(v)}" for k, v in row.items() if k != "patterns" and v]
    text = "[[rule]]\n" + "\n".join(lines) + '\npatterns = ["(?i)segfault"]\n'
    with pytest.raises(KnowledgeBaseError, match=r"bad\.toml: bad rule 'cmake-too-old'") as err:
        _parse_file("bad.toml", text)
    assert "no plain text" in err.value.message and "literal" in err.value.hint


NINJA = (FIXTURES / "ninja-build.txt").read_text(encoding="utf-8").splitlines()
TAIL = [
    "ninja: build stopped: subcommand failed.",
    "subprocess.CalledProcessError: Command '['cmake', '--build', '.']' returned non-zero "
    "exit status 1.",
]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_rule_still_ranks_first_inside_a_whole_build_log(log: Path) -> None:
    head, body = _header(log)
    diagnosis = diagnose([*NINJA, *NINJA, *body, *NINJA, *TAIL])
    assert diagnosis.top is not None and diagnosis.top.rule_id == head["expect"]
    first = diagnosis.top.evidence[0].line
    assert 2 * len(NINJA) < first <= 2 * len(NINJA) + len(body)


def test_measured_sources_are_committed_with_every_fixture_line() -> None:
    """A rule no public report backs cites a file of this repository (repo:PATH) that holds the
    measured log lines, with their provenance; its fixtures are lines of that file."""
    root = Path(__file__).parents[3]
    for log in LOGS:
        head, lines = _header(log)
        if not head["source"].startswith("repo:"):
            continue
        text = (root / head["source"].removeprefix("repo:")).read_text(encoding="utf-8")
        assert "**Provenance.**" in text
        for line in filter(None, (ln.strip() for ln in lines)):
            assert line in text, (log.name, line)
