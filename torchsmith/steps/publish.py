"""Step "publish": artifacts into the output directory, atomically, with the manifest beside.

A file is written to a new temporary sibling (:mod:`torchsmith.atomic`: ``O_EXCL``, never
through a planted link), fsynced, then renamed over its final name, and the directory is
fsynced: a reader sees no file or the complete one, never half a wheel. Temporaries of killed
publishes (pid no longer running) are removed on the next one; nothing else is.

An existing file of the same name is replaced only when it has the same content or was made by
the same plan (its manifest says so): a wheel of another plan with the same version (another
arch list, other features) is never silently overwritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torchsmith import atomic
from torchsmith.errors import HostError
from torchsmith.hashing import sha256_file
from torchsmith.redact import redact_data
from torchsmith.verify.manifest_match import pair_mismatch, read_manifest

TMP_MARK = atomic.PARTIAL
_OUR_TEMP = re.compile(rf"\.(.+\.(?:whl|manifest\.json)){re.escape(TMP_MARK)}\d+(-\w+)?")


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete what killed publishes left behind: only ``.<wheel or manifest>.partial-<pid>…``
    files whose pid no longer runs (never a live run's, never a user's own file)."""
    removed: list[Path] = []
    for path in sorted(directory.glob(f".*{TMP_MARK}*")):
        match = _OUR_TEMP.fullmatch(path.name)
        if match:
            removed += atomic.remove_stale_files(directory / match[1])
    return sorted(set(removed))


def _manifest_beside(final: Path) -> Path:
    if final.name.endswith(".manifest.json"):
        return final
    return final.with_name(final.name.removesuffix(".whl") + ".manifest.json")


def recorded_plan(final: Path) -> str | None:
    """The plan hash the manifest of ``final`` (a wheel or a manifest) names, if readable."""
    try:
        data = json.loads(_manifest_beside(final).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("plan_hash") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _refuse_foreign(final: Path, plan_hash: str, why: str) -> None:
    owner = recorded_plan(final)
    if owner == plan_hash:
        return
    made_by = f"made by plan {owner}" if owner else "of unknown origin (no manifest of ours)"
    raise HostError(
        f"{final} already exists with {why}, {made_by}; this build is plan {plan_hash}",
        "torchsmith does not overwrite an artifact of another build: publish to another "
        "directory (--output-dir), or delete the existing file if you no longer need it",
    )


def _refuse_mismatched_pair(final: Path) -> None:
    """A wheel whose manifest beside records other bytes is of unknown origin: its manifest's
    plan hash proves nothing about it."""
    manifest = _manifest_beside(final)
    differs = pair_mismatch(final, read_manifest(manifest))
    if differs is None:
        return
    raise HostError(
        f"{final} does not match its manifest {manifest}: {differs}; the pair is not the "
        "output of one build",
        "torchsmith does not overwrite a wheel whose origin it cannot prove: delete both files "
        "if you no longer need them, or publish to another directory (--output-dir)",
    )


def check_replace(final: Path, digest: str | None, plan_hash: str | None) -> None:
    """Refuse to replace ``final`` when it differs from what is published (sha256 ``digest``;
    None: a manifest, always different) and was not made by ``plan_hash``."""
    if plan_hash is None or not (final.exists() or final.is_symlink()):
        return
    if digest is not None and final.is_file() and sha256_file(final) == digest:
        return
    if digest is not None:
        _refuse_mismatched_pair(final)
    _refuse_foreign(final, plan_hash, "other contents" if digest else "another manifest")


def publish_file(
    src: Path, dest_dir: Path, name: str | None = None, plan_hash: str | None = None
) -> Path:
    """Copy ``src`` to ``dest_dir/name`` atomically; the final path. With ``plan_hash``, an
    existing different file of another plan is refused (:func:`check_replace`)."""
    final = dest_dir / (name or src.name)
    atomic.remove_stale_files(final)
    if plan_hash is not None and (final.exists() or final.is_symlink()):
        check_replace(final, sha256_file(src), plan_hash)
    return atomic.copy_file(src, final, mode=atomic.FILE_MODE)


def publish_manifest(
    manifest: Mapping[str, Any], dest_dirs: Sequence[Path], name: str
) -> list[Path]:
    """Write the manifest (atomically, credentials redacted) into each directory; the paths
    written. One of another plan (its ``plan_hash`` differs) is never replaced."""
    data = redact_data(dict(manifest))
    plan_hash = data.get("plan_hash")
    paths = []
    for directory in dest_dirs:
        path = directory / name
        atomic.remove_stale_files(path)
        check_replace(path, None, plan_hash if isinstance(plan_hash, str) else None)
        paths.append(atomic.write_json(path, data))
    return paths
