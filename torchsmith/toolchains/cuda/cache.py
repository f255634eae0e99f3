"""The toolkit cache: one directory per provider and exact CUDA version, made atomically, with
an info file that lists every package (version + sha256). A second use reads the info file and
downloads nothing; a directory without our info file is never touched."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from torchsmith.errors import HostError
from torchsmith.toolchains.cuda.base import ProviderName, ToolkitRecord

INFO_FILE = "torchsmith-toolkit.json"


def entry_dir(cache_root: Path, provider: ProviderName, cuda: str) -> Path:
    return cache_root / "cuda" / f"{provider}-{cuda}"


def load_record(entry: Path) -> ToolkitRecord | None:
    """The cached toolkit in ``entry``, or None when it is absent, stale or broken."""
    info = entry / INFO_FILE
    if not info.is_file():
        return None
    try:
        record = ToolkitRecord.model_validate_json(info.read_text(encoding="utf-8"))
    except (ValidationError, OSError):
        return None
    return record if Path(record.nvcc).is_file() else None


@contextmanager
def building(entry: Path) -> Iterator[Path]:
    """A fresh staging directory beside ``entry``, renamed to ``entry`` on success.

    An existing ``entry`` that lacks our info file was not made by us: refuse rather than
    delete it. One that has it (a stale or broken toolkit of ours) is replaced."""
    if entry.exists() and not (entry / INFO_FILE).is_file():
        raise HostError(
            f"{entry} exists but was not made by torchsmith (no {INFO_FILE})",
            "move it away or choose another cache directory",
        )
    staging = entry.with_name(f"{entry.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if entry.exists():
        shutil.rmtree(entry)
    staging.rename(entry)


def save_record(staging: Path, record: ToolkitRecord) -> None:
    (staging / INFO_FILE).write_text(record.model_dump_json(indent=2), encoding="utf-8")
