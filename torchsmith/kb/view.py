"""The knowledge base for looking things up (``torchsmith kb``), read with no pydantic at all:
records of the precompiled form (``kb/data/compiled.json``) as read-only attribute objects, each
field present (the defaults compiled.json records for the fields a data file leaves out).

The records are the ones :func:`torchsmith.kb.load` validates (a unit test compares every field
of every record); planning uses ``load()``, whose records are the pydantic models. The view holds
no fixes (they are for planning) and, where compiled.json is stale, is ``load()`` itself.
"""

from __future__ import annotations

import functools
from typing import Any

from torchsmith import kb


class Record:
    """One record: its fields as read-only attributes."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a knowledge-base record is read-only ({name})")

    def fields(self) -> dict[str, Any]:
        return dict(self._fields)


def _records(table: str, defaults: dict[str, dict[str, Any]]) -> tuple[Any, ...]:
    base = defaults.get(table, {})
    return tuple(Record({**base, **row}) for _, row in kb._read_table(table))


@functools.cache
def load_view() -> kb.KnowledgeBase:
    """The knowledge base's records for lookups (see the module's docstring)."""
    defaults = kb.compiled_defaults()
    if defaults is None:
        return kb.load()
    return kb.KnowledgeBase(
        releases=_records("release", defaults),
        cuda_releases=_records("cuda", defaults),
        arch_lists=_records("arch_list", defaults),
        gpus=_records("gpu", defaults),
        options=_records("option", defaults),
        fixes=(),
        debian_packages=_records("debian", defaults),
        arch_suffixes=_records("arch_suffix", defaults),
        arch_parsers=_records("arch_parser", defaults),
    )
