#!/usr/bin/env python3
"""The same plan built twice fully cold, in two workspace paths and at two clocks, gives the same
wheel (issue 29): torchvision 0.21.0 (Debian trixie's orig, CPU ops) against PyPI's torch 2.6.0
in an interpreter's environment, by `torchsmith build`.

Each build gets its own new cache root (so its own workspace path, of another depth, and an
empty compiler cache: every object is compiled), another time zone (``TZ``) and starts later
than the one before; the sources' files are extracted anew in each. The wheels' sha256 are
compared; when they differ, the differing members are listed.

    python bench/bench_reproducible.py --work DIR [--python PY_WITH_TORCH_2_6_0] [--name NAME]

Without ``--python``, a venv of /usr/bin/python3.11 is made under DIR holding the torch 2.6.0
wheel of the test cache (``.cache/test/wheels``, as tests/integration/test_companion_against.py
downloads it) with its requirements. Writes ``docs/measured/<NAME>.json`` (default
``reproducible-torchvision``) with the commit, machine, load, each build's wall time, compiler
cache counts and wheel sha256. Each build runs once (n = 1): a few minutes each on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

from torchsmith.hashing import sha256_file
from torchsmith.packaging.wheel_normal import stamp_differences

WHEELS = _measured.ROOT / ".cache" / "test" / "wheels"
RUNS = (("a", "UTC"), ("b/deeper/path", "Pacific/Kiritimati"))
"""Each build's cache root under the work directory and its time zone."""


def user_python(work: Path) -> Path:
    """A venv holding torch 2.6.0 (cp311) and what it needs to be imported."""
    venv = work / "user-venv"
    python = venv / "bin" / "python"
    if not python.is_file():
        [wheel] = sorted(WHEELS.glob("torch-2.6.0-cp311-*.whl"))
        subprocess.run(["/usr/bin/python3.11", "-m", "venv", str(venv)], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True)
    return python


def build_args(python: Path, root: Path) -> list[str]:
    return [
        "build", "--with", "torchvision", "--against", f"python:{python}", "--source", "debian",
        "--cpu", "--no-verify", "--cache-root", str(root), "--output-dir", str(root / "dist"),
    ]  # fmt: skip


def build(python: Path, root: Path, tz: str) -> dict[str, Any]:
    """One cold build in ``root``; its wheel, sha256, wall time and compiler cache counts."""
    env = {**os.environ, "TZ": tz}
    started = time.monotonic()
    argv = [sys.executable, "-m", "torchsmith", *build_args(python, root)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    (root / "build.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        sys.exit(f"build in {root} failed ({done.returncode}): see {root / 'build.log'}")
    [wheel] = sorted((root / "dist").glob("torchvision-*.whl"))
    [manifest] = sorted((root / "dist").glob("companions-*.manifest.json"))
    data = json.loads(manifest.read_text())
    return {
        "root": str(root), "tz": tz, "wheel": wheel.name, "sha256": sha256_file(wheel),
        "bytes": wheel.stat().st_size, "wall_s": round(wall, 1), "plan_hash": data["plan_hash"],
        "workspace": data["workspace"], "compiler_cache": data["companions"][0]["compiler_cache"],
        "path": str(wheel),
    }  # fmt: skip


def differing_members(a: Path, b: Path) -> list[str]:
    """Members whose content, time or mode differ, or that only one wheel holds."""
    return stamp_differences(a, b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="an empty directory")
    parser.add_argument("--python", type=Path, help="an interpreter whose env has torch 2.6.0")
    parser.add_argument("--name", default="reproducible-torchvision")
    ns = parser.parse_args()
    load_before = _measured.load()
    python = ns.python or user_python(ns.work)
    runs = []
    for sub, tz in RUNS:
        root = ns.work / sub / "root"
        if root.exists():
            sys.exit(f"{root} exists: give an empty --work (every build must be cold)")
        root.mkdir(parents=True)
        runs.append(build(python, root, tz))
        print(json.dumps(runs[-1], indent=2))
    identical = runs[0]["sha256"] == runs[1]["sha256"]
    differ = [] if identical else differing_members(Path(runs[0]["path"]), Path(runs[1]["path"]))
    results = {"identical": identical, "differing_members": differ, "runs": runs}
    path = _measured.write(ns.name, results, load_before)
    print(f"identical: {identical}; written {path}")
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
