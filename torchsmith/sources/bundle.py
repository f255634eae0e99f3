"""Offline bundles: a fetched source tree (submodules included) in one tarball with a manifest
of every file's sha256, and the ``bundle`` provider that unpacks one on an air-gapped machine and
checks every hash.

Layout inside the tarball: ``torchsmith-bundle.json`` (kind, version, identity and details of
the original source; ``files``: path -> sha256 or ``link:<target>``) and ``source/…``. ``.git``
directories and a top-level ``build/`` are left out.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import LineCallback
from torchsmith.sources import owned
from torchsmith.sources.archive import safe_extract
from torchsmith.sources.base import SourceTree
from torchsmith.sources.git import cache_key
from torchsmith.sources.hashing import entry_digest, iter_tree, manifest_digest

MANIFEST = "torchsmith-bundle.json"
SOURCE = "source"
EXCLUDE = (".git",)
BUNDLE_FORMAT = 1


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


def write_bundle(tree: SourceTree, out: Path, on_line: LineCallback | None = None) -> str:
    """Write ``out`` (a .tar.gz) atomically; returns its sha256."""
    manifest = bundle_manifest(tree)
    tmp = out.with_name(f".{out.name}.partial-{os.getpid()}")
    if on_line is not None:
        on_line(f"bundle: {len(manifest['files'])} files from {tree.root}")
    try:
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            data = json.dumps(manifest, indent=1, sort_keys=True).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            for rel in sorted(manifest["files"]):
                tar.add(tree.root / rel, arcname=f"{SOURCE}/{rel}", recursive=False)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return sha256_file(out)


def _read_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        raise SourceError(f"not a torchsmith bundle: no {MANIFEST} inside")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != BUNDLE_FORMAT:
        raise SourceError(f"unsupported bundle format {data.get('format')!r}")
    return data


def verify_tree(root: Path, files: Mapping[str, str]) -> None:
    """Every file of the manifest is there with its sha256, and nothing else is."""
    found = listing(root)
    missing = sorted(set(files) - set(found))
    extra = sorted(set(found) - set(files))
    changed = sorted(name for name in set(files) & set(found) if files[name] != found[name])
    if missing or extra or changed:
        raise SourceError(
            f"the bundle does not match its manifest: {len(changed)} changed, "
            f"{len(missing)} missing, {len(extra)} unexpected file(s), e.g. "
            + ", ".join((changed + missing + extra)[:3]),
            "the bundle is corrupt or was modified; write it again from the fetched source",
        )


def fetch_bundle(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """Unpack a bundle once (hashes verified) and give its tree with the original identity."""
    del env, install_deps
    bundle = Path(plan.location).expanduser().resolve()
    if not bundle.is_file():
        raise SourceError(f"bundle {bundle} does not exist", "give the file `source bundle` wrote")
    digest = sha256_file(bundle)
    base = owned.claim(cache_root / "bundle", {"purpose": "unpacked source bundles"})
    dest = owned.claim(base / cache_key(str(bundle), digest), {"bundle": str(bundle)})
    if not owned.is_owned(dest / "tree"):
        if on_line is not None:
            on_line(f"bundle: unpacking {bundle}")
        stage = owned.staging_dir(dest, "tree")
        safe_extract(bundle, stage / "src")
        manifest = _read_manifest(stage / "src")
        verify_tree(stage / "src" / SOURCE, manifest["files"])
        owned.publish(stage, dest / "tree")
    manifest = _read_manifest(dest / "tree" / "src")
    details = {f"original:{k}": str(v) for k, v in manifest["details"].items()}
    details |= {"bundle": str(bundle), "bundle_sha256": digest, "original_kind": manifest["kind"]}
    return SourceTree(
        kind="bundle",
        root=dest / "tree" / "src" / SOURCE,
        identity=str(manifest["identity"]),
        version=str(manifest["version"]),
        owned=True,
        details=details,
    )
