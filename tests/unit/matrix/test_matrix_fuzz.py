"""Issue 27 (security review f1b4bec N16): mutations of the real example matrix spec, fixed
seed, through load_matrix and a few through `torchsmith matrix`: every one loads or is a
torchsmith error (a clear exit code), never another exception (exit 70)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import TorchsmithError
from torchsmith.matrix.model import load_matrix

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "matrix-seed-002.toml"
PIECES = ["[", "]", "[[", '"', "'''", "=", "\n", ",", "{", "}", "\x00", "\\u0000", "1e9999",
          "-1", "true", "[[[[[[[[", "${{ x }}", "\r\n", "é", "#"]  # fmt: skip


def _mutated(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(text) + 1)
        match rng.randrange(3):
            case 0:
                text = text[:at] + rng.choice(PIECES) + text[at:]
            case 1:
                text = text[:at] + text[at + rng.randint(1, 40) :]
            case _:
                lines = text.splitlines(keepends=True)
                if lines:
                    line = rng.choice(lines)
                    text = text[:at] + line + text[at:]
    return text


def test_mutated_matrix_specs_load_or_are_torchsmith_errors(tmp_path: Path) -> None:
    rng, text = random.Random(27), EXAMPLE.read_text()
    path, outcomes = tmp_path / "m.toml", {"loaded": 0, "refused": 0}
    for _ in range(300):
        path.write_text(_mutated(rng, text), encoding="utf-8")
        try:
            load_matrix(path)
        except TorchsmithError:
            outcomes["refused"] += 1
        else:
            outcomes["loaded"] += 1
    assert min(outcomes.values()) >= 30, outcomes  # both kinds: the mutations reach the checks


@pytest.mark.parametrize("seed", range(5))
def test_mutated_matrix_specs_never_exit_70(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "m.toml"
    path.write_text(_mutated(random.Random(seed), EXAMPLE.read_text()), encoding="utf-8")
    assert main(["matrix", "--spec", str(path), "--emit", "bake", "--output", "-"]) != 70
