"""The known case most like a log that no rule matched: a nearest-neighbour search over the
doctor's labelled cases (``cases.json``: the rule fixtures, the grading set and the scored blind
rounds, each a real public log with the rule that explains it).

A rule matches one wording; a user's log often says the same thing in other words (another
tool's phrasing, a wrapped line, a different message around the same cause). When no rule
matched and the structural reader could only class the error as a Python exception, a pip or
command failure or an unrecognised line, the error block's words are compared with every case's
(TF-IDF over words, cosine similarity) and the closest case's rule is offered as a *generic*
finding: never the build's cause (``Diagnosis.cause``), always saying how alike the two logs are
and which case it is. The cases are written by ``scripts/gen_doctor_cases.py`` from the fixtures;
a unit test keeps this file equal to what the script writes.

Only RE2 expressions touch log text (:mod:`torchsmith.doctor.linear`); a line is capped first.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

from torchsmith.doctor.fixwhen import fix_for
from torchsmith.doctor.generic import knows_message
from torchsmith.doctor.linear import capped, compile_linear
from torchsmith.doctor.models import Evidence, Finding, TypedError
from torchsmith.doctor.ruledb import rule_by_id

# the error classes whose generic diagnosis says little: only these ask for the nearest case (a
# pip failure names its package, a missing module or a failed command its tool, and the class's
# diagnosis then says more than a case of another package would)
WEAK_KINDS = frozenset({"other", "python"})
# how alike (cosine) the nearest case must be, how much less alike the nearest case of any other
# rule, and how many words the two must share: chosen on blind rounds 12-20 (train data: each
# round searched among the cases known at its freeze) before round 21 was collected. A first
# sketch over every generic class gave 36 more right by label and 8 fewer on their 351 logs with
# no margin and no minimum, 24 and none with these; this module, on the two weak classes only,
# gives 12 more and none fewer (scripts/eval_doctor_cases.py, docs/measured/)
THRESHOLD = 0.30
MARGIN = 0.10
MIN_SHARED = 4

# a word is what r"[a-z][a-z0-9_+]{2,}" finds: each run of [a-z0-9_+] less its leading digits,
# "_" and "+", when three characters or more remain. Read with bytes.translate and split, not
# an RE2 findall: google-re2's findall runs Python code per match, and a hostile line of
# thousands of short words made it most of the doctor's time on that log
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_+")
_NOT_WORD = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
_PATH = compile_linear(r"(?:[\w.+-]*/)+")
_FRAME = compile_linear(r'^\s*File "[^"]*", line \d+')
_STOP = frozenset(
    {"the", "and", "for", "with", "from", "this", "that", "not", "are", "was", "were", "have"}
    | {"has", "you", "your", "can", "could", "line", "file", "error", "errors"}
)


def terms(lines: Iterable[str]) -> Counter[str]:
    """The words of ``lines`` as the search counts them: lower case, a path's directories
    dropped (its file name kept), words of three characters or more, a few stop words left out,
    and a traceback's frames (``File "…", line N`` and the code line under it) skipped: every
    traceback has them, whatever its cause."""
    counts: Counter[str] = Counter()
    after_frame = False
    for line in map(capped, lines):
        is_frame = _FRAME.search(line) is not None
        skip = is_frame or (after_frame and line.startswith("    "))
        after_frame = is_frame
        if skip:
            continue
        text = _PATH.sub(" ", line.lower())
        counts.update(w for w in _words(text) if w not in _STOP)
    return counts


def _words(text: str) -> Iterator[str]:
    runs = text.encode("ascii", "replace").translate(_NOT_WORD).split()
    for run in runs:
        word = run.lstrip(b"0123456789_+")
        if len(word) >= 3:
            yield word.decode()


@dataclass(frozen=True)
class Case:
    rule: str
    case: str  # the fixture it was read from
    source: str  # the public thread the log was copied from
    weights: Mapping[str, float]


@dataclass(frozen=True)
class Match:
    rule: str
    similarity: float
    case: str
    source: str


class CaseBase:
    """The labelled cases as unit TF-IDF vectors."""

    def __init__(self, cases: list[dict[str, object]]) -> None:
        self._df: Counter[str] = Counter()
        for c in cases:
            self._df.update(_counts(c).keys())
        self._n = len(cases)
        self.cases = [
            Case(str(c["rule"]), str(c["case"]), str(c["source"]), self.vector(_counts(c)))
            for c in cases
        ]

    def vector(self, counts: Mapping[str, int]) -> dict[str, float]:
        """Sublinear term frequency times smoothed IDF, scaled to unit length; words no case
        has carry no weight."""
        raw = {
            w: (1 + math.log(k)) * math.log((self._n + 1) / (self._df[w] + 1))
            for w, k in counts.items()
            if self._df[w]
        }
        norm = math.sqrt(sum(x * x for x in raw.values())) or 1.0
        return {w: x / norm for w, x in raw.items()}

    def nearest(self, lines: Iterable[str]) -> Match | None:
        """The case most like ``lines`` (cosine similarity), or None when it is less alike than
        :data:`THRESHOLD`, a case of another rule is nearly as alike (:data:`MARGIN`: the log
        does not say which) or the two share fewer than :data:`MIN_SHARED` words (a short line
        alike by one rare word)."""
        query = self.vector(terms(lines))
        best: dict[str, tuple[float, Case]] = {}
        for case in self.cases:
            sim = sum(x * case.weights.get(w, 0.0) for w, x in query.items())
            if sim > 0 and sim > best.get(case.rule, (0.0, case))[0]:
                best[case.rule] = (sim, case)
        ranked = sorted(best.values(), key=lambda b: -b[0])
        if not ranked or (len(ranked) > 1 and ranked[0][0] - ranked[1][0] < MARGIN):
            return None
        sim, case = ranked[0]
        if sim < THRESHOLD or len(query.keys() & case.weights.keys()) < MIN_SHARED:
            return None
        return Match(case.rule, round(min(sim, 1.0), 3), case.case, case.source)


def _counts(case: Mapping[str, object]) -> dict[str, int]:
    raw = case["terms"]
    return {str(w): int(k) for w, k in raw.items()} if isinstance(raw, dict) else {}


@functools.cache
def case_base() -> CaseBase:
    """The shipped cases, read once (only when a log needs them)."""
    text = (resources.files("torchsmith.doctor") / "cases.json").read_text(encoding="utf-8")
    return CaseBase(json.loads(text)["cases"])


def nearest_case(
    error: TypedError, block: Sequence[str], base: CaseBase | None = None
) -> Match | None:
    """The known case for ``error`` (the first error, ``block`` its block's lines) when its class
    is a weak one that no message fact or wording class knows, and a case of ``base`` (the
    shipped cases by default) is alike enough; else None."""
    if error.kind not in WEAK_KINDS or knows_message(error, block):
        return None
    return (base or case_base()).nearest([error.message, *block])


def case_record(rule: str, case: str, source: str, lines: Iterable[str]) -> dict[str, object]:
    """One case as ``cases.json`` holds it (what :class:`CaseBase` reads): the rule that explains
    the log, where the log is, its public source and its words."""
    words = dict(sorted(terms(lines).items()))
    return {"rule": rule, "case": case, "source": source, "terms": words}


def similar_finding(
    match: Match, error: TypedError, block: Sequence[str], score: float
) -> Finding:
    """The rule of the nearest case as a generic finding: its cause and fix, said to come from
    a log that looks alike, not from a match of the rule's own patterns."""
    rule = rule_by_id(match.rule)
    alike = f"{match.similarity:.0%} alike"
    return Finding.of(
        rule,
        title=f"most like a known case: {rule.title}",
        cause=f"No rule matched this log's wording, but its error reads most like a known "
        f"case of '{rule.id}' ({alike}; {match.source}): {rule.cause}",
        fix=fix_for(rule, [error.message, *block]),
        evidence=(Evidence(line=error.line, text=error.message),),
        count=1,
        in_first_error=True,
        score=round(score, 2),
        generic=True,
        similar_case=f"{match.source} ({match.case}, {alike})",
    )
