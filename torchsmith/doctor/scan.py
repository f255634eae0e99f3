"""Diagnose a build log: stream it, separate the error blocks, match the rules, rank the causes.

``diagnose(path_or_lines, context=None) -> Diagnosis`` is what ``torchsmith build`` calls when a
build fails; ``warnings_that_changed_result(lines)`` is what it calls after a build succeeds.
``context`` maps components to versions (``{"torch": "1.13.0", "cuda": "11.8", "gcc": "12"}``,
optionally ``"stage": "compile"``); rules whose version ranges do not hold rank lower.

Ranking, best first: a match inside the first real error block beats everything; then errors
beat warnings (a feature quietly switched off explains a failure only when nothing else does);
then the rule's specificity (``priority``), its fit with the context, and earlier lines. A rule
that explains another (``Rule.explains``: the cause of that symptom) ranks above it when both
match.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from torchsmith.doctor.blocks import BlockBuilder
from torchsmith.doctor.classify import GENERIC_TRIGGERS, LineInfo, classify
from torchsmith.doctor.components import component_names
from torchsmith.doctor.fixwhen import fix_for
from torchsmith.doctor.generic import diagnose_generic
from torchsmith.doctor.linear import PatternSet, compile_linear
from torchsmith.doctor.models import Diagnosis, ErrorBlock, Evidence, Finding, TypedError
from torchsmith.doctor.ruledb import Rule, literal_runs, load_rules, needle
from torchsmith.doctor.similar import nearest_case, similar_finding
from torchsmith.doctor.stream import Candidate, Scanner, chunks_of
from torchsmith.doctor.structure import normalise, read_block, wrapped

LogSource = str | os.PathLike[str] | Iterable[str]
MAX_EVIDENCE = 3


@dataclass
class _Hits:
    rule: Rule
    evidence: list[Evidence] = field(default_factory=list)
    count: int = 0
    blocks: set[int] = field(default_factory=set)


class RuleMatcher:
    """All rules' patterns as one RE2 set: one linear pass over a line tells every rule that
    matches it. The scanner's triggers are the generic ones plus, for a pattern none of them
    would catch, its own longest literal text."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.owners: list[Rule] = []
        patterns: list[str] = []
        extra: set[bytes] = set()
        for rule in rules:
            for p in rule.patterns:
                self.owners.append(rule)
                patterns.append(p)
                if not any(g.decode() in run for run in literal_runs(p) for g in GENERIC_TRIGGERS):
                    extra.add(needle(p).encode())
        self._set = PatternSet(patterns)
        self._extra = tuple(sorted(extra - set(GENERIC_TRIGGERS)))

    def triggers(self) -> tuple[bytes, ...]:
        """Generic triggers plus the needle of any pattern no generic trigger would catch."""
        return (*GENERIC_TRIGGERS, *self._extra)

    def match(self, text: str) -> list[Rule]:
        found: dict[str, Rule] = {}
        for index in self._set.matches(text):
            found.setdefault(self.owners[index].id, self.owners[index])
        return list(found.values())

    def match_any(self, text: str) -> list[Rule]:
        """The rules matching the line as printed or in gcc's wording (:func:`normalise`)."""
        found = {r.id: r for r in self.match(text)}
        normal = normalise(text)
        if normal != text:
            found.update((r.id, r) for r in self.match(normal))
        return list(found.values())


@functools.cache
def _default_matcher() -> RuleMatcher:
    """The matcher of the shipped rules, built once (compiling ~300 patterns takes ~25 ms)."""
    return RuleMatcher(load_rules())


def diagnose(
    path_or_lines: LogSource,
    context: Mapping[str, str] | None = None,
    rules: Iterable[Rule] | None = None,
) -> Diagnosis:
    """Read a whole log (a path, or an iterable of lines) and say what went wrong."""
    matcher = _default_matcher() if rules is None else RuleMatcher(rules)
    scanner = Scanner(matcher.triggers())
    builder = BlockBuilder()
    hits: dict[str, _Hits] = {}
    cuts: list[str] = []
    last = (0, "")
    for cand in scanner.candidates(chunks_of(path_or_lines, cuts.append)):
        info, matched = _read_line(matcher, cand, last)
        last = (cand.number, cand.text)
        builder.feed(cand, info)
        _record(hits, matched, cand.number, cand.text, builder.open_index)
    builder.finish()
    error = read_block(builder.blocks[0]) if builder.blocks else None
    if error is not None and error.kind == "cmake":
        _record_joined(hits, matcher.match(error.message), builder.blocks[0], error.line)
    block = builder.blocks[0] if builder.blocks else None
    texts = [e.text for e in (*block.lines, *block.context)] if block else []
    findings = _rank(hits.values(), context or {}, scanner.lines, texts)
    return Diagnosis(
        findings=_with_generic(findings, error, texts),
        first_error=builder.blocks[0] if builder.blocks else None,
        error=error,
        error_blocks=builder.count,
        lines_scanned=scanner.lines,
        bytes_scanned=scanner.bytes,
        cut_short=cuts[0] if cuts else None,
    )


# a REPL echo whose value is the failure: `>>> torch.cuda.is_available()` / `Out[2]: False`
_REPL_CALL = compile_linear(r"\bis_available\(\)\s*$")
_REPL_FALSE = compile_linear(r"^\s*(?:Out\[\d+\]:\s*)?False\s*$")


