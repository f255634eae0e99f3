"""kb/record.py: the host facts' reader (no pydantic on the start-up path) agrees with pydantic's
strict validation of the same fields (a pydantic model made from each record's annotations and
defaults) — the recorded files read to equal records, and data that pydantic refuses is refused
with the same locations — and dumps what it read."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from torchsmith.host import model
from torchsmith.host.model import HostFacts
from torchsmith.kb.record import REQUIRED, Record, RecordError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RECORDED = [
    FIXTURES / "plan" / "host-ci.json",
    FIXTURES / "device-h100" / "torchsmith-host.json",
    FIXTURES / "device-h100" / "torchsmith-host-no-nvml.json",
]
STRICT = ConfigDict(extra="forbid", strict=True)


def _pydantic_type(kind: Any) -> Any:
    """``kind`` with every record in it replaced by its pydantic twin."""
    if isinstance(kind, type) and issubclass(kind, Record):
        return pydantic_twin(kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is None or origin is Literal:
        return kind
    inner = tuple(_pydantic_type(a) for a in args)
    if origin in (Union, types.UnionType):
        return Union[inner]  # noqa: UP007 (built from a tuple)
    return origin[inner]


def _field(default: Any) -> Any:
    if default is REQUIRED:
        return ...
    return Field(default_factory=default.make) if hasattr(default, "make") else default


def pydantic_twin(cls: type[Record]) -> type[BaseModel]:
    """A strict pydantic model of ``cls``'s fields: annotations, defaults, nested records."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {
        name: (_pydantic_type(hints[name]), _field(default))
        for name, default in cls.record_fields.items()
    }
    return create_model(cls.__name__, __config__=STRICT, **fields)


@pytest.fixture(scope="module")
def twin() -> type[BaseModel]:
    return pydantic_twin(HostFacts)


def _base() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED[1].read_text(encoding="utf-8"))
    return data


BAD: dict[str, dict[str, Any]] = {
    "unknown top-level field": {"os": "debian"},
    "int as a string": {"cores": "four"},
    "bool for an int": {"cores": True},
    "list for a string": {"os_id": ["debian"]},
    "null for a required nested field": {"gpus": [{"index": 0, "name": None}]},
    "missing nested field": {"gpus": [{"index": 0, "name": "H100"}]},
    "unknown compiler family": {"compilers": [{"family": "msvc", "version": "19", "cc": "cl"}]},
    "object for a list": {"pythons": {"path": "/usr/bin/python3"}},
    "list for a dict": {"tools": ["cmake"]},
    "unknown nested field": {"tools": {"git": {"name": "git", "path": "/usr/bin/git", "x": 1}}},
}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_files_read_as_pydantic_reads_them(path: Path, twin: type[BaseModel]) -> None:
    text = path.read_text(encoding="utf-8")
    ours = HostFacts.model_validate_json(text)
    assert ours.model_dump() == twin.model_validate_json(text).model_dump()
    assert HostFacts.model_validate(json.loads(text)) == ours
    assert HostFacts.model_validate_json(ours.model_dump_json()) == ours


def _locations(exc: ValidationError) -> set[str]:
    return {".".join(str(part) for part in e["loc"]) for e in exc.errors()}


@pytest.mark.parametrize("name", BAD)
def test_bad_data_is_refused_where_pydantic_refuses_it(name: str, twin: type[BaseModel]) -> None:
    data = {**_base(), **BAD[name]}
    with pytest.raises(ValidationError) as theirs:
        twin.model_validate_json(json.dumps(data))
    with pytest.raises(RecordError) as ours:
        HostFacts.model_validate(data)
    assert {loc for loc, _ in ours.value.problems} == _locations(theirs.value)


def test_every_problem_is_reported_at_once() -> None:
    data = {**_base(), "cores": "x", "gpus": [{"index": "0"}], "extra": 1}
    with pytest.raises(RecordError) as caught:
        HostFacts.model_validate(data)
    assert [loc for loc, _ in caught.value.problems] == [
        "extra", "cores", "gpus.0.index", "gpus.0.name", "gpus.0.compute_capability",
    ]  # fmt: skip


def test_defaults_ints_as_floats_and_records_given_as_records() -> None:
    host = HostFacts.model_validate({"ram_gib": 24, "compilers": [model.Compiler(
        family="gcc", version="12.2.0", cc="/usr/bin/gcc")]})  # fmt: skip
    assert host.ram_gib == 24.0 and isinstance(host.ram_gib, float)
    assert host.compilers[0].label == "gcc-12" and host.tools == {} and host.machine == "x86_64"
    assert host.model_copy(update={"cores": 8}).cores == 8 and host.cores == 1
    with pytest.raises(AttributeError, match="frozen"):
        host.cores = 2  # type: ignore[misc]
    assert host == HostFacts(ram_gib=24.0, compilers=list(host.compilers)) and hash(
        model.Tool(name="git", path="/usr/bin/git")
    ) == hash(model.Tool(name="git", path="/usr/bin/git"))


def test_a_record_inside_a_pydantic_model_is_read_and_dumped_by_the_record() -> None:
    class Outer(BaseModel):
        host: HostFacts

    host = HostFacts.model_validate_json(RECORDED[0].read_text(encoding="utf-8"))
    assert Outer(host=host).host is host
    assert Outer.model_validate({"host": host.model_dump()}).host == host
    assert Outer(host=host).model_dump(mode="json") == {"host": host.model_dump()}
    with pytest.raises(ValidationError, match="cores: expected int"):
        Outer.model_validate({"host": {"cores": "x"}})


def test_not_json_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="not JSON"):
        HostFacts.model_validate_json('{"os_id": ')
