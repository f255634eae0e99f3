"""Issue 28 item 4 (trial E01, E15-E18): one empty-value check for every layer — a
``TORCHSMITH_*`` variable and a spec key are refused where the flag is, never taken as unset."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import SpecError
from torchsmith.spec_sources import resolve_spec


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("TORCHSMITH_TARGETS", ",", "an empty item"),  # E15: was a whole build
        ("TORCHSMITH_TORCH", "", "an empty value"),  # E16: was the newest release
        ("TORCHSMITH_GPUS", "8.6,,9.0", "an empty item"),  # E01: the item was dropped
        ("TORCHSMITH_OUTPUT_DIR", " ", "an empty value"),  # E17: output_dir ""
        ("TORCHSMITH_PYTHON", "", "an empty value"),  # E18: was unset
        ("TORCHSMITH_FEATURES_MKL", "", "an empty value"),
        ("TORCHSMITH_COMPANIONS", "torchvision,", "an empty item"),
    ],
)
def test_a_blank_variable_is_refused_naming_it(name: str, text: str, said: str) -> None:
    with pytest.raises(SpecError, match=said) as caught:
        resolve_spec(env={name: text})
    assert name in str(caught.value)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    "line", ['torch = ""', 'output_dir = " "', 'outputs = ["wheel", ""]', 'cache = { dir = "" }']
)
def test_a_blank_spec_key_is_refused(tmp_path: Path, line: str) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(SpecError, match=rf"in {spec}: an empty"):
        resolve_spec(file=spec)


def test_one_problem_per_blank_key_not_two() -> None:
    """The blank key is removed before validation, so the model does not report it again."""
    with pytest.raises(SpecError) as caught:
        resolve_spec(env={"TORCHSMITH_PYTHON": ""})
    assert len(caught.value.problems) == 1


def test_none_and_real_values_still_pass() -> None:
    resolved = resolve_spec(
        env={
            "TORCHSMITH_PYTHON": "none",
            "TORCHSMITH_GPUS": "8.6, 9.0",
            "TORCHSMITH_TORCH": "2.5.1",
        }
    )
    assert resolved.spec.python is None
    assert resolved.spec.gpus == ("8.6", "9.0")
    assert resolved.origin("gpus") == "env"
