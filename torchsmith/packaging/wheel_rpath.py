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
_CHUNK = 1 << 20
_ZIP64 = (1 << 31) - (1 << 20)  # members near 2 GiB (libtorch_cuda) need zip64 headers


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


def file_record_line(name: str, path: Path) -> str:
    """:func:`record_line` of a file on disk, read in chunks."""
    sha = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            sha.update(chunk)
    digest = base64.urlsafe_b64encode(sha.digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{path.stat().st_size}"


def updated_record(record: str, lines: Mapping[str, str]) -> str:
    """RECORD with the lines of the members in ``lines`` replaced."""
    out = []
    for line in record.splitlines():
        name = line.rsplit(",", 2)[0]
        out.append(lines.get(name, line))
    return "\n".join(out) + "\n"


def _patch_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, lib: Path, run: PatchRun) -> bool:
    """Extract the member to ``lib`` and patch it there; False (nothing kept) when it is no
    ELF or has nothing foreign."""
    with zf.open(info) as fh:
        if fh.read(4) != ELF_MAGIC:
            return False
    with zf.open(info) as src, lib.open("wb") as dst:
        shutil.copyfileobj(src, dst, _CHUNK)
    facts = read_elf(lib)
    if not foreign(facts.rpath) and not foreign(facts.runpath):
        lib.unlink()
        return False
    entries = facts.runpath or facts.rpath
    run(lib, [e for e in entries if is_relative(e)], not facts.runpath)
    return True


class PatchRun:
    """patchelf through the executor, logged with the repair step."""

    def __init__(self, executor: Executor, patchelf: str, env: Mapping[str, str], log: Path):
        self.executor, self.patchelf, self.env, self.log = executor, patchelf, env, log

    def __call__(self, lib: Path, keep: list[str], force_rpath: bool) -> None:
        argv = patch_command(self.patchelf, lib, keep, force_rpath)
        self.executor.run(argv, env=self.env, log_path=self.log)


def _changed_members(wheel: Path, run: PatchRun, tmp: Path) -> dict[str, Path]:
    """The patched members, each as a file under ``tmp`` (never all in memory at once)."""
    changed: dict[str, Path] = {}
    with zipfile.ZipFile(wheel) as zf:
        for index, info in enumerate(zf.infolist()):
            lib = tmp / f"{index}.so"
            if not info.is_dir() and _patch_member(zf, info, lib, run):
                changed[info.filename] = lib
    return changed


def _fresh_info(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """Name, time and mode of ``info`` for a member written anew."""
    copy = zipfile.ZipInfo(info.filename, info.date_time)
    copy.external_attr, copy.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
    return copy


def _copy_member(dst: zipfile.ZipFile, info: zipfile.ZipInfo, source: IO[bytes], size: int) -> None:
    with dst.open(_fresh_info(info), "w", force_zip64=size > _ZIP64) as out:
        shutil.copyfileobj(source, out, _CHUNK)


def _write_members(src: zipfile.ZipFile, dst: zipfile.ZipFile, changed: Mapping[str, Path]) -> None:
    lines = {name: file_record_line(name, path) for name, path in changed.items()}
    for info in src.infolist():
        if info.filename.endswith(".dist-info/RECORD"):
            dst.writestr(_fresh_info(info), updated_record(src.read(info).decode(), lines))
        elif info.filename in changed:
            path = changed[info.filename]
            with path.open("rb") as fh:
                _copy_member(dst, info, fh, path.stat().st_size)
        else:
            with src.open(info) as fh:
                _copy_member(dst, info, fh, info.file_size)


def _rewrite(wheel: Path, changed: Mapping[str, Path]) -> None:
    with zipfile.ZipFile(wheel) as src:

        def write(fh: IO[bytes]) -> None:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as dst:
                _write_members(src, dst, changed)

        write_with(wheel, write)


def scrub_wheel(wheel: Path, run: PatchRun) -> list[str]:
    """Remove foreign RPATH entries from every library in ``wheel`` (in place); the members
    changed."""
    with tempfile.TemporaryDirectory(prefix="torchsmith-rpath-") as tmp:
        changed = _changed_members(wheel, run, Path(tmp))
        if changed:
            _rewrite(wheel, changed)
    return sorted(changed)
