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
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith import __version__
from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan

MARKER = "created-by-torchsmith"
INFO_NAME = "workspace.json"
Say = Callable[[str], None]


@dataclass(frozen=True)
class Workspace:
    """The directories of one plan's build."""

    root: Path
    plan_hash: str

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
        write_json_atomic(path, dict(data or {}))

    def timings(self) -> dict[str, float]:
        path = self.root / "timings.json"
        data = json.loads(path.read_text()) if path.is_file() else {}
        return {str(k): float(v) for k, v in data.items()}

    def add_time(self, stage: str, seconds: float) -> dict[str, float]:
        """Add a stage's wall time to this workspace's running totals (over every run, also
        the interrupted ones); the totals."""
        totals = self.timings()
        totals[stage] = round(totals.get(stage, 0.0) + seconds, 1)
        write_json_atomic(self.root / "timings.json", totals)
        return totals

    def read_marker(self, stage: str) -> dict[str, Any]:
        data = json.loads(self.marker(stage).read_text())
        return data if isinstance(data, dict) else {}


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary sibling, fsync it, then rename over ``path``."""
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


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


def _remove_ours(root: Path, reason: str, say: Say) -> None:
    if read_info(root) is None and any(root.iterdir()):
        raise HostError(
            f"{root} exists but was not created by torchsmith; refusing to delete it",
            "move it away or choose another --cache-root",
        )
    say(f"cleaning build dir {root}: {reason}")
    shutil.rmtree(root)


def _previous_plan_note(builds: Path, root: Path, plan: BuildPlan) -> str | None:
    """Explain a new plan hash by the newest earlier workspace of the same torch and source."""
    new = plan.model_dump(mode="json")
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
    cache_root: Path, plan: BuildPlan, tools: Mapping[str, str], say: Say
) -> Workspace:
    """The workspace for ``plan``: reused when its info matches, else made clean."""
    plan_hash = plan.plan_hash()
    builds = cache_root / "builds"
    root = builds / plan_hash
    if root.exists():
        info = read_info(root)
        reason = "it has no workspace info (a half-made directory)" if info is None else None
        reason = reason or stale_reason(info or {}, plan_hash, tools)
        if reason is None:
            say(f"resuming in {root}")
            return Workspace(root, plan_hash)
        _remove_ours(root, reason, say)
    else:
        say(_previous_plan_note(builds, root, plan) or f"new build dir {root}")
    return _create(root, plan, tools)


def _create(root: Path, plan: BuildPlan, tools: Mapping[str, str]) -> Workspace:
    root.mkdir(parents=True)
    info = workspace_info(plan.plan_hash(), tools)
    info["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write_json_atomic(root / INFO_NAME, info)  # first: a directory with files always has it
    write_json_atomic(root / "plan.json", plan.model_dump(mode="json"))
    return Workspace(root, plan.plan_hash())
