"""README's exit-code list names every code the CLI can return (errors.py and doctor's)."""

from __future__ import annotations

import re
from pathlib import Path

from torchsmith import errors
from torchsmith.commands import doctor

README = Path(__file__).resolve().parents[2] / "README.md"


def _listed() -> set[int]:
    text = README.read_text(encoding="utf-8")
    start = text.index("Exit codes:")
    paragraph = text[start : text.index("\n\n", start)]
    return {int(n) for n in re.findall(r"\b(\d+)\b", paragraph)}


def _raised() -> set[int]:
    classes = [c for c in vars(errors).values() if isinstance(c, type)]
    codes = {c.exit_code for c in classes if issubclass(c, errors.TorchsmithError)}
    return codes - {errors.TorchsmithError.exit_code}  # the base class is never raised


def test_readme_lists_every_exit_code() -> None:
    doctor_codes = {doctor.EXIT_CAUSE, doctor.EXIT_UNKNOWN, doctor.EXIT_WARNINGS}
    assert _raised() | doctor_codes | {0} <= _listed()
