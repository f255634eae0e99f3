"""host/record.py: the host facts' reader (no pydantic on the start-up path) agrees with pydantic's
strict validation of the same dataclasses — the recorded files read to equal records, and data
that pydantic refuses is refused with the same locations — and dumps what it read."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from torchsmith.host import model
from torchsmith.host.model import HostFacts
from torchsmith.host.record import Record, RecordError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RECORDED = [
    FIXTURES / "plan" / "host-ci.json",
    FIXTURES / "device-h100" / "torchsmith-host.json",
    FIXTURES / "device-h100" / "torchsmith-host-no-nvml.json",
]
RECORDS = [c for c in vars(model).values() if isinstance(c, type) and issubclass(c, Record)]


@pytest.fixture
def pydantic_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[TypeAdapter[HostFacts]]:
    """pydantic over the same dataclasses: strict, unknown fields forbidden (as the reader)."""
    for cls in RECORDS:
        if cls is not Record:
            monkeypatch.setattr(cls, "__pydantic_config__", {"extra": "forbid", "strict": True},
                                raising=False)  # fmt: skip
    yield TypeAdapter(HostFacts)


def _base() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECORDED[1].read_text(encoding="utf-8"))
    return data


BAD: dict[str, dict[str, Any]] = {
    "unknown top-level field": {"os": "debian"},
    "int as a string": {"cores": "four"},
    "bool for an int": {"cores": True},
    "list for a string": {"os_id": ["debian"]},
    "null for a required nested field": {"gpus": [{"index": 0, "name": None,
                                                   "compute_capability": "9.0"}]},  # fmt: skip
    "missing nested field": {"gpus": [{"index": 0, "name": "H100"}]},
    "unknown compiler family": {"compilers": [{"family": "msvc", "version": "19", "cc": "cl"}]},
    "object for a list": {"pythons": {"path": "/usr/bin/python3"}},
    "list for a dict": {"tools": ["cmake"]},
    "unknown nested field": {"tools": {"git": {"name": "git", "path": "/usr/bin/git", "x": 1}}},
}


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_files_read_as_pydantic_reads_them(
    path: Path, pydantic_reader: TypeAdapter[HostFacts]
) -> None:
    text = path.read_text(encoding="utf-8")
    ours = HostFacts.model_validate_json(text)
    assert ours == pydantic_reader.validate_json(text)
    assert ours.model_dump(mode="json") == pydantic_reader.dump_python(ours, mode="json")
    assert HostFacts.model_validate(json.loads(text)) == ours


def _locations(exc: ValidationError) -> set[str]:
    return {".".join(str(part) for part in e["loc"]) for e in exc.errors()}


@pytest.mark.parametrize("name", BAD)
def test_bad_data_is_refused_where_pydantic_refuses_it(
    name: str, pydantic_reader: TypeAdapter[HostFacts]
) -> None:
    data = {**_base(), **BAD[name]}
    with pytest.raises(ValidationError) as theirs:
        pydantic_reader.validate_json(json.dumps(data))
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
    with pytest.raises(dataclasses.FrozenInstanceError):
        host.cores = 2  # type: ignore[misc]


def test_not_json_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="not JSON"):
        HostFacts.model_validate_json('{"os_id": ')
