"""Inspect a torch wheel without installing it: each shared library is streamed out of the zip
into a temporary file, read, and deleted — memory stays flat whatever the wheel's size."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from torchsmith.errors import InspectError
from torchsmith.inspect.abi import cmake_abi
from torchsmith.inspect.assemble import LibFile, Parts, assemble
from torchsmith.inspect.deps import WheelResolver
from torchsmith.inspect.elf import holes_inside_fatbin, read_elf
from torchsmith.inspect.inflate import codec_name, extract, scratch
from torchsmith.inspect.meta import parse_version_py, parse_wheel_meta
from torchsmith.inspect.model import BuildConfig, Inspection
from torchsmith.inspect.wheel_checks import (
    check_members,
    check_platform,
    check_versions,
    file_tags,
)

_SHARED = re.compile(r"\.so(\.\d+)*$")
_GPU_NAME = re.compile(r"cuda|cu[a-z]+\.so|nv|nccl|hip|gpu|flash|triton")
"""Libraries that may hold GPU code, whose fat binary payloads are left out as holes (a
library of another name is read whole: right, only slower)."""
_BIG = 16 << 20  # libraries whose reading is worth a progress line
BEAT = 3.0
"""Seconds without a line before 'still reading' is said (issue 28 item 9: a piped inspect of the
766 MB wheel was silent for 13-17 s under load)."""
_CHUNK = 1 << 20
_GCC = re.compile(r"GCC: .*?(\d+)\.(\d+)\.(\d+)")
# Caps on what a member may declare (zipfile never inflates past the declared size): metadata
# files are a few KiB; torch's largest library (libtorch_cuda.so of a CUDA 13 wheel) is ~1.5 GiB.
MAX_TEXT_BYTES = 1 << 20
MAX_LIBRARY_BYTES = 16 << 30
# a whole wheel's libraries together (the largest real torch wheels hold ~5 GiB): one hostile
# wheel could otherwise declare any number of 16 GiB libraries (security review f1b4bec N9)
MAX_WHEEL_LIBRARY_BYTES = 64 << 30
MAX_LIBRARIES = 4096
TORCH_CONFIG = "torch/share/cmake/Torch/TorchConfig.cmake"


_WHEEL_HINT = (
    "give a torch wheel file (torch-<version>-<tags>.whl, a zip archive); "
    "for an installed torch use --python PATH"
)


def _open(path: Path) -> zipfile.ZipFile:
    if path.is_dir():
        raise InspectError(f"{path} is a directory, not a wheel file", _WHEEL_HINT)
    if not path.exists():
        raise InspectError(f"{path}: no such file", _WHEEL_HINT)
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise InspectError(f"{path} is not a wheel: it is not a zip archive", _WHEEL_HINT) from exc
    except OSError as exc:
        raise InspectError(
            f"cannot read {path}: {exc.strerror or exc}", "check the file's permissions"
        ) from exc


def _declared(info: zipfile.ZipInfo, cap: int, what: str) -> None:
    if info.file_size > cap:
        raise InspectError(
            f"{info.filename} declares {info.file_size} bytes, larger than {cap} bytes ({what})",
            "this is not a torch wheel torchsmith can read; rebuild or re-download it",
        )


def _text(zf: zipfile.ZipFile, suffix: str) -> str:
    infos = [
        i
        for i in zf.infolist()
        if i.filename.endswith(suffix) and i.filename.count("/") == suffix.count("/")
    ]
    if not infos:
        return ""
    _declared(infos[0], MAX_TEXT_BYTES, "the cap for metadata files")
    return zf.read(infos[0]).decode(errors="replace")


OnLibrary = Callable[[str, Path], None]


def shared_objects(zf: zipfile.ZipFile, tmp: Path) -> Iterator[tuple[zipfile.ZipInfo, Path]]:
    """Each shared library of the wheel, streamed into one temporary file in turn (deleted
    when the next one comes)."""
    for info in zf.infolist():
        if info.is_dir() or not _SHARED.search(info.filename):
            continue
        _declared(info, MAX_LIBRARY_BYTES, "the cap for one shared library")
        target = tmp / "lib.so"
        with zf.open(info) as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst, _CHUNK)
        yield info, target
        target.unlink()


Say = Callable[[str], None]


def _library_infos(zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The shared libraries to read, largest first (the longest inflate starts first)."""
    infos = [i for i in zf.infolist() if not i.is_dir() and _SHARED.search(i.filename)]
    for info in infos:
        _declared(info, MAX_LIBRARY_BYTES, "the cap for one shared library")
    _budget(infos)
    return sorted(infos, key=lambda i: -i.compress_size)


def _budget(infos: list[zipfile.ZipInfo]) -> None:
    """Refuse a wheel whose libraries together are more than any torch wheel holds."""
    total = sum(i.file_size for i in infos)
    if total > MAX_WHEEL_LIBRARY_BYTES or len(infos) > MAX_LIBRARIES:
        raise InspectError(
            f"the wheel's {len(infos)} shared libraries declare {total} bytes together, more "
            f"than the caps ({MAX_LIBRARIES} libraries, {MAX_WHEEL_LIBRARY_BYTES} bytes)",
            "this is not a torch wheel torchsmith can read; rebuild or re-download it",
        )


