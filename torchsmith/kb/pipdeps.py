"""``linking = "pip-deps"``'s knowledge: the ``nvidia-*`` wheels an official torch wheel of a
release and CUDA version requires (``data/nvidia_wheels.toml``, the official METADATA's
``Requires-Dist`` lines and the RPATH of its libraries, each record with its source), and
``pipdeps_wheel.declare``: a repaired wheel gets those ``Requires-Dist`` lines in its METADATA
and, for every library in ``torch/lib``, the official RPATH entries into
``site-packages/nvidia/*/lib`` ahead of its own (DT_RPATH, as the official wheels:
LD_LIBRARY_PATH does not override it).
The planner accepts pip-deps only where a record exists (planner/support.py); this module is
pure data (the planner imports it), the wheel editing is in
:mod:`torchsmith.packaging.pipdeps_wheel`."""

from __future__ import annotations

import functools
import sys
from importlib import resources

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from torchsmith.errors import KnowledgeBaseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = "nvidia_wheels.toml"


class Pins(BaseModel):
    """The Requires-Dist lines on CUDA wheels of one official torch wheel."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    torch: str
    cuda: str
    source: str = Field(min_length=10)
    requires: tuple[str, ...] = Field(min_length=1)
    rpath: tuple[str, ...] = Field(min_length=1)

    @field_validator("requires")
    @classmethod
    def _valid(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for line in value:
            try:
                Requirement(line)
            except InvalidRequirement as exc:
                raise ValueError(f"{line!r}: {exc}") from None
        return value

    def names(self) -> list[str]:
        return [Requirement(line).name for line in self.requires]


@functools.cache
def all_pins() -> tuple[Pins, ...]:
    text = (
        resources.files("torchsmith.kb").joinpath("data").joinpath(DATA).read_text("utf-8")
    )
    try:
        return tuple(Pins.model_validate(p) for p in tomllib.loads(text)["pins"])
    except (ValidationError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise KnowledgeBaseError(f"kb/data/{DATA}: {exc}", "fix the record") from None


def pins_for(torch: str | None, cuda: str | None) -> Pins | None:
    """The official wheel's pins for ``torch`` built for ``cuda`` (None: not recorded)."""
    return next((p for p in all_pins() if p.torch == torch and p.cuda == cuda), None)


def known() -> list[str]:
    """``2.6.0 + CUDA 12.4``… for messages."""
    return [f"{p.torch} + CUDA {p.cuda}" for p in all_pins()]
