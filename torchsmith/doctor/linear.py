"""Linear-time matching for the doctor: every regular expression it runs on log text is RE2's
(``google-re2``: an automaton, no backtracking), so no line, however crafted, makes it slow.

* :class:`TriggerFinder`: all trigger strings as one RE2 alternation, searched once per chunk —
  one pass, whatever the number of triggers.
* :class:`PatternSet`: all rule patterns as one ``RE2::Set``: one pass per candidate line says
  which patterns match.
* :func:`capped`: a line is cut at :data:`MAX_LINE` characters before anything looks at it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import re2

MAX_LINE = 4096  # characters of a line that classification and rules look at


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    return options


def check_linear(pattern: str) -> str | None:
    """None when RE2 compiles ``pattern`` (so it runs in linear time), else RE2's reason."""
    try:
        re2.compile(pattern, options=_options())
    except re2.error as exc:
        return str(exc)
    return None


def compile_linear(pattern: str) -> re2._Regexp:
    """An RE2 regular expression (linear time); a pattern RE2 refuses raises ``re2.error``."""
    return re2.compile(pattern, options=_options())


def capped(text: str) -> str:
    """The first :data:`MAX_LINE` characters of a line."""
    return text if len(text) <= MAX_LINE else text[:MAX_LINE]


class TriggerFinder:
    """The starts of the lines of a chunk that hold any trigger, in order, in one pass."""

    def __init__(self, triggers: Iterable[bytes]) -> None:
        alternatives = sorted({t for t in triggers if t})
        options = _options()
        options.encoding = re2.Options.Encoding.LATIN1
        self._any = re2.compile(b"|".join(re2.escape(t) for t in alternatives), options=options)
        self._empty = not alternatives

    def line_starts(self, chunk: bytes) -> Iterator[int]:
        if self._empty:
            return
        pos = 0
        while (match := self._any.search(chunk, pos)) is not None:
            start = chunk.rfind(b"\n", 0, match.start()) + 1
            yield start
            end = chunk.find(b"\n", match.end())
            if end == -1:
                return
            pos = end + 1


class PatternSet:
    """Many patterns, one pass: ``matches(text)`` gives the indices of those found in text."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._set = re2.Set.SearchSet(_options())
        for pattern in patterns:
            self._set.Add(pattern)
        self._set.Compile()
        self._empty = not patterns

    def matches(self, text: str) -> list[int]:
        if self._empty:
            return []
        return sorted(self._set.Match(text) or ())
