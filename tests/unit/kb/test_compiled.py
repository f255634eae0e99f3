"""kb/data/compiled.json (pre-parsed TOML, for start-up time) must match the TOML files."""

from torchsmith import kb


def test_compiled_kb_is_current() -> None:
    assert kb._compiled() is not None, "kb/data/compiled.json is stale: run scripts/compile_kb.py"


def test_compiled_and_toml_give_the_same_records() -> None:
    assert kb._compiled() == kb._parse_toml_files()
