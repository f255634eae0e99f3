"""RPATH entries that name the build machine, removed from every library of a wheel.

auditwheel rewrites the RPATH of a library only when it grafted something for it; any other
library keeps what the build left (CMake's build-tree RPATH, a toolkit's absolute lib dir).
Here every ELF member is read (:func:`torchsmith.inspect.elf.read_elf`); one with an entry that
is not ``$ORIGIN``-relative gets ``patchelf --set-rpath`` with the ``$ORIGIN`` entries only (or
``--remove-rpath``), and the wheel is rewritten with its RECORD updated (PEP 376/427 hashes)."""

from __future__ import annotations

import base64
import hashlib
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from torchsmith.atomic import write_with
from torchsmith.backends.base import Executor
from torchsmith.inspect.elf import read_elf

ELF_MAGIC = b"\x7fELF"
ORIGIN = ("$ORIGIN", "${ORIGIN}")


def is_relative(entry: str) -> bool:
    """An RPATH entry the loader resolves inside the installed package."""
    return entry.startswith(ORIGIN)


def foreign(entries: tuple[str, ...]) -> list[str]:
    """The entries naming a place on the build machine (absolute or cwd-relative)."""
    return [e for e in entries if e and not is_relative(e)]


def patch_command(patchelf: str, lib: Path, keep: list[str], force_rpath: bool) -> list[str]:
    """patchelf's argv keeping only ``keep`` (DT_RPATH stays DT_RPATH with ``force_rpath``)."""
    if not keep:
        return [patchelf, "--remove-rpath", str(lib)]
    force = ["--force-rpath"] if force_rpath else []
    return [patchelf, *force, "--set-rpath", ":".join(keep), str(lib)]


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def updated_record(record: str, changed: Mapping[str, bytes]) -> str:
    """RECORD with the lines of ``changed`` members recomputed."""
    lines = []
    for line in record.splitlines():
        name = line.rsplit(",", 2)[0]
        lines.append(record_line(name, changed[name]) if name in changed else line)
    return "\n".join(lines) + "\n"


def _patch_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, tmp: Path, run: PatchRun
) -> bytes | None:
    """The member's new bytes, or None when it is no ELF or has nothing foreign."""
    with zf.open(info) as fh:
        if fh.read(4) != ELF_MAGIC:
            return None
    lib = tmp / "lib.so"
    with zf.open(info) as src, lib.open("wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    facts = read_elf(lib)
    if not foreign(facts.rpath) and not foreign(facts.runpath):
        return None
    entries = facts.runpath or facts.rpath
    run(lib, [e for e in entries if is_relative(e)], not facts.runpath)
    return lib.read_bytes()


class PatchRun:
    """patchelf through the executor, logged with the repair step."""

    def __init__(self, executor: Executor, patchelf: str, env: Mapping[str, str], log: Path):
        self.executor, self.patchelf, self.env, self.log = executor, patchelf, env, log

    def __call__(self, lib: Path, keep: list[str], force_rpath: bool) -> None:
        argv = patch_command(self.patchelf, lib, keep, force_rpath)
        self.executor.run(argv, env=self.env, log_path=self.log)


def _changed_members(wheel: Path, run: PatchRun) -> dict[str, bytes]:
    changed: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="ts-rpath-") as tmp:
        for info in zf.infolist():
            if not info.is_dir():
                data = _patch_member(zf, info, Path(tmp), run)
                if data is not None:
                    changed[info.filename] = data
    return changed


def _rewrite(wheel: Path, changed: Mapping[str, bytes]) -> None:
    with zipfile.ZipFile(wheel) as src:

        def write(fh: IO[bytes]) -> None:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as dst:
                for info in src.infolist():
                    data = changed.get(info.filename)
                    if info.filename.endswith(".dist-info/RECORD"):
                        data = updated_record(src.read(info).decode(), changed).encode()
                    dst.writestr(info, src.read(info) if data is None else data)

        write_with(wheel, write)


def scrub_wheel(wheel: Path, run: PatchRun) -> list[str]:
    """Remove foreign RPATH entries from every library in ``wheel`` (in place); the members
    changed."""
    changed = _changed_members(wheel, run)
    if changed:
        _rewrite(wheel, changed)
    return sorted(changed)
