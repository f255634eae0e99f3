"""What every bench script writes: its numbers as JSON in ``docs/measured/`` with the commit, the
machine, the load and the median of N (never the minimum), so that a number in
``docs/benchmarks.md`` can be traced to one run of one script at one commit."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "measured"


def _git(*args: str, cwd: Path = ROOT) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return out.stdout.strip()


def commit(tree: Path | None = None) -> dict[str, Any]:
    """HEAD, and whether the tree differs from it (a dirty tree is said, never hidden). A
    ``tree`` unpacked by ``git archive`` has no .git: its commit is read from the archive's
    header (``git get-tar-commit-id``), saved by the caller as ``tree/COMMIT``."""
    tree = tree or (ROOT if (ROOT / "COMMIT").is_file() else None)  # run from such a tree
    if tree is not None and (tree / "COMMIT").is_file():
        return {"sha": (tree / "COMMIT").read_text().strip(), "dirty": False, "tree": str(tree)}
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "torchsmith", "bench")
    return {"sha": _git("rev-parse", "HEAD") or "unknown", "dirty": bool(dirty)}


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": platform.node(), "cpus": os.cpu_count(), "cpu": cpu,
            "python": platform.python_version(), "kernel": platform.release()}  # fmt: skip


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages (a shared machine's other work shows here)."""
    return [round(x, 2) for x in os.getloadavg()]


def summary(values: list[float]) -> dict[str, Any]:
    """Median of N, with the spread; never the minimum alone."""
    return {"n": len(values), "median": round(statistics.median(values), 4),
            "min": round(min(values), 4), "max": round(max(values), 4),
            "values": [round(v, 4) for v in values]}  # fmt: skip


def write(
    name: str, results: dict[str, Any], load_before: list[float], at: dict[str, Any] | None = None
) -> Path:
    """``docs/measured/<name>.json``: the results with commit (``at``, else this checkout's),
    machine and load before/after."""
    payload = {
        "bench": name,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": at or commit(),
        "machine": machine(),
        "load_before": load_before,
        "load_after": load(),
        "results": results,
    }
    MEASURED.mkdir(parents=True, exist_ok=True)
    path = MEASURED / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
