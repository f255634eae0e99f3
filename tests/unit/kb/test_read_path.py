"""The knowledge base's read path (issue 26): records of the precompiled form are frozen
records (``kb/models.py``) built with no pydantic, so no model is built at start-up. This test
is their validation: both definitions have the same fields and defaults, and every compiled
record, validated by its pydantic schema (``kb/schema.py``), equals the record the read path
builds."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from pydantic_core import PydanticUndefined

from torchsmith import kb
from torchsmith.kb.facts import render_fix
from torchsmith.kb.record import REQUIRED
from torchsmith.kb.view import load_view


def _default(default: Any) -> Any:
    if default is REQUIRED:
        return PydanticUndefined
    return default.make() if hasattr(default, "make") else default


@pytest.mark.parametrize("table", sorted(kb.TABLES))
def test_records_and_schema_have_the_same_fields_and_defaults(table: str) -> None:
    schema = kb.model_of(table).model_fields
    record = {n: _default(d) for n, d in kb.record_of(table).record_fields.items()}
    assert record == {n: f.get_default(call_default_factory=True) for n, f in schema.items()}
    assert kb.record_of(table).identity == kb.model_of(table).identity  # type: ignore[attr-defined]


@pytest.mark.parametrize("table", sorted(kb.TABLES))
def test_every_compiled_record_validates_to_what_the_read_path_builds(table: str) -> None:
    assert kb._compiled_current() is not None, "compiled.json is stale: run scripts/compile_kb.py"
    validated: tuple[Any, ...] = kb.validate(table, kb.model_of(table))
    built: tuple[Any, ...] = kb._parse(table, kb.record_of(table))
    if table == "fix":
        cudas = kb.load().cuda_releases
        validated = tuple(render_fix(f, cudas) for f in validated)
        built = tuple(render_fix(f, cudas) for f in built)
    assert [type(r) for r in built] == [kb.record_of(table)] * len(validated)
    assert [r.model_dump() for r in built] == [v.model_dump() for v in validated]


def test_nested_records_of_a_fix_are_records_too() -> None:
    from torchsmith.kb.models import FixApplies, PatchEdit

    fix = next(f for f in kb.load().fixes if f.edits)
    assert type(fix.applies) is FixApplies
    assert all(type(e) is PatchEdit for e in fix.edits)
    assert fix.edits[0].model_dump()  # what the planner does with them


def test_loading_imports_no_schema() -> None:
    """In a fresh import, ``load()`` imports no pydantic model of the knowledge base."""
    saved = dict(sys.modules)
    for name in [n for n in sys.modules if n.split(".")[0] == "torchsmith"]:
        del sys.modules[name]
    try:
        from torchsmith import kb as fresh

        fresh.load()
        assert "torchsmith.kb.schema" not in sys.modules
    finally:
        sys.modules.clear()
        sys.modules.update(saved)


def test_a_stale_compiled_form_falls_back_to_validating_the_toml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kb, "_compiled_current", lambda: None)
    monkeypatch.setattr(kb, "_read_all", kb._parse_toml_files)
    releases = kb._parse("release", kb.record_of("release"))
    assert releases == kb.load().releases


VIEWED = {"release": "releases", "cuda": "cuda_releases", "arch_list": "arch_lists",
          "gpu": "gpus", "option": "options", "debian": "debian_packages",
          "arch_suffix": "arch_suffixes", "arch_parser": "arch_parsers"}  # fmt: skip


@pytest.mark.parametrize("table", sorted(VIEWED))
def test_the_lookup_views_records_hold_the_validated_records_fields(table: str) -> None:
    """kb.view reads compiled.json with no pydantic: every field of every record, defaults
    included, is what the model validates (a model's new default needs compile_kb.py)."""
    validated = kb.validate(table, kb.model_of(table))
    viewed = getattr(load_view(), VIEWED[table])
    assert [type(r).__name__ for r in viewed] == ["Record"] * len(validated)
    assert [r.fields() for r in viewed] == [v.model_dump() for v in validated]


def test_a_view_record_is_read_only_and_says_what_it_lacks() -> None:
    rel = load_view().release("2.6.0")
    with pytest.raises(AttributeError, match="read-only"):
        rel.torch = "9.9.9"
    with pytest.raises(AttributeError, match="no_such_field"):
        _ = rel.no_such_field


def test_a_stale_compiled_form_makes_the_view_the_validated_kb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kb, "compiled_defaults", lambda: None)
    load_view.cache_clear()
    try:
        assert load_view() is kb.load()
    finally:
        load_view.cache_clear()
