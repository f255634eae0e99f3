"""What the doctor's tests share: what the rule tests of each round (test_round*_rules.py) ask of
one log excerpt, a fixture's log lines, and the doctor's scripts loaded as modules."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from torchsmith.doctor import diagnose

SCRIPTS = Path(__file__).parents[3] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def log_lines(path: Path) -> list[str]:
    """A fixture's log without its ``#@`` header (those lines are not the log's)."""
    text = path.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if not line.startswith("#@ ")]


def top_rule(text: str) -> str:
    """The id of the doctor's top finding for ``text`` ("none" when it finds nothing)."""
    top = diagnose(text.split("\n")).top
    return "none" if top is None else top.rule_id


def fires_as_wanted(text: str, want: str) -> bool:
    """``want`` is the rule that must be on top, or ``!rule``: the near miss it must not be."""
    got = top_rule(text)
    return got != want[1:] if want.startswith("!") else got == want
