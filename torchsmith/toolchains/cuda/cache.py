"""The toolkit cache: one directory per provider and exact CUDA version, made atomically, with
an info file that lists every package (version + sha256). A second use reads the info file and
downloads nothing; a directory without our info file is never touched."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from torchsmith import atomic, lock
from torchsmith.errors import HostError
from torchsmith.planner.toolkit_offers import ProviderName
from torchsmith.toolchains.cuda.base import ToolkitRecord
from torchsmith.toolchains.cuda.layout import missing_parts

INFO_FILE = "torchsmith-toolkit.json"
LOCK_WAIT_S = 60.0


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
    # every required part must resolve *here*: an entry made by the apt provider's install
    # route inside a container links into that container's /usr, which this machine lacks
    usable = Path(record.nvcc).is_file() and not missing_parts(Path(record.root))
    return record if usable else None


def _remove_stale_stages(entry: Path) -> None:
    """Staging directories of ``entry`` whose run died (pid not running); a live one stays."""
    for stale in atomic.stale_partials(entry):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale)


@contextmanager
def building(entry: Path) -> Iterator[Path]:
    """A fresh staging directory beside ``entry``, renamed to ``entry`` on success.

    One run at a time per cache (``cuda/.lock``). An existing ``entry`` that lacks our info
    file was not made by us: refuse rather than delete it. One that has it (a stale or broken
    toolkit of ours) is replaced."""
    if entry.exists() and not (entry / INFO_FILE).is_file():
        raise HostError(
            f"{entry} exists but was not made by torchsmith (no {INFO_FILE})",
            "move it away or choose another cache directory",
        )
    with lock.acquire(entry.parent, "the CUDA toolkit cache", LOCK_WAIT_S):
        _remove_stale_stages(entry)
        staging = atomic.temp_dir(entry)
        try:
            yield staging
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if entry.exists():
            shutil.rmtree(entry)
        staging.rename(entry)


def save_record(staging: Path, record: ToolkitRecord) -> None:
    atomic.write_text(staging / INFO_FILE, record.model_dump_json(indent=2))