def _read_line(
    matcher: RuleMatcher, cand: Candidate, last: tuple[int, str]
) -> tuple[LineInfo, list[Rule]]:
    """A candidate line's class and the rules matching it, also as one message with the line
    before it (a diagnostic wrapped after its 'error:', clang and MSVC) or after it (a REPL
    call whose printed value is the failure)."""
    info = classify(cand.text)
    matched = matcher.match_any(cand.text) if info.kind != "command" else []
    join = wrapped(last[1], cand.text) if last[0] == cand.number - 1 else None
    if join is None and _REPL_CALL.search(cand.text) is not None:
        after = cand.context(0, 1)[1:]
        if after and _REPL_FALSE.search(after[0][1]) is not None:
            join, info = f"{cand.text.rstrip()} {after[0][1].strip()}", LineInfo("soft")
    if join is not None:
        matched = list({r.id: r for r in (*matched, *matcher.match_any(join))}.values())
    if info.kind == "soft" and any(r.severity == "warning" for r in matched):
        info = LineInfo("other")  # a warning a rule knows (a feature switched off)
    return info, matched


def _with_generic(
    findings: list[Finding], error: TypedError | None, block: list[str]
) -> tuple[Finding, ...]:
    """The generic diagnosis of the first error's class, ranked below every specific rule
    (a warning that explains the failure, a feature switched off, is more specific)."""
    if error is None:
        return tuple(findings)
    score = min((f.score for f in findings), default=2.0) - 1.0
    generic = diagnose_generic(error, block).model_copy(update={"score": round(score, 2)})
    like = None if findings else nearest_case(error, block)
    if like is not None:
        return (similar_finding(like, error, block, score + 0.5), generic)
    return (*(_with_components(f, error, generic) for f in findings), generic)


def _with_components(finding: Finding, error: TypedError, generic: Finding) -> Finding:
    """A rule that matched the first error's own line learns the components the structural
    reader found there (the library a generic 'shared library missing' rule names belongs
    to torch, OpenMP, Python, ...)."""
    if finding.generic or all(e.line != error.line for e in finding.evidence):
        return finding
    extra = [t for t in generic.tags if t in component_names() and t not in finding.tags]
    return finding.model_copy(update={"tags": (*finding.tags, *extra)}) if extra else finding


def warnings_that_changed_result(
    lines: LogSource, context: Mapping[str, str] | None = None
) -> tuple[Finding, ...]:
    """After a successful build: the warnings that mean a feature was quietly switched off."""
    return diagnose(lines, context).warnings()


def _record(
    hits: dict[str, _Hits], rules: list[Rule], number: int, text: str, block: int | None
) -> None:
    for rule in rules:
        entry = hits.setdefault(rule.id, _Hits(rule))
        entry.count += 1
        if len(entry.evidence) < MAX_EVIDENCE:
            entry.evidence.append(Evidence(line=number, text=text))
        if block is not None:
            entry.blocks.add(block)


def _record_joined(hits: dict[str, _Hits], rules: list[Rule], block: ErrorBlock, line: int) -> None:
    """Rules that match the first error's message joined over its wrapped lines: they belong
    to the first block; the evidence is the message's first line, as printed."""
    printed = next((e.text for e in (*block.context, *block.lines) if e.line == line), "")
    for rule in rules:
        entry = hits.setdefault(rule.id, _Hits(rule))
        entry.blocks.add(0)
        if not entry.evidence:
            entry.count += 1
            entry.evidence.append(Evidence(line=line, text=printed))


def _rank(
    all_hits: Iterable[_Hits], context: Mapping[str, str], total: int, block: list[str]
) -> list[Finding]:
    hits = list(all_hits)
    scores = _explained({h.rule.id: _score(h, context, total) for h in hits}, hits)
    findings = [_finding(h, context, scores[h.rule.id], block) for h in hits]
    return sorted(findings, key=lambda f: (-f.score, f.evidence[0].line))


def _score(hits: _Hits, context: Mapping[str, str], total: int) -> float:
    rule = hits.rule
    score = rule.priority * 0.3 + (30.0 if rule.severity == "error" else 0.0)
    score += 100.0 if 0 in hits.blocks else (40.0 if hits.blocks else 0.0)
    score += {True: 20.0, False: -80.0, None: 0.0}[rule.context_fit(context)]
    score += 10.0 if context.get("stage") == rule.stage else 0.0
    return score - 5.0 * hits.evidence[0].line / max(total, 1)


def _explained(scores: dict[str, float], hits: list[_Hits]) -> dict[str, float]:
    """A cause outranks the symptoms it explains (``Rule.explains``) wherever they appear in
    the log: the symptom is often the louder, earlier line (a kernel launch failing before the
    warning that says why), but the cause is what to fix."""
    for entry in hits:
        effects = [scores[i] for i in entry.rule.explains if i in scores]
        if effects and scores[entry.rule.id] > 0:
            scores[entry.rule.id] = max(scores[entry.rule.id], max(effects) + 1.0)
    return scores


def _finding(hits: _Hits, context: Mapping[str, str], score: float, block: list[str]) -> Finding:
    return Finding.of(
        hits.rule,
        fix=fix_for(hits.rule, [*(e.text for e in hits.evidence), *block]),
        evidence=tuple(hits.evidence),
        count=hits.count,
        in_first_error=0 in hits.blocks,
        context_fit=hits.rule.context_fit(context),
        score=round(score, 2),
    )
