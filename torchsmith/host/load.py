"""The host facts a command plans against: a recorded file (``--host-facts``, written by
``torchsmith host --json``, for reproducible plans) or a live probe of this machine. A file that
is not such a record (binary, not UTF-8, not JSON, not host facts) is a usage error naming it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import UsageError
from torchsmith.host.model import HostFacts
from torchsmith.host.scope import EVERYTHING, Section
from torchsmith.kb.record import RecordError
from torchsmith.runner import Runner

HINT = "give a file written by `torchsmith host --json` (or leave --host-facts out to probe here)"
SHOWN_ERRORS = 3


def _refused(path: Path, why: str) -> UsageError:
    return UsageError(f"--host-facts {path}: {why}", HINT)


def _validation(exc: RecordError) -> str:
    """The first few problems, by field, without echoing the file's content."""
    parts = [f"{loc or 'the file'}: {msg}" for loc, msg in exc.problems]
    more = f" (+{len(parts) - SHOWN_ERRORS} more)" if len(parts) > SHOWN_ERRORS else ""
    return "; ".join(parts[:SHOWN_ERRORS]) + more


def read_recorded(path: Path) -> HostFacts:
    """The facts recorded in ``path``; :class:`UsageError` for anything else."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _refused(path, f"cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refused(path, f"not a text file (byte {exc.start} is not UTF-8)") from None
    try:
        return HostFacts.model_validate_json(text)
    except RecordError as exc:
        raise _refused(path, f"not recorded host facts ({_validation(exc)})") from None


def load_host(
    recorded: Path | None,
    env: Mapping[str, str],
    cwd: Path,
    runner: Runner,
    versions: Path | None = None,
    *,
    sections: frozenset[Section] = EVERYTHING,
) -> HostFacts:
    """``recorded``'s facts, or (None) a probe with ``env`` from ``cwd`` through ``runner``
    (``versions``: its version cache file; ``sections``: what the command reads, see
    :func:`torchsmith.host.probe.probe_host`). A recorded file is read whole."""
    if recorded is not None:
        return read_recorded(recorded)
    from torchsmith.host.probe import probe_host  # starts processes: only when probing

    return probe_host(dict(env), cwd, runner, versions, sections=sections)


def versions_file(env: Mapping[str, str]) -> Path | None:
    """This user's version cache (``<cache root>/host-versions.json``); None where the cache
    root is not usable (a relative TORCHSMITH_CACHE_ROOT: refused by the commands that build)."""
    from torchsmith.cache_root import default_cache_root
    from torchsmith.host.version_cache import FILE_NAME

    try:
        return default_cache_root(env) / FILE_NAME
    except UsageError:
        return None
