"""Build workspaces: one directory per plan hash under the cache root.

``<cache_root>/builds/<plan_hash>/`` holds ``workspace.json`` (the marker that torchsmith created
the directory, the plan hash, the tool versions), ``plan.json``, the source copy ``src/``, the
Python build environment ``venv/``, ``logs/`` and stage markers. A workspace whose info no
longer matches (other tool versions, another plan hash, a half-made directory) is wiped and
made again, with the reason said. A directory without torchsmith's marker is never deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith import __version__, atomic, lock
from torchsmith.atomic import write_json
from torchsmith.cache.trust import ancestor_reason
from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan
from torchsmith.redact import redact_data
from torchsmith.writable import writable_dir

MARKER = "created-by-torchsmith"
INFO_NAME = "workspace.json"
Say = Callable[[str], None]


@dataclass(frozen=True)
class Workspace:
    """The directories of one plan's build."""

    root: Path
    plan_hash: str
    lock: lock.DirLock | None = field(default=None, compare=False, repr=False)
    """Held while this process builds here (``builds/<hash>/.lock``): one writer per plan."""

    def release(self) -> None:
        """Let another run use this workspace (also happens when this process exits)."""
        if self.lock is not None:
            self.lock.release()

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def build_dir(self) -> Path:
        return self.src / "build"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def log(self, stage: str) -> Path:
        return self.logs / f"{stage}.log"

    def marker(self, stage: str) -> Path:
        return self.root / "stages" / f"{stage}.done"

    def is_done(self, stage: str) -> bool:
        return self.marker(stage).exists()

    def mark_done(self, stage: str, data: Mapping[str, Any] | None = None) -> None:
        path = self.marker(stage)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, dict(data or {}))

    def timings(self) -> dict[str, float]:
        path = self.root / "timings.json"
        data = json.loads(path.read_text()) if path.is_file() else {}
        return {str(k): float(v) for k, v in data.items()}

    def add_time(self, stage: str, seconds: float) -> dict[str, float]:
        """Add a stage's wall time to this workspace's running totals (over every run, also
        the interrupted ones); the totals."""
        totals = self.timings()
        totals[stage] = round(totals.get(stage, 0.0) + seconds, 1)
        write_json(self.root / "timings.json", totals)
        return totals

    def read_marker(self, stage: str) -> dict[str, Any]:
        data = json.loads(self.marker(stage).read_text())
        return data if isinstance(data, dict) else {}


def plan_record(plan: BuildPlan) -> dict[str, Any]:
    """The plan as stored (``plan.json``, manifests): URL credentials redacted."""
    data: dict[str, Any] = redact_data(plan.model_dump(mode="json"))
    return data


