"""``linking = "pip-deps"``'s knowledge: the ``nvidia-*`` wheels an official torch wheel of a
release and CUDA version requires (``data/nvidia_wheels.toml``, the official METADATA's
``Requires-Dist`` lines and the RPATH of its libraries, each record with its source), and
:func:`declare`: a repaired wheel gets those ``Requires-Dist`` lines in its METADATA and, for
every library in ``torch/lib``, the official RPATH entries into ``site-packages/nvidia/*/lib``
ahead of its own (DT_RPATH, as the official wheels: LD_LIBRARY_PATH does not override it).
The planner accepts pip-deps only where a record exists (planner/support.py)."""

from __future__ import annotations

import functools
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from torchsmith.errors import KnowledgeBaseError
from torchsmith.inspect.elf import read_elf
from torchsmith.steps.wheel_rpath import ELF_MAGIC, PatchRun, _rewrite, is_relative

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
        resources.files("torchsmith.packaging").joinpath("data").joinpath(DATA).read_text("utf-8")
    )
    try:
        return tuple(Pins.model_validate(p) for p in tomllib.loads(text)["pins"])
    except (ValidationError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise KnowledgeBaseError(f"packaging/data/{DATA}: {exc}", "fix the record") from None


def pins_for(torch: str | None, cuda: str | None) -> Pins | None:
    """The official wheel's pins for ``torch`` built for ``cuda`` (None: not recorded)."""
    return next((p for p in all_pins() if p.torch == torch and p.cuda == cuda), None)


def known() -> list[str]:
    """``2.6.0 + CUDA 12.4``… for messages."""
    return [f"{p.torch} + CUDA {p.cuda}" for p in all_pins()]


LIB_DIR = "torch/lib/"


def with_requires(metadata: str, requires: tuple[str, ...]) -> str:
    """METADATA with ``Requires-Dist`` headers for ``requires`` (before the body, if any)."""
    head, sep, body = metadata.partition("\n\n")
    lines = [line for line in head.splitlines() if line.strip()]
    present = {line for line in lines if line.startswith("Requires-Dist:")}
    lines += [f"Requires-Dist: {r}" for r in requires if f"Requires-Dist: {r}" not in present]
    return "\n".join(lines) + "\n" + (sep + body if sep else "")


def _metadata_member(zf: zipfile.ZipFile) -> str:
    return next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)


def _patched_library(zf: zipfile.ZipFile, name: str, lib: Path, pins: Pins, run: PatchRun) -> bool:
    with zf.open(name) as fh:
        if fh.read(4) != ELF_MAGIC:
            return False
    lib.write_bytes(zf.read(name))
    facts = read_elf(lib)
    own = [e for e in (facts.runpath or facts.rpath) if is_relative(e)]
    run(lib, [*pins.rpath, *(e for e in own if e not in pins.rpath)], True)
    return True


def declare(wheel: Path, pins: Pins, run: PatchRun) -> list[str]:
    """Requires-Dist and RPATHs of ``pins`` into ``wheel`` (in place); the members changed."""
    with (
        tempfile.TemporaryDirectory(prefix="torchsmith-pipdeps-") as tmp,
        zipfile.ZipFile(wheel) as zf,
    ):
        meta = _metadata_member(zf)
        changed = {meta: Path(tmp) / "METADATA"}
        changed[meta].write_text(with_requires(zf.read(meta).decode("utf-8"), pins.requires))
        for index, name in enumerate(zf.namelist()):
            lib = Path(tmp) / f"{index}.so"
            if (
                name.startswith(LIB_DIR)
                and ".so" in name
                and _patched_library(zf, name, lib, pins, run)
            ):
                changed[name] = lib
        zf.close()
        _rewrite(wheel, changed)
    return sorted(changed)
