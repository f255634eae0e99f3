"""``linking.cuda = pip-deps`` applied to a repaired wheel: the official pins
(:mod:`torchsmith.kb.pipdeps`) as ``Requires-Dist`` in its METADATA, their RPATH ahead of each
``torch/lib`` library's own (patchelf, DT_RPATH), RECORD updated."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from torchsmith.inspect.elf import read_elf
from torchsmith.kb.pipdeps import Pins
from torchsmith.packaging.wheel_rpath import ELF_MAGIC, PatchRun, _rewrite, is_relative

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
