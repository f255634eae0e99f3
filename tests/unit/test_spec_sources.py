"""The spec's sources and their precedence: CLI > env > file > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.docgen import OPTIONS_DOC, SCHEMA_PATH, options_markdown, spec_schema
from torchsmith.errors import SpecError
from torchsmith.spec_sources import resolve_spec


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def test_defaults_only() -> None:
    r = resolve_spec()
    assert r.spec.accelerator == "cpu"
    assert r.spec.cuda is None
    assert r.origin("python") == "default"


def test_precedence_cli_over_env_over_file(tmp_path: Path) -> None:
    spec = _toml(
        tmp_path,
        'torch = "1.13.1"\npython = "3.8"\naccelerator = "11.7"\n[features]\ncudnn = false\n',
    )
    env = {"TORCHSMITH_PYTHON": "3.9", "TORCHSMITH_ACCELERATOR": "cu118"}
    r = resolve_spec(file=spec, env=env, cli={"python": "3.10"})
    assert r.spec.torch == "1.13.1" and r.origin("torch") == "file"
    assert r.spec.accelerator == "11.8" and r.origin("accelerator") == "env"
    assert r.spec.python == "3.10" and r.origin("python") == "cli"
    assert r.spec.features.cudnn is False and r.origin("features.cudnn") == "file"


def test_structured_merge_keeps_sibling_keys(tmp_path: Path) -> None:
    spec = _toml(tmp_path, "[features]\ncudnn = false\nmkl = true\n")
    r = resolve_spec(file=spec, env={"TORCHSMITH_FEATURES_MKL": "off"})
    assert r.spec.features.cudnn is False  # from the file, untouched by env
    assert r.spec.features.mkl is False  # env overrides only its own key


def test_env_lists_are_comma_separated() -> None:
    r = resolve_spec(env={"TORCHSMITH_GPUS": "8.6, RTX 4090,9.0+PTX"})
    assert r.spec.gpus == ("8.6", "RTX 4090", "9.0+PTX")


def test_unknown_keys_everywhere_reported_at_once_with_suggestions(tmp_path: Path) -> None:
    spec = _toml(tmp_path, 'torhc = "1.0.0"\n[features]\ncudn = true\n')
    with pytest.raises(SpecError) as info:
        resolve_spec(file=spec, env={"TORCHSMITH_PYTHN": "3.9"}, cli={"accelerator": "nonsense"})
    text = info.value.render()
    assert len(info.value.problems) == 4
    assert "did you mean 'torch'?" in text
    assert "did you mean 'features.cudnn'?" in text
    assert "did you mean 'TORCHSMITH_PYTHON'?" in text
    assert "neither 'cpu' nor a CUDA version" in text


def test_bad_toml_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="not valid TOML"):
        resolve_spec(file=_toml(tmp_path, "torch = \n"))
    with pytest.raises(SpecError, match="does not exist"):
        resolve_spec(file=tmp_path / "missing.toml")


def test_torchsmith_table_is_accepted(tmp_path: Path) -> None:
    r = resolve_spec(file=_toml(tmp_path, '[torchsmith]\ntorch = "2.5.1"\n'))
    assert r.spec.torch == "2.5.1"


def test_generated_schema_and_options_have_not_drifted() -> None:
    assert SCHEMA_PATH.read_text() == spec_schema(), "run scripts/gen_docs.py"
    assert OPTIONS_DOC.read_text() == options_markdown(), "run scripts/gen_docs.py"
