"""The combinations of a matrix: the product of its axes over the base spec, each one carried
to its CI job as ``TORCHSMITH_*`` environment variables (the spec's own env layer, so the job
needs no file from the repository) and validated here exactly as the job will read it."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith.errors import Problem, SpecError
from torchsmith.matrix.model import MatrixSpec
from torchsmith.spec_sources import (
    ENV_PREFIX,
    ResolvedSpec,
    _flatten,
    env_name,
    from_file,
    resolve_spec,
    spec_keys,
)

UNSAFE = ("${{", "\n", "\r")  # a CI expression or a new line would be executed, not read


@dataclass(frozen=True)
class Combination:
    id: str
    axes: dict[str, Any]
    env: dict[str, str]
    spec: ResolvedSpec


def env_text(value: Any) -> str:
    """A spec value as the text its ``TORCHSMITH_*`` variable holds (spec_sources._coerce_text
    reads it back: commas for lists, true/false, 'none')."""
    if isinstance(value, (list, tuple)):
        return ",".join(env_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


def _slug(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "-", env_text(value).lower()).strip("-") or "x"


def _base_layer(matrix: MatrixSpec, folder: Path) -> tuple[dict[str, Any], list[Problem]]:
    flat: dict[str, Any] = {}
    problems: list[Problem] = []
    if matrix.spec:
        flat, problems = from_file(folder / matrix.spec)
    flat.update(_flatten(matrix.base, "the matrix's [base]"))
    return flat, problems


def _key_problems(keys: list[str], where: str) -> list[Problem]:
    known = spec_keys()
    return [
        Problem(f"{key!r} in {where} is not a build-spec key", "see `torchsmith plan --help`")
        for key in keys
        if key not in known
    ]


def _cache_env_problems(matrix: MatrixSpec) -> list[Problem]:
    """A TORCHSMITH_* name in [cache.env] is read by the spec's env layer: it must be a key."""
    known = {env_name(k) for k in spec_keys()}
    return [
        Problem(f"[cache.env] {name} is no build-spec variable", "see `torchsmith plan --help`")
        for name in matrix.cache.env
        if name.startswith(ENV_PREFIX) and name not in known
    ]


def _is_table(value: Any) -> bool:
    items = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(item, Mapping) for item in items)


def _table_problems(values: Mapping[str, Any]) -> list[Problem]:
    """Tables (``[[images]]``) have no ``TORCHSMITH_*`` form: refused, never dropped."""
    return [
        Problem(
            f"{key!r} is a table: a CI job gets its spec as TORCHSMITH_* variables, which hold "
            "plain values and lists only",
            f"set {key} in the matrix's [base] (e.g. {key} = []) or build it outside the matrix",
        )
        for key, value in values.items()
        if _is_table(value)
    ]


def _value_problems(env: Mapping[str, str]) -> list[Problem]:
    return [
        Problem(f"{name}={text[:60]!r} holds a CI expression or a new line", "give a plain value")
        for name, text in env.items()
        if any(u in text for u in UNSAFE)
    ]


def _lossy(from_env: ResolvedSpec, values: Mapping[str, Any]) -> list[Problem]:
    """Keys whose value the job would read differently from the matrix (a list element with a
    comma, say): refused, since the job would build something else than was planned here."""
    direct = resolve_spec(cli=values).spec.model_dump()
    read = from_env.spec.model_dump()
    return [
        Problem(f"{key}: {direct[key]!r} reaches the job as {read[key]!r}", "drop the comma")
        for key in sorted(direct)
        if direct[key] != read[key]
    ]


def _combination(
    index: int, matrix: MatrixSpec, flat: dict[str, Any], axes: dict[str, Any]
) -> Combination:
    values = {**flat, **axes}
    # an empty list has no variable text (TORCHSMITH_X= is refused as blank): left out, the job
    # reads the key's default, and _lossy refuses the combination where that differs
    env = {env_name(k): env_text(v) for k, v in sorted(values.items()) if v not in ([], ())}
    problems = _value_problems(env) + _table_problems(axes)
    ident = "-".join([matrix.name, *(_slug(v) for v in axes.values())])[:90]
    try:
        spec = resolve_spec(env=env)
        problems += _lossy(spec, values)
    except SpecError as exc:
        problems += [
            Problem(f"combination {ident}: {p.what}", p.fix, p.field) for p in exc.problems
        ]
        spec = None
    if problems or spec is None:
        raise SpecError(problems, "fix the matrix so that every combination is a valid spec")
    return Combination(f"{ident}-{index}" if index else ident, axes, env, spec)


def combinations(matrix: MatrixSpec, matrix_path: Path) -> list[Combination]:
    """Every combination, validated; SpecError lists every problem of the first bad one."""
    flat, problems = _base_layer(matrix, matrix_path.parent)
    problems += _key_problems(list(matrix.axes), "[axes]") + _key_problems(list(flat), "the base")
    problems += _cache_env_problems(matrix) + _table_problems(flat)
    if problems:
        raise SpecError(problems, "fix the matrix's base spec")
    names = list(matrix.axes)
    made: list[Combination] = []
    seen: set[str] = set()
    for values in itertools.product(*matrix.axes.values()):
        combo = _combination(0, matrix, flat, dict(zip(names, values, strict=True)))
        if combo.id in seen:
            combo = _combination(len(made), matrix, flat, combo.axes)
        seen.add(combo.id)
        made.append(combo)
    return made
