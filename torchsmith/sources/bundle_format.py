"""The bundle manifest (``torchsmith-bundle.json``): what a tree holds, and its strict reader.

A manifest comes from a file someone handed over, so reading it never crashes: anything that is
not the documented shape is a :class:`SourceError` naming the problem.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith.errors import SourceError
from torchsmith.sources.base import SourceTree
from torchsmith.sources.hashing import entry_digest, iter_tree, manifest_digest

MANIFEST = "torchsmith-bundle.json"
SOURCE = "source"
EXCLUDE = (".git",)
BUNDLE_FORMAT = 1
MAX_MANIFEST_BYTES = 256 << 20
_FIELDS: dict[str, type] = {
    "kind": str,
    "version": str,
    "identity": str,
    "details": dict,
    "files": dict,
    "files_sha256": str,
}


@dataclass(frozen=True)
class BundleManifest:
    kind: str
    version: str
    identity: str
    details: dict[str, str]
    files: dict[str, str]


def listing(root: Path) -> dict[str, str]:
    """``path -> sha256 | link:<target> | dir`` of everything a bundle holds (empty
    directories included: 1.13's CMake checks that e.g. ``third_party/pocketfft`` exists)."""
    entries: dict[str, str] = {}
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in EXCLUDE]
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir.parts[:1] == ("build",):
            dirnames[:] = []
            continue
        for name in dirnames:
            rel = rel_dir / name
            if rel.parts != ("build",) and not (root / rel).is_symlink():
                entries[rel.as_posix()] = "dir"
    for rel in iter_tree(root, EXCLUDE):
        if rel.parts[0] != "build":
            entries[rel.as_posix()] = entry_digest(root, rel)
    return entries


def bundle_manifest(tree: SourceTree) -> dict[str, Any]:
    manifest = listing(tree.root)
    return {
        "format": BUNDLE_FORMAT,
        "kind": tree.kind,
        "version": tree.version,
        "identity": tree.identity,
        "details": dict(tree.details),
        "files": manifest,
        "files_sha256": manifest_digest(manifest),
    }


def _malformed(what: str) -> SourceError:
    return SourceError(
        f"the bundle's {MANIFEST} is malformed: {what}",
        "the bundle is corrupt or was not written by `torchsmith source bundle`; write it again",
    )


def _load(path: Path) -> object:
    if path.is_symlink() or not path.is_file():
        raise SourceError(f"not a torchsmith bundle: no {MANIFEST} inside")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise _malformed(f"larger than {MAX_MANIFEST_BYTES >> 20} MiB")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _malformed(f"not JSON ({exc})") from exc


def _strings(value: dict[Any, Any], name: str) -> dict[str, str]:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _malformed(f"'{name}' must map names to strings")
    return value


def read_manifest(path: Path) -> BundleManifest:
    """The manifest at ``path``, its shape and its ``files_sha256`` checked."""
    data = _load(path)
    if not isinstance(data, dict):
        raise _malformed(f"a JSON {type(data).__name__}, not an object")
    if data.get("format") != BUNDLE_FORMAT:
        raise SourceError(f"unsupported bundle format {data.get('format')!r}")
    wrong = [k for k, kind in _FIELDS.items() if not isinstance(data.get(k), kind)]
    if wrong:
        raise _malformed(f"missing or mistyped: {', '.join(wrong)}")
    files = _strings(data["files"], "files")
    if manifest_digest(files) != data["files_sha256"]:
        raise _malformed("'files_sha256' is not the sha256 of its own 'files' list")
    details = {str(k): str(v) for k, v in data["details"].items()}
    return BundleManifest(data["kind"], data["version"], data["identity"], details, files)
