"""Frozen records with a strict typed reader, for facts every command reads at start (the
knowledge base's records, host facts): no pydantic and no generated code on that path (building
pydantic models, or dataclasses' ``exec``-generated methods, costs more start-up time than
planning). A record class declares annotated fields with defaults, like a keyword-only frozen
dataclass (type checkers see one: ``dataclass_transform``); its ``__init__``, equality, hash and
repr are the base's, read from a field table made once per class.

The reader (:meth:`Record.model_validate`) checks each field against its annotation (``str``,
``int``, ``float``, ``bool``, ``None``, ``X | None``, ``list[X]``, ``dict[str, X]``,
``Literal[...]``, nested records), refuses unknown and missing fields, and reports every problem
at once by location (``gpus.0.index``); ``tests/unit/host/test_record.py`` checks it against
pydantic's strict validation of the same fields. The method names are pydantic's, so code
handling records does not care which kind it holds."""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, TypeVar, Union

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform

R = TypeVar("R", bound="Record")
Problems = list[tuple[str, str]]


class RecordError(ValueError):
    """Data that is not the record asked for; ``problems`` are ``(location, message)`` pairs."""

    def __init__(self, problems: Problems) -> None:
        super().__init__("; ".join(f"{loc or 'the data'}: {msg}" for loc, msg in problems))
        self.problems = problems


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a field that must be given."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A field whose default is made per record (``field(default_factory=list)``)."""
    return _Factory(default_factory)


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


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return {k: _plain(v) for k, v in value.__dict__.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _own_fields(cls: type) -> dict[str, Any]:
    """The fields ``cls`` itself declares, with their defaults (annotations are strings)."""
    notes = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (inspect: start-up time)
    return {
        name: cls.__dict__.get(name, REQUIRED)
        for name, note in notes.items()
        if not str(note).startswith(("ClassVar", "typing.ClassVar"))
    }


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Record:
    """Base of frozen records (see the module's docstring)."""

    record_fields: ClassVar[dict[str, Any]] = {}
    """Every field (the bases' first) and its default: a value, :data:`REQUIRED` or a factory."""
    _hints: ClassVar[dict[str, Any] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.record_fields = {**cls.record_fields, **_own_fields(cls)}
        cls._hints = None

    def __init__(self, **values: Any) -> None:
        fields = self.record_fields
        unknown = [name for name in values if name not in fields]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(unknown)}")
        state = {}
        for name, default in fields.items():
            if name in values:
                state[name] = values[name]
            elif default is REQUIRED:
                raise TypeError(f"{type(self).__name__}: field {name} is required")
            else:
                state[name] = default.make() if type(default) is _Factory else default
        self.__dict__.update(state)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self.__dict__.values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({shown})"

    @classmethod
    def _annotations(cls) -> dict[str, Any]:
        if cls._hints is None:
            hints = typing.get_type_hints(cls)
            cls._hints = {name: hints[name] for name in cls.record_fields}
        return cls._hints

    @classmethod
    def _read(cls: type[R], data: object, loc: str, out: Problems) -> R:
        if isinstance(data, cls):
            return data  # a record already (frozen: nothing to copy)
        if not isinstance(data, Mapping):
            out.append((loc, f"expected an object, got {_kind(data)}"))
            return None  # type: ignore[return-value]  # only reached with a problem recorded
        start = len(out)
        out.extend((_at(loc, k), "unknown field") for k in data if k not in cls.record_fields)
        given = {}
        for name, kind in cls._annotations().items():
            if name in data:
                given[name] = _check(data[name], kind, _at(loc, name), out)
            elif cls.record_fields[name] is REQUIRED:
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
        import json

        try:
            data = json.loads(text)
        except ValueError as exc:
            raise RecordError([("", f"not JSON ({exc})")]) from None
        return cls.model_validate(data)

    def model_dump(self, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The fields as plain data (nested records as dicts; JSON types in either mode)."""
        dumped: dict[str, Any] = _plain(self)
        return dumped

    def model_dump_json(self, indent: int | None = None) -> str:
        import json

        return json.dumps(self.model_dump(), indent=indent)

    def model_copy(self: R, update: Mapping[str, Any] | None = None) -> R:
        return type(self)(**{**self.__dict__, **(update or {})})

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """A record as a field of a pydantic model: read and dumped by the record itself."""
        from pydantic_core import core_schema

        dump = core_schema.plain_serializer_function_ser_schema(lambda r: r.model_dump())
        return core_schema.no_info_plain_validator_function(cls.model_validate, serialization=dump)
