"""Offline bundles: a fetched source tree (submodules included) in one tarball with a manifest
of every file's sha256, and the ``bundle`` provider that unpacks one on an air-gapped machine and
checks every hash.

Layout inside the tarball: ``torchsmith-bundle.json`` (kind, version, identity and details of
the original source; ``files``: path -> sha256, ``link:<target>`` or ``dir``; ``files_sha256``)
and ``source/…``. ``.git`` directories and a top-level ``build/`` are left out. Writing is
reproducible: the same tree gives the same bytes (sorted members, fixed mtime, owner 0 without
names, modes 0o755/0o644, no gzip name or time).

A bundle cannot vouch for itself: only ``bundle:FILE#sha256=HEX`` (the spec ``source bundle``
prints) pins it. The identity inside is recorded as ``claimed:<id>`` unless it can be checked:
the bundle is pinned and the knowledge base records the same identity for the original source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import hostdeps, owned
from torchsmith.sources.archive import safe_extract
from torchsmith.sources.base import BUILD_DEPENDS, SourceKind, SourceTree
from torchsmith.sources.bundle_format import (
    MANIFEST,
    SOURCE,
    BundleManifest,
    bundle_manifest,
    listing,
    read_manifest,
)
from torchsmith.sources.bundle_write import write_bundle
from torchsmith.sources.git import cache_key
from torchsmith.sources.identity import check_identity
from torchsmith.sources.tarball import split_location

__all__ = ["bundle_manifest", "bundle_spec", "fetch_bundle", "listing", "write_bundle"]

CLAIMED = "claimed:"
# Trees unpacked before every member was checked lived in "tree": never reuse one of those.
TREE = "checked-tree"
NOT_RECORDED = "not recorded in the knowledge base"


def bundle_spec(path: Path, digest: str) -> str:
    """The ``--source`` value that pins a bundle to its bytes."""
    return f"bundle:{path}#sha256={digest}"


def verify_tree(root: Path, files: Mapping[str, str]) -> None:
    """Every file of the manifest is there with its sha256, and nothing else is."""
    found = listing(root) if root.is_dir() and not root.is_symlink() else {}
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


def _say(on_line: LineCallback | None, text: str) -> None:
    if on_line is not None:
        on_line(text)


def _pinned_digest(bundle: Path, expected: str | None, on_line: LineCallback | None) -> str:
    digest = sha256_file(bundle)
    if expected is not None and digest != expected:
        raise SourceError(
            f"bundle {bundle} has sha256 {digest}, not the {expected} the source names",
            "the file was replaced or corrupted: take the bundle (and the --source value) that "
            "`torchsmith source bundle` printed",
        )
    if expected is None:
        _say(
            on_line,
            f"WARNING: bundle {bundle} is not pinned (no #sha256=): anyone who could replace the "
            "file chose this source, and its identity is only claimed; use the "
            f"'bundle:FILE#sha256=HEX' value `torchsmith source bundle` printed ({digest})",
        )
    return digest


def _unpack(bundle: Path, dest: Path, on_line: LineCallback | None) -> None:
    _say(on_line, f"bundle: unpacking {bundle}")
    stage = owned.staging_dir(dest, TREE)
    safe_extract(bundle, stage / "src", only={MANIFEST, SOURCE})
    manifest = read_manifest(stage / "src" / MANIFEST)
    verify_tree(stage / "src" / SOURCE, manifest.files)
    owned.publish(stage, dest / TREE)


def _original(manifest: BundleManifest, root: Path) -> SourceTree:
    kind: SourceKind = "bundle"
    if manifest.kind in get_args(SourceKind):
        kind = manifest.kind  # type: ignore[assignment]  # checked against the Literal above
    identity = manifest.identity.removeprefix(CLAIMED)
    return SourceTree(kind, root, identity, manifest.version, False, dict(manifest.details))


def checked_identity(manifest: BundleManifest, root: Path, pinned: bool) -> tuple[str, str]:
    """(identity, how it was checked). A claim the KB contradicts is an error; one it confirms
    counts only for a pinned bundle (anyone can copy the KB's value into a forged one)."""
    original = _original(manifest, root)
    try:
        note = check_identity(original, kb.load())
    except SourceError as exc:
        raise SourceError(f"the bundle claims a source it is not: {exc.message}", exc.hint) from exc
    if note == NOT_RECORDED:
        return (
            CLAIMED + original.identity,
            "claimed by the bundle; the knowledge base records nothing to check it against",
        )
    if not pinned:
        return CLAIMED + original.identity, f"claimed; {note}, but the bundle is not pinned"
    return original.identity, f"{note}; bundle pinned by sha256"


_DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?")
"""Debian Policy 5.6.1 (https://www.debian.org/doc/debian-policy/ch-controlfields.html#source):
lower case letters, digits, '+', '-' and '.', two characters at least, starting alphanumeric;
an architecture qualifier may follow a ':'."""


def _check_build_deps(
    manifest: BundleManifest,
    env: Mapping[str, str],
    install: bool,
    on_line: LineCallback | None,
    runner: Runner,
) -> None:
    packages = str(manifest.details.get(BUILD_DEPENDS, "")).split()
    odd = [name for name in packages if not _DEBIAN_PACKAGE.fullmatch(name)]
    if odd:  # they would reach apt-get's argv: '-oDPkg::Pre-Invoke::=…' runs a command as root
        raise SourceError(
            f"the bundle names {odd[0][:80]!r} as a build dependency: not a Debian package name",
            "use a bundle `torchsmith source bundle` wrote; this one was edited or forged",
        )
    if manifest.kind == "debian" and packages:
        why = f"building the bundled Debian source of {manifest.version}"
        hostdeps.ensure_packages(
            packages, env, runner=runner, install=install, why=why, on_line=on_line
        )


def fetch_bundle(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    runner: Runner,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """Unpack a bundle once (every member and hash checked) and give its tree; a bundle of a
    Debian source demands (or installs) that source's build dependencies here, on the machine
    that builds — not where it was packed."""
    location, expected = split_location(plan.location)
    bundle = Path(location).expanduser().resolve()
    if not bundle.is_file():
        raise SourceError(f"bundle {bundle} does not exist", "give the file `source bundle` wrote")
    digest = _pinned_digest(bundle, expected, on_line)
    base = owned.claim(cache_root / "bundle", {"purpose": "unpacked source bundles"})
    dest = owned.claim(base / cache_key(str(bundle), digest), {"bundle": str(bundle)})
    with owned.locked(dest, f"the bundle cache entry {dest.name}", on_line):
        if not owned.is_owned(dest / TREE):
            _unpack(bundle, dest, on_line)
    manifest = read_manifest(dest / TREE / "src" / MANIFEST)
    root = dest / TREE / "src" / SOURCE
    identity, how = checked_identity(manifest, root, pinned=expected is not None)
    _check_build_deps(manifest, env, install_deps, on_line, runner)
    details = {f"original:{k}": str(v) for k, v in manifest.details.items()}
    details |= {"bundle": str(bundle), "bundle_sha256": digest, "original_kind": manifest.kind}
    details |= {"bundle_pinned": "sha256" if expected else "no", "bundle_identity": how}
    return SourceTree("bundle", root, identity, manifest.version, True, details)
