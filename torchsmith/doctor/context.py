"""Versions to rank rules by, read from a build manifest or plan (JSON or TOML).

The doctor only needs a flat ``{"torch": "1.13.0", "cuda": "11.8", "gcc": "12", ...}``; this
module finds those values wherever a manifest keeps them: at the top, or inside ``plan``,
``toolchain`` or ``versions`` tables, as plain strings or as plan decisions
(``{"value": ..., "origin": ..., "reason": ...}``). A plan's ``compiler`` ("gcc-11") gives gcc.
"""

from __future__ import annotations

import json
import re
import sys
from collections import deque
from pathlib import Path
from typing import Any

from torchsmith.doctor.ruledb import CONTEXT_KEYS
from torchsmith.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_VERSION = re.compile(r"\d+(\.\d+)*")


def load_context(path: Path) -> dict[str, str]:
    """The versions a manifest (``.json``) or plan/spec (``.toml``) names."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: '[[[[…' (N16)
        raise UsageError(
            f"cannot read the manifest {path}: {exc or type(exc).__name__}",
            "give a torchsmith manifest (JSON) or plan/spec (TOML)",
        ) from exc
    if not isinstance(data, dict):
        raise UsageError(  # a hint too: found by tests/unit/test_input_fuzz.py ('null')
            f"the manifest {path} is not a table of values",
            "give a torchsmith manifest (JSON) or plan/spec (TOML)",
        )
    return context_from(data)


def context_from(data: dict[str, Any]) -> dict[str, str]:
    """Breadth-first through nested tables; the shallowest value of each component wins."""
    found: dict[str, str] = {}
    queue: deque[tuple[dict[str, Any], int]] = deque([(data, 0)])
    while queue:
        table, depth = queue.popleft()
        for key, value in table.items():
            _take(found, key, _plain(value))
            if isinstance(value, dict) and depth < 3:
                queue.append((value, depth + 1))
    return found


def _plain(value: Any) -> str | None:
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _take(found: dict[str, str], key: str, value: str | None) -> None:
    if value is None:
        return
    if key == "compiler" and value.startswith("gcc"):
        key, value = "gcc", value.removeprefix("gcc").lstrip("-")
    match = _VERSION.search(value)
    if key in CONTEXT_KEYS and key not in found and match:
        found[key] = match.group(0)
