"""The knowledge base's read path (issue 26): records of the precompiled form are built without
validation, so no model's validator is built at start-up. This test is the validation: every
compiled record, validated by its pydantic model, equals the record the read path builds."""

from __future__ import annotations

import sys

import pytest

from torchsmith import kb
from torchsmith.kb.facts import render_fix
from torchsmith.kb.models import Fix


@pytest.mark.parametrize("table", sorted(kb._TABLES))
def test_every_compiled_record_validates_to_what_the_read_path_builds(table: str) -> None:
    assert kb._compiled_current() is not None, "compiled.json is stale: run scripts/compile_kb.py"
    model = kb._TABLES[table]
    validated = kb.validate(table, model)
    built = kb._parse(table, model)
    if model is Fix:
        cudas = kb.load().cuda_releases
        validated = tuple(render_fix(f, cudas) for f in validated)  # type: ignore[arg-type]
        built = tuple(render_fix(f, cudas) for f in built)  # type: ignore[arg-type]
    assert built == validated
    assert [r.model_fields_set for r in built] == [r.model_fields_set for r in validated]


def test_nested_records_of_a_fix_are_models_too() -> None:
    fix = next(f for f in kb.load().fixes if f.edits)
    assert type(fix.applies).__name__ == "FixApplies"
    assert all(type(e).__name__ == "PatchEdit" for e in fix.edits)
    assert fix.edits[0].model_dump()  # what the planner does with them


def test_loading_builds_no_validator() -> None:
    """In a fresh import, ``load()`` leaves every record model's schema unbuilt."""
    saved = dict(sys.modules)
    for name in [n for n in sys.modules if n.split(".")[0] == "torchsmith"]:
        del sys.modules[name]
    try:
        from torchsmith import kb as fresh

        fresh.load()
        assert not [m.__name__ for m in fresh._TABLES.values() if m.__pydantic_complete__]
    finally:
        sys.modules.clear()
        sys.modules.update(saved)


def test_a_stale_compiled_form_falls_back_to_validating_the_toml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kb, "_compiled_current", lambda: None)
    monkeypatch.setattr(kb, "_read_all", kb._parse_toml_files)
    releases = kb._parse("release", kb._TABLES["release"])
    assert releases == kb.load().releases
