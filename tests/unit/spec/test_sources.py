"""The spec's sources and their precedence: CLI > env > file > defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchsmith.docgen import OPTIONS_DOC, SCHEMA_PATH, options_markdown, spec_schema
from torchsmith.errors import SpecError
from torchsmith.spec_sources import ENV_NOT_SPEC, resolve_spec


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


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("path:/nonexistent/pytorch", "/nonexistent/pytorch does not exist"),
        ("path:{file}", "is not a directory"),
        ("tarball:not-a-url", "not-a-url does not exist, and it is not an https:// URL either"),
        ("tarball:http://example.org/t.tar.gz", "only https:// URLs are fetched"),
        ("bundle:/nonexistent/torch-src.tar", "/nonexistent/torch-src.tar does not exist"),
        ("bundle:{dir}", "is a directory, not a file"),
    ],
)
def test_local_sources_are_checked_when_the_spec_is_read(
    tmp_path: Path, source: str, says: str
) -> None:
    (tmp_path / "f.tar").write_bytes(b"x")
    source = source.format(file=tmp_path / "f.tar", dir=tmp_path)
    with pytest.raises(SpecError) as info:
        resolve_spec(cli={"source": source})
    assert says in info.value.render()
    assert info.value.problems[0].field == "source"


def test_existing_local_sources_and_https_tarballs_pass(tmp_path: Path) -> None:
    (tmp_path / "t.tar.gz").write_bytes(b"x")
    https = "tarball:https://example.org/pytorch-v2.5.1.tar.gz#sha256=" + "0" * 64
    local = tmp_path / "t.tar.gz"
    for source in (f"path:{tmp_path}", f"tarball:{local}", f"bundle:{local}", https):
        assert resolve_spec(cli={"source": source}).spec.source == source


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\x7fELF\x02\x01\x01\x00\xff\xfe", "is not UTF-8 text"),
        (b"a = " + b"[" * 100_000, "nests arrays or tables too deeply"),
    ],
)
def test_binary_and_deeply_nested_spec_files_get_their_real_cause(
    tmp_path: Path, content: bytes, says: str
) -> None:
    spec = tmp_path / "s.toml"
    spec.write_bytes(content)
    with pytest.raises(SpecError) as info:
        resolve_spec(file=spec)
    assert says in info.value.render()
    assert "permissions" not in info.value.render()


def test_a_directory_given_as_spec_file_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        resolve_spec(file=tmp_path)
    assert f"spec file {tmp_path} is a directory" in info.value.render()


def test_the_test_harness_variables_are_not_build_spec_keys() -> None:
    """Every TORCHSMITH_* variable scripts/test reads is in ENV_NOT_SPEC: it is in the environment
    of every torchsmith command the integration tests run, and the spec refuses an unknown one
    (a rehearsal failed so when the disk log's variable was added)."""
    script = (Path(__file__).resolve().parents[3] / "scripts" / "test").read_text()
    names = set(re.findall(r"\bTORCHSMITH_[A-Z0-9_]+", script))
    assert names and names <= ENV_NOT_SPEC, names - ENV_NOT_SPEC
    for name in names:
        resolve_spec(env={name: "1"})
