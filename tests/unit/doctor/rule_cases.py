"""What the rule tests of each round (test_round*_rules.py) ask of one log excerpt."""

from __future__ import annotations

from torchsmith.doctor import diagnose


def top_rule(text: str) -> str:
    """The id of the doctor's top finding for ``text`` ("none" when it finds nothing)."""
    top = diagnose(text.split("\n")).top
    return "none" if top is None else top.rule_id


def fires_as_wanted(text: str, want: str) -> bool:
    """``want`` is the rule that must be on top, or ``!rule``: the near miss it must not be."""
    got = top_rule(text)
    return got != want[1:] if want.startswith("!") else got == want
