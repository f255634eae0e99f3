"""Frozen dataclass records with a strict typed reader, for facts read on every command's start
(host facts): no pydantic on that path (start-up time: building pydantic models costs more than
probing the host). The reader checks each field against its annotation — ``str``, ``int``,
``float``, ``bool``, ``None``, ``X | None``, ``list[X]``, ``dict[str, X]``, ``Literal[...]`` and
nested records — refuses unknown and missing fields, and reports every problem at once by
location (``gpus.0.index``). ``tests/unit/host/test_record.py`` checks it against pydantic's
validation of the same dataclasses. The method names are pydantic's, so that code handling
records does not care which kind it holds."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

R = TypeVar("R", bound="Record")
Problems = list[tuple[str, str]]


class RecordError(ValueError):
    """Data that is not the record asked for; ``problems`` are ``(location, message)`` pairs."""

    def __init__(self, problems: Problems) -> None:
        super().__init__("; ".join(f"{loc or 'the data'}: {msg}" for loc, msg in problems))
        self.problems = problems


_FIELDS: dict[type, dict[str, tuple[Any, bool]]] = {}


def _fields(cls: Any) -> dict[str, tuple[Any, bool]]:
    """Each field's resolved annotation and whether it must be given (no default); cached."""
    if cls not in _FIELDS:
        hints = typing.get_type_hints(cls)
        no_default = (dataclasses.MISSING, dataclasses.MISSING)
        _FIELDS[cls] = {
            f.name: (hints[f.name], (f.default, f.default_factory) == no_default)
            for f in dataclasses.fields(cls)
        }
    return _FIELDS[cls]


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _check_union(value: object, args: tuple[Any, ...], loc: str, out: Problems) -> Any:
    if value is None and type(None) in args:
        return None
    inner = [a for a in args if a is not type(None)]
    if len(inner) != 1:
        raise TypeError(f"unsupported union {args}")  # a programming error, not bad data
    return _check(value, inner[0], loc, out)


def _check_list(value: object, item: Any, loc: str, out: Problems) -> Any:
    if not isinstance(value, (list, tuple)):
        out.append((loc, f"expected a list, got {_kind(value)}"))
        return []
    return [_check(v, item, f"{loc}.{i}", out) for i, v in enumerate(value)]


def _check_dict(value: object, item: Any, loc: str, out: Problems) -> Any:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        out.append((loc, f"expected an object with string keys, got {_kind(value)}"))
        return {}
    return {k: _check(v, item, f"{loc}.{k}", out) for k, v in value.items()}


def _check_scalar(value: object, kind: type, loc: str, out: Problems) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    out.append((loc, f"expected {kind.__name__}, got {_kind(value)}"))
    return value


def _check(value: object, kind: Any, loc: str, out: Problems) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (Union, types.UnionType):
        return _check_union(value, args, loc, out)
    if origin is list:
        return _check_list(value, args[0], loc, out)
    if origin is dict:
        return _check_dict(value, args[1], loc, out)
    if origin is Literal:
        if value not in args:
            out.append((loc, f"expected one of {', '.join(map(repr, args))}"))
        return value
    if isinstance(kind, type) and issubclass(kind, Record):
        return kind._read(value, loc, out)
    if kind in (str, int, float, bool):
        return _check_scalar(value, kind, loc, out)
    raise TypeError(f"unsupported field type {kind!r}")  # a programming error, not bad data


def _at(loc: str, name: str) -> str:
    return f"{loc}.{name}" if loc else name


class Record:
    """Base of frozen dataclass records read with :meth:`model_validate`."""

    @classmethod
    def _read(cls: type[R], data: object, loc: str, out: Problems) -> R:
        if isinstance(data, cls):
            return data  # a record already (frozen: nothing to copy)
        if not isinstance(data, Mapping):
            out.append((loc, f"expected an object, got {_kind(data)}"))
            return None  # type: ignore[return-value]  # only reached with a problem recorded
        fields, start = _fields(cls), len(out)
        out.extend((_at(loc, k), "unknown field") for k in data if k not in fields)
        given = {}
        for name, (kind, required) in fields.items():
            if name in data:
                given[name] = _check(data[name], kind, _at(loc, name), out)
            elif required:
                out.append((_at(loc, name), "missing"))
        return None if len(out) > start else cls(**given)  # type: ignore[return-value]

    @classmethod
    def model_validate(cls: type[R], data: object) -> R:
        """``data`` (decoded JSON) as this record; :class:`RecordError` naming every problem."""
        problems: Problems = []
        record = cls._read(data, "", problems)
        if problems:
            raise RecordError(problems)
        return record

    @classmethod
    def model_validate_json(cls: type[R], text: str | bytes) -> R:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RecordError([("", f"not JSON ({exc})")]) from None
        return cls.model_validate(data)

    def model_dump(self, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields as plain data (nested records as dicts; JSON types in either mode)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]

    def model_dump_json(self, indent: int | None = None) -> str:
        return json.dumps(self.model_dump(), indent=indent)

    def model_copy(self: R, update: Mapping[str, Any] | None = None) -> R:
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]
