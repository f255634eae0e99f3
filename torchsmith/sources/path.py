"""The ``path`` source provider: an existing checkout, never modified.

Unless the plan says ``in_place``, the tree is copied (``build/`` left out) into a
torchsmith-owned directory, and the build and every fix act on the copy. The identity is the
git HEAD commit (plus ``+dirty.<hash of the diff>`` when the work tree differs), or the sha256
of the tree's file listing for a directory without git. Reading the identity never writes to
the user's ``.git`` (``--no-optional-locks``).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import owned
from torchsmith.sources.base import SourceTree
from torchsmith.sources.git import cache_key
from torchsmith.sources.hashing import entry_digest, manifest_digest, tree_manifest

EXCLUDE_TOP = frozenset({"build"})


def _git(root: Path, env: Mapping[str, str], runner: Runner, *args: str) -> str | None:
    argv = ["git", "--no-optional-locks", "-C", str(root), *args]
    try:
        done = runner.capture(argv, env=env, timeout=120)
    except FileNotFoundError:
        return None
    return done.stdout if done.returncode == 0 else None


def identity_of(root: Path, env: Mapping[str, str], runner: Runner) -> tuple[str, dict[str, str]]:
    """(identity, details) of a user's tree."""
    head = _git(root, env, runner, "rev-parse", "HEAD") if (root / ".git").exists() else None
    if head is None:
        listing = tree_manifest(root)
        kept = {k: v for k, v in listing.items() if k.split("/", 1)[0] not in EXCLUDE_TOP}
        digest = manifest_digest(kept)
        return digest, {"identity_from": "sha256 of the file listing (no git)"}
    commit = head.strip()
    diff = _git(root, env, runner, "diff", "HEAD", "--binary", "--submodule=diff") or ""
    untracked = _git(root, env, runner, "ls-files", "--others", "--exclude-standard", "-z") or ""
    names = sorted(n for n in untracked.split("\0") if n and not n.startswith("build/"))
    if not diff and not names:
        return commit, {"commit": commit, "dirty": "false"}
    hasher = hashlib.sha256(diff.encode())
    for name in names:
        hasher.update(f"\0{name}\0{entry_digest(root, Path(name))}".encode())
    details = {"commit": commit, "dirty": "true", "untracked_files": str(len(names))}
    return f"{commit}+dirty.{hasher.hexdigest()[:12]}", details


def _ignore_top(root: Path) -> Callable[[str, list[str]], set[str]]:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return set(names) & EXCLUDE_TOP if Path(directory) == root else set()

    return ignore


def _copy(root: Path, dest: Path, on_line: LineCallback | None) -> None:
    stage = owned.staging_dir(dest, "tree")
    if on_line is not None:
        on_line(f"path: copying {root} (without build/) to {dest / 'tree'}")
    shutil.copytree(root, stage / "src", symlinks=True, ignore=_ignore_top(root))
    owned.record_listing(stage)
    owned.publish(stage, dest / "tree")


def fetch_path(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    runner: Runner,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """The user's tree itself (``in_place``) or an owned copy of it, with its identity."""
    del install_deps
    root = Path(plan.location).expanduser().resolve()
    if not (root / "setup.py").is_file() and not (root / "CMakeLists.txt").is_file():
        raise SourceError(
            f"{root} is not a PyTorch source tree (no setup.py or CMakeLists.txt)",
            "give the directory that holds the top-level setup.py",
        )
    identity, details = identity_of(root, env, runner)
    details["path"] = str(root)
    if plan.in_place:
        return SourceTree("path", root, identity, _version(root), owned=False, details=details)
    base = owned.claim(cache_root / "path", {"purpose": "copies of user trees"})
    dest = owned.claim(base / cache_key(str(root), ""), {"path": str(root)})
    with owned.locked(dest, f"the copy of {root}", on_line):
        if owned.read_info(dest).get("identity") != identity or not owned.is_owned(dest / "tree"):
            _copy(root, dest, on_line)
            owned.update_info(dest, identity=identity)
        else:
            owned.check_listing(dest / "tree", f"the copy of {root}")
    details["copy_of"] = str(root)
    return SourceTree("path", dest / "tree" / "src", identity, _version(root), True, details)


def _version(root: Path) -> str:
    version_file = root / "version.txt"
    return version_file.read_text(encoding="utf-8").strip() if version_file.is_file() else ""