def _one(
    wheel: Path, info: zipfile.ZipInfo, tmp: Path, workers: int, on_library: OnLibrary | None
) -> LibFile:
    name = info.filename.rsplit("/", 1)[-1]
    with scratch(info.file_size, workers, tmp) as (fh, where):
        holes = extract(wheel, info, fh, holes=bool(_GPU_NAME.search(name)), elf=True)
        if not holes_inside_fatbin(where, holes):
            fh.seek(0)
            fh.truncate(0)
            extract(wheel, info, fh, elf=True)  # a fat binary look-alike elsewhere: every byte
        try:
            facts = read_elf(where, arch_flags=name.startswith(("libtorch_python", "_C.")))
        except InspectError as exc:
            raise InspectError(f"{info.filename}: {exc.message}", _not_elf_hint(wheel)) from exc
        if on_library is not None and facts.fatbin:
            on_library(info.filename, where)
    origin = "/" + info.filename.rsplit("/", 1)[0] if "/" in info.filename else "/"
    return LibFile(path=info.filename, size=info.file_size, origin=origin, facts=facts)


def _not_elf_hint(wheel: Path) -> str:
    return (
        f"{wheel.name} is not a Linux wheel torchsmith can read (its tags name the platform); "
        "inspect a linux_x86_64/manylinux/aarch64 torch wheel"
    )


def _libs(
    wheel: Path, zf: zipfile.ZipFile, tmp: Path, on_library: OnLibrary | None, say: Say | None
) -> list[LibFile]:
    """Every shared library's facts, read in parallel (one thread per core)."""
    infos = _library_infos(zf)
    workers = max(1, min(len(infos), os.cpu_count() or 1, 8))
    if say is not None:
        total = sum(i.file_size for i in infos) / 2**20
        say(f"reading {len(infos)} libraries ({total:,.0f} MiB inflated, {workers} threads, "
            f"{codec_name()})")  # fmt: skip
    found: list[LibFile] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        jobs = [pool.submit(_one, wheel, i, tmp, workers, on_library) for i in infos]
        start = time.monotonic()
        try:
            for job in jobs:
                found.append(_result(job, say, f"of {len(infos)} libraries read", found, start))
                if say is not None and found[-1].size > _BIG:
                    say(f"  read {found[-1].path} ({found[-1].size / 2**20:,.0f} MiB)")
        except BaseException:  # a refused member, Ctrl-C: the queued members are not started
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return found


def _result(
    job: Future[LibFile], say: Say | None, what: str, found: list[LibFile], start: float
) -> LibFile:
    """The job's library; while it is being read, a line every :data:`BEAT` seconds."""
    while True:
        try:
            return job.result(timeout=None if say is None else BEAT)
        except FutureTimeout:
            assert say is not None
            say(f"  still reading: {len(found)} {what}, {time.monotonic() - start:.0f} s")


def _config(libs: list[LibFile], cuda: str | None) -> BuildConfig:
    """What the files say without importing torch."""
    cpu = next((lib for lib in libs if lib.path.endswith("/libtorch_cpu.so")), None)
    gcc = sorted(
        (c for c in (cpu.facts.compilers if cpu else ()) if _GCC.match(c)),
        key=lambda c: tuple(int(x) for x in _GCC.findall(c)[0]),
    )
    flags = next((lib.facts.arch_flags for lib in libs if lib.facts.arch_flags), None)
    return BuildConfig(
        source="files",
        cuda_runtime=cuda,
        compiler=gcc[-1] if gcc else None,
        nvcc_arch_flags=flags,
    )


def inspect_wheel(
    path: Path, on_library: OnLibrary | None = None, say: Say | None = None
) -> Inspection:
    """Everything :class:`Inspection` holds, read from the wheel file at ``path``;
    ``on_library(member, tmp_path)`` sees each library with GPU code while it is on disk (from
    several threads at once); ``say`` hears progress lines."""
    with _open(path) as zf, tempfile.TemporaryDirectory(prefix="torchsmith-inspect-") as tmp:
        version_py = _text(zf, "torch/version.py")
        if not version_py:
            raise InspectError(f"{path.name} holds no torch/version.py", "is this a torch wheel?")
        version = parse_version_py(version_py)
        meta = parse_wheel_meta(_text(zf, ".dist-info/WHEEL"), _text(zf, ".dist-info/METADATA"))
        check_platform(path)
        check_members(zf, path)
        check_versions(path, meta.version, version.version)
        meta = dataclasses.replace(meta, tags=file_tags(path) or meta.tags)
        cmake = cmake_abi(_text(zf, TORCH_CONFIG))
        libs = _libs(path, zf, Path(tmp), on_library, say)
        total = sum(info.file_size for info in zf.infolist())
    bundled = frozenset(lib.path.rsplit("/", 1)[-1] for lib in libs)
    parts = Parts(
        source="wheel",
        location=str(path),
        total_size=total,
        libs=libs,
        version=version,
        config=_config(libs, version.cuda),
        wheel=(path.name, meta),
        cmake_abi=cmake,
    )
    return assemble(parts, WheelResolver(bundled))
