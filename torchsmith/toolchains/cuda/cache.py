"""The toolkit cache: one directory per provider and exact CUDA version, made atomically, with
an info file that lists every package (version + sha256). A second use reads the info file and
downloads nothing; a directory without our info file is never touched."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import ValidationError

from torchsmith import atomic, lock
from torchsmith.errors import HostError
from torchsmith.planner.toolkit_offers import ProviderName
from torchsmith.toolchains.cuda.base import ToolkitRecord
from torchsmith.toolchains.cuda.layout import missing_parts

INFO_FILE = "torchsmith-toolkit.json"
# another run's download and unpack of a toolkit (1.4 GB debs for 11.8, minutes): wait for it,
# then use what it made (provide_cached) rather than fail or make it again
LOCK_WAIT_S = 900.0
LOCK_WHAT = "the CUDA toolkit cache"


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


def _refuse_foreign(entry: Path) -> None:
    """An existing ``entry`` that lacks our info file was not made by us: refuse rather than
    delete it. One that has it (a stale or broken toolkit of ours) is replaced."""
    if entry.exists() and not (entry / INFO_FILE).is_file():
        raise HostError(
            f"{entry} exists but was not made by torchsmith (no {INFO_FILE})",
            "move it away or choose another cache directory",
        )


@contextmanager
def _staged(entry: Path) -> Iterator[Path]:
    """A fresh staging directory beside ``entry`` (the cache's lock held), renamed to ``entry``
    on success, removed on failure."""
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


@contextmanager
def building(entry: Path) -> Iterator[Path]:
    """A fresh staging directory beside ``entry``, renamed to ``entry`` on success; one run at a
    time per cache (``cuda/.lock``); a foreign ``entry`` is refused (:func:`_refuse_foreign`)."""
    _refuse_foreign(entry)
    with lock.acquire(entry.parent, LOCK_WHAT, LOCK_WAIT_S), _staged(entry) as staging:
        yield staging


def provide_cached(entry: Path, make: Callable[[Path], ToolkitRecord]) -> ToolkitRecord:
    """The toolkit cached in ``entry``, else ``make(staging)``'s (saved, then renamed to
    ``entry``). A run that waited for the cache's lock uses the toolkit the holder made."""
    found = load_record(entry)
    if found is not None:
        return found
    _refuse_foreign(entry)
    with lock.acquire(entry.parent, LOCK_WHAT, LOCK_WAIT_S):
        found = load_record(entry)  # made by the run this one waited for
        if found is not None:
            return found
        with _staged(entry) as staging:
            record = make(staging)
            save_record(staging, record)
    return record


def save_record(staging: Path, record: ToolkitRecord) -> None:
    atomic.write_text(staging / INFO_FILE, record.model_dump_json(indent=2))
