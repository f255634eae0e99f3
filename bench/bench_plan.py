#!/usr/bin/env python3
"""CPU time of torchsmith's start-up commands, each a fresh process (issue 26's goals: ``plan``
< 0.25 s CPU, ``--help`` and ``kb …`` < 0.15 s CPU, ``host`` < 0.3 s).

Each command runs N times (default 7) after one untimed warm-up run (the page cache, not
Python's); the median CPU (user + sys of the child) and wall seconds are printed and written to
``docs/measured/<name>.json`` with the commit, machine and load.

    python bench/bench_plan.py [--runs N] [--name startup] [--tree DIR]

``--instructions`` also counts, once per command, the instructions the process executes
(valgrind's callgrind, ``Collected``): a number the machine's load does not change, for comparing
two commits on a shared machine (the host probe's child processes are not counted, so ``plan``
and ``host`` with a probe are left out of it).

``--tree DIR`` times the torchsmith of another checkout (e.g. ``git archive COMMIT``
unpacked into DIR; it runs with ``PYTHONPATH=DIR``), so that before and after are measured
from clean trees of named commits, on the same machine, one after the other.

The measured package is byte-compiled first (``python -m compileall``), as ``pip install``
leaves an installed torchsmith: where ``PYTHONDONTWRITEBYTECODE`` is set (it is on the
development machine) a tree without ``__pycache__`` would otherwise compile every module from
source in every run. ``--source`` measures that way instead (records before 2026-11-27 12:30 UTC
did, unknowingly).

The host probe's version cache (``torchsmith/host/version_cache.py``) lives in a temporary cache
root of the bench's own (``TORCHSMITH_CACHE_ROOT``), never the user's: ``plan`` and ``host``
are timed with it filled by their warm-up run (a repeated plan: no compiler started for a
version), and ``plan (empty version cache)`` with a new, empty one in every run (the first
plan on a machine, or after every compiler changed).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

PLAN = ["plan", "--torch", "2.6.0", "--cuda", "12.4", "--gpu", "RTX 4090", "--gpu", "8.0",
        "--with", "torchvision,torchaudio", "--source", "debian", "--json"]  # fmt: skip
GOALS = {"plan": 0.25, "plan (empty version cache)": 0.25, "plan --host-facts": 0.25,
         "--help": 0.15, "kb release": 0.15, "kb releases": 0.15, "host": 0.3}  # fmt: skip
EMPTY_CACHE = "plan (empty version cache)"  # each run with a new cache root


def commands(facts: Path) -> dict[str, list[str]]:
    return {
        "plan": PLAN,
        EMPTY_CACHE: PLAN,
        "plan --host-facts": [*PLAN, "--host-facts", str(facts)],
        "--help": ["--help"],
        "kb release": ["kb", "release", "2.6.0"],
        "kb releases": ["kb", "releases"],
        "host": ["host"],
    }


CACHE_ROOT: dict[str, str] = {}  # TORCHSMITH_CACHE_ROOT of every run: set by main()


def _run(argv: list[str], tree: Path | None, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", **CACHE_ROOT}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return subprocess.run([sys.executable, "-m", "torchsmith", *argv], check=True, env=env,
                          cwd=tree, text=True, **kw)  # fmt: skip


def once(argv: list[str], tree: Path | None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``python -m torchsmith ARGV`` that must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    _run(argv, tree, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


IN_PROCESS = ("plan --host-facts", "--help", "kb release", "kb releases")


def instructions(argv: list[str], tree: Path | None) -> int:
    """Instructions one ``python -m torchsmith ARGV`` executes (callgrind's ``Collected``)."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONHASHSEED": "0"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    grind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run([*grind, sys.executable, "-m", "torchsmith", *argv], env=env, cwd=tree,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=True)  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        sys.exit(f"no instruction count in valgrind's output: {done.stderr[-400:]}")
    return int(found[1])


def byte_compile(tree: Path | None) -> str:
    """Compile the measured package's bytecode, as ``pip install`` does; what was measured."""
    package = (tree or Path(__file__).resolve().parents[1]) / "torchsmith"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return "byte-compiled first (compileall, as pip install does)"


def _empty_cache(argv: list[str], tree: Path | None, scratch: Path) -> tuple[float, float]:
    """One run with a new, empty cache root (the version cache: every executable asked)."""
    kept = dict(CACHE_ROOT)
    CACHE_ROOT["TORCHSMITH_CACHE_ROOT"] = tempfile.mkdtemp(dir=scratch)
    try:
        return once(argv, tree)
    finally:
        CACHE_ROOT.clear()
        CACHE_ROOT.update(kept)


def measure(
    argv: list[str], runs: int, tree: Path | None, empty_in: Path | None = None
) -> dict[str, Any]:
    def one() -> tuple[float, float]:
        return once(argv, tree) if empty_in is None else _empty_cache(argv, tree, empty_in)

    one()  # warm-up, untimed
    samples = [one() for _ in range(runs)]
    return {"argv": argv, "cpu_s": _measured.summary([c for c, _ in samples]),
            "wall_s": _measured.summary([w for _, w in samples])}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--name", default="startup", help="docs/measured/<name>.json")
    parser.add_argument("--tree", type=Path, help="time the torchsmith of this checkout")
    parser.add_argument("--instructions", action="store_true", help="also count instructions")
    parser.add_argument("--source", action="store_true", help="do not byte-compile the package")
    opts = parser.parse_args()
    tree = opts.tree.resolve() if opts.tree else None
    bytecode = "as found (not compiled by the bench)" if opts.source else byte_compile(tree)
    load_before = _measured.load()
    with tempfile.TemporaryDirectory() as tmp:
        CACHE_ROOT["TORCHSMITH_CACHE_ROOT"] = str(Path(tmp) / "cache")  # the bench's own
        facts = Path(tmp) / "host.json"
        facts.write_text(
            _run(["host", "--json"], tree, capture_output=True).stdout, encoding="utf-8"
        )
        results = {
            name: measure(argv, opts.runs, tree, Path(tmp) if name == EMPTY_CACHE else None)
            for name, argv in commands(facts).items()
        }
        if opts.instructions:
            for name in IN_PROCESS:
                results[name]["instructions"] = instructions(commands(facts)[name], tree)
    for name, res in results.items():
        cpu, wall = res["cpu_s"]["median"], res["wall_s"]["median"]
        verdict = "met" if cpu < GOALS[name] else "NOT met"
        res["goal_cpu_s"], res["goal"], res["bytecode"] = GOALS[name], verdict, bytecode
        print(f"{name:20} CPU median {cpu:.3f} s (goal < {GOALS[name]} s: {verdict}), "
              f"wall median {wall:.3f} s, n={opts.runs}"
              + (f", {res['instructions'] / 1e6:,.0f} M instructions" if "instructions" in res
                 else ""))  # fmt: skip
    at = _measured.commit(tree) if tree else None
    print("wrote", _measured.write(opts.name, results, load_before, at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