def check_cache_root(cache_root: Path, euid: int | None = None) -> Path:
    """Make ``cache_root`` (mode 0700) or check an existing one: as root, refuse one that
    another user owns or that group/others may write (root would run code from it)."""
    existed = cache_root.is_dir()
    writable_dir(  # made here, or a file / an unwritable place named as such (trial E14)
        cache_root,
        "the cache root (--cache-root or TORCHSMITH_CACHE_ROOT)",
        "pass --cache-root DIR: a directory you can write, on a disk with room",
        mode=0o700,
        error=HostError,
    )
    if not existed:
        return cache_root
    euid = os.geteuid() if euid is None else euid
    info = cache_root.stat()
    if euid == 0 and (info.st_uid != euid or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        raise HostError(
            f"cache root {cache_root} is owned by uid {info.st_uid} with mode "
            f"{stat.filemode(info.st_mode)}: running as root, torchsmith would run code "
            "(build scripts, the venv, compiler-cache entries) that other users can change",
            f"use a cache root only root can write (--cache-root /root/.cache/torchsmith), "
            f"or fix this one: chown root {cache_root} && chmod go-w {cache_root}",
        )
    _check_parents(cache_root, euid)
    return cache_root


def _check_parents(cache_root: Path, euid: int) -> None:
    """As root, no directory above the cache root may let another user swap it (L3)."""
    problem = ancestor_reason(cache_root, euid)
    if problem is not None:
        raise HostError(
            f"cache root {cache_root}: {problem}, so another user could replace the cache root "
            "with a tree of their own while torchsmith, running as root, builds from it",
            "use a cache root whose every parent only root can write (--cache-root "
            "/root/.cache/torchsmith)",
        )


def workspace_info(plan_hash: str, tools: Mapping[str, str]) -> dict[str, Any]:
    return {
        "marker": MARKER,
        "plan_hash": plan_hash,
        "tools": dict(sorted(tools.items())),
        "torchsmith": __version__,
    }


def read_info(root: Path) -> dict[str, Any] | None:
    """The info of a workspace directory; None when it has none (not ours, or half-made)."""
    try:
        data = json.loads((root / INFO_NAME).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("marker") == MARKER else None


def stale_reason(info: Mapping[str, Any], plan_hash: str, tools: Mapping[str, str]) -> str | None:
    """Why an existing workspace cannot be reused, or None when it can."""
    if info.get("plan_hash") != plan_hash:
        return f"it was made for plan {info.get('plan_hash')}, not {plan_hash}"
    old = info.get("tools", {})
    changed = [f"{k} {old.get(k)} → {v}" for k, v in sorted(tools.items()) if old.get(k) != v]
    return f"the tools changed: {', '.join(changed)}" if changed else None


def plan_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Top-level plan fields whose values differ (for "why a new build")."""
    keys = sorted(set(old) | set(new))
    return [k for k in keys if old.get(k) != new.get(k) and k not in ("warnings", "outputs")]


def _contents(root: Path) -> list[Path]:
    """What ``root`` holds besides the lock file, its info file last."""
    found = [p for p in root.iterdir() if p.name != lock.LOCK_NAME] if root.is_dir() else []
    return sorted(found, key=lambda p: p.name == INFO_NAME)


def _refuse_foreign(root: Path) -> None:
    """Refuse a non-empty ``root`` without our info (checked before anything is written). The
    temporary of the info file itself (a run killed while writing it) does not count."""
    info_temp = f".{INFO_NAME}{atomic.PARTIAL}"
    others = [p for p in _contents(root) if not p.name.startswith(info_temp)]
    if read_info(root) is None and others:
        raise HostError(
            f"{root} exists but was not created by torchsmith; refusing to delete it",
            "move it away or choose another --cache-root",
        )


def _remove_ours(root: Path, reason: str, say: Say) -> None:
    """Empty an owned workspace (the lock file, which this run holds, stays; the info file
    goes last, so a directory with files always says it is ours)."""
    _refuse_foreign(root)
    say(f"cleaning build dir {root}: {reason}")
    for path in _contents(root):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _previous_plan_note(builds: Path, root: Path, plan: BuildPlan) -> str | None:
    """Explain a new plan hash by the newest earlier workspace of the same torch and source."""
    new = plan_record(plan)
    candidates = []
    for other in builds.iterdir() if builds.is_dir() else []:
        plan_file = other / "plan.json"
        if other == root or read_info(other) is None or not plan_file.is_file():
            continue
        old = json.loads(plan_file.read_text())
        if old.get("torch") == new["torch"] and old.get("source") == new["source"]:
            candidates.append((plan_file.stat().st_mtime, other.name, old))
    if not candidates:
        return None
    _, name, old = max(candidates)
    diff = ", ".join(plan_differences(old, new)) or "nothing visible"
    return f"new plan {root.name} (the last build of this source, {name}, differs in: {diff})"


def prepare_workspace(
    cache_root: Path,
    plan: BuildPlan,
    tools: Mapping[str, str],
    say: Say,
    wait_s: float = lock.WAIT_S,
) -> Workspace:
    """The workspace for ``plan``, locked for this process (a second run of the plan waits up
    to ``wait_s``, then gets a :class:`HostError` naming the holder): reused when its info
    matches, else made clean."""
    plan_hash = plan.plan_hash()
    builds = check_cache_root(cache_root) / "builds"
    root = builds / plan_hash
    if not root.exists():
        say(_previous_plan_note(builds, root, plan) or f"new build dir {root}")
    if not (root / lock.LOCK_NAME).is_file():  # with it: ours, maybe being made right now
        _refuse_foreign(root)
    held = lock.acquire(root, f"the build directory of plan {plan_hash}", wait_s)
    try:
        return _reuse_or_create(Workspace(root, plan_hash, held), plan, tools, say)
    except BaseException:
        held.release()
        raise


def _reuse_or_create(
    ws: Workspace, plan: BuildPlan, tools: Mapping[str, str], say: Say
) -> Workspace:
    if _contents(ws.root):
        info = read_info(ws.root)
        reason = "it has no workspace info (a half-made directory)" if info is None else None
        reason = reason or stale_reason(info or {}, ws.plan_hash, tools)
        if reason is None:
            say(f"resuming in {ws.root}")
            return ws
        _remove_ours(ws.root, reason, say)
    _create(ws.root, plan, tools)
    return ws


def _create(root: Path, plan: BuildPlan, tools: Mapping[str, str]) -> None:
    info = workspace_info(plan.plan_hash(), tools)
    info["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_json(root / INFO_NAME, info)  # first: a directory with files always has it
    write_json(root / "plan.json", plan_record(plan))
