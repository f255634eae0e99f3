"""A rule's fix, put in the case the log names (``Rule.fix_when``).

Most rules' fixes list the alternatives in the order their reports were answered; where the log
itself says which case it is — the GPU's name or architecture next to ``no kernel image``, a
container, the package an undefined symbol comes from — that case's fix goes first and the
rule's general fix follows it. Patterns are RE2 (linear time) over the finding's evidence and
the first error block's lines, each cut at ``MAX_LINE``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import re2

from torchsmith.doctor.linear import capped, compile_linear
from torchsmith.doctor.ruledb import Rule


@functools.cache
def _compiled(pattern: str) -> re2._Regexp:
    return compile_linear(pattern)


def fix_for(rule: Rule, texts: Iterable[str]) -> str:
    """The rule's fix, led by the first ``fix_when`` case whose pattern the texts show."""
    if not rule.fix_when:
        return rule.fix
    lines = [capped(t) for t in texts]
    for case in rule.fix_when:
        regex = _compiled(case.match)
        if any(regex.search(line) is not None for line in lines):
            return f"{case.fix} Otherwise: {rule.fix}"
    return rule.fix
