#!/usr/bin/env python3
"""Warm rebuild / cold build, and N Pythons / one Python, for a *whole* torch build (issue 15).

Given a finished cold build (its published manifest), the same `torchsmith build` runs again in
another cache root (another workspace, another path: what a second machine or CI job sees) that
shares only the compiler cache directory of the cold one — once for the same Python (warm
rebuild), once per ``--python`` (the same torch for another Python). Each run's manifest gives
the stage times and ccache hits; the script prints them and the ratios.

    python bench/bench_full_rebuild.py --cold DIST/torch-…manifest.json --cache-dir CCACHE_DIR \\
        --work DIR [--python 3.10 ...] [--no-warm] [--name NAME] -- --torch 1.13.1 --cpu \
        --source debian

Everything after ``--`` is the build's own arguments (the cold build's, without --with,
--cache-root, --output-dir). Nothing of the cold build is touched: its ccache directory is read
and written (new objects of another Python are added), its workspace is not used.

A ``--target`` build (a partial build) publishes ``torchsmith-partial-<plan>.manifest.json``
instead of ``torch-….manifest.json``; either is read. The rows and ratios are also written to
``docs/measured/<NAME>.json`` (default ``full-rebuild``) with the commit, machine and load.
Each build runs once (a whole build takes hours on 2 cores): the JSON says ``n`` = 1. Each row
has its wall and CPU seconds (user + system of the build and all its children) and the load before
and after: on a shared machine, grade by CPU as well as by wall. With ``--python``, the JSON's
``n_pythons`` is (the cold run + every ``--python`` run) / the cold run, by CPU, stage seconds
and wall: N Pythons against one, from an empty cache when the cold run ran here.

``--sample N`` makes it a partial build that is labelled as one: ``--target`` every N-th object
the whole torch 1.13.1 CPU build compiled, in the order of its ``.ninja_log`` (the committed
``tests/fixtures/report/debian-1.13.1-cpu-full/ninja_log.xz``: 1231 objects, 7266 job-seconds,
13 % of them torch_python's, the objects compiled again for another Python). Every 10th: 124
objects, 726 job-seconds, 12 % torch_python. What a partial build leaves out (the links, the
wheel, repair, verify) is not measured, and configure weighs more in it than in a whole build.
"""

from __future__ import annotations

import argparse
import json
import lzma
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

# A cold build made with --with: its companions' stages are not part of the torch build.
COMPANION_STAGES = ("companion", "torchvision", "torchaudio", "torchtext")
FULL_LOG = _measured.ROOT / "tests/fixtures/report/debian-1.13.1-cpu-full/ninja_log.xz"


def sample_targets(every: int, log: Path = FULL_LOG) -> list[str]:
    """Every ``every``-th object the whole 1.13.1 CPU build compiled, in its log's order."""
    objects: dict[str, None] = {}
    with lzma.open(log, "rt") as fh:
        lines = fh.read().splitlines()[1:]
    for line in lines:
        path = line.split("\t")[3]
        if path.endswith(".o"):
            objects.setdefault(path, None)
    return list(objects)[::every]


def n_pythons(cold: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """(cold + every other Python's run) / cold, by CPU, stage seconds and wall; None without
    a ``--python`` run. Only a cold row measured here (not composed) has CPU and wall."""
    others = [r for r in rows if r["run"].startswith("python ")]
    if not others:
        return None
    out: dict[str, Any] = {"pythons": 1 + len(others)}
    for key, field in (("by_cpu", "cpu_s"), ("by_stages", "stages_total_s"), ("by_wall", "wall_s")):
        values = [cold.get(field), *(r.get(field) for r in others)]
        known = [float(v) for v in values if isinstance(v, (int, float))]
        ok = len(known) == len(values) and known[0] > 0
        out[key] = round(sum(known) / known[0], 4) if ok else None
    return out


def children_cpu() -> float:
    """User + system CPU seconds of every child process waited for so far (the build's compilers
    included): on a shared, loaded machine the CPU a run used says more than its wall time."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def build(args: list[str], root: Path, cache_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run one build in ``root``; its manifest and what the run cost (wall, CPU, load)."""
    dist = root / "dist"
    argv = [sys.executable, "-m", "torchsmith", "build", *args]
    argv += ["--cache-root", str(root), "--cache-dir", str(cache_dir), "--output-dir", str(dist)]
    cost: dict[str, Any] = {"load_before": _measured.load()}
    started, cpu = time.monotonic(), children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    cost.update(
        wall=time.monotonic() - started, cpu=children_cpu() - cpu, load_after=_measured.load()
    )
    root.mkdir(parents=True, exist_ok=True)
    (root / "build.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        sys.exit(f"build in {root} failed ({done.returncode}): see {root / 'build.log'}")
    data: dict[str, Any] = json.loads(published_manifest(dist).read_text())
    return data, cost


def published_manifest(dist: Path) -> Path:
    """The manifest a build published into ``dist``: a wheel's (``torch-….manifest.json``) or a
    partial build's (``torchsmith-partial-<plan>.manifest.json``, after ``--target``)."""
    found = sorted(dist.glob("torch-*.manifest.json")) or sorted(
        dist.glob("torchsmith-partial-*.manifest.json")
    )
    if len(found) != 1:
        sys.exit(f"expected one manifest in {dist}, found {[p.name for p in found]}")
    return found[0]


def summary(name: str, data: dict[str, Any], cost: dict[str, Any] | None) -> dict[str, Any]:
    every = data.get("stages_all_runs") or data.get("stages") or {}
    stages = {k: v for k, v in every.items() if not k.startswith(COMPANION_STAGES)}
    cache = data.get("compiler_cache") or {}
    total = sum(v for v in stages.values() if isinstance(v, (int, float)))
    return {
        "run": name,
        "torchsmith": data.get("torchsmith"),
        "python": (data.get("plan") or {}).get("python", {}).get("value"),
        "stages_s": {k: round(v, 1) for k, v in stages.items()},
        "compile_s": round(stages.get("compile", 0.0), 1),
        "stages_total_s": round(total, 1),
        "wall_s": None if cost is None else round(cost["wall"], 1),
        "cpu_s": None if cost is None else round(cost["cpu"], 1),
        "load_before": None if cost is None else cost["load_before"],
        "load_after": None if cost is None else cost["load_after"],
        "ccache_hits": cache.get("hits"),
        "ccache_misses": cache.get("misses"),
    }


def cold_row(manifest: Path | None, args: list[str], work: Path, cache_dir: Path) -> dict[str, Any]:
    """The cold build's row: from its manifest (``composed``: made elsewhere, maybe at another
    commit), or from a cold build run now into an empty cache directory."""
    if manifest is not None:
        return {**summary("cold", json.loads(manifest.read_text()), None), "composed": True}
    if cache_dir.exists() and any(cache_dir.iterdir()):
        sys.exit(f"--cache-dir {cache_dir} is not empty: a cold build needs an empty cache")
    data, cost = build(args, work / "cold", cache_dir)
    return {**summary("cold", data, cost), "composed": False}


def ratios(row: dict[str, Any], cold: dict[str, Any]) -> dict[str, float | None]:
    """A run / the cold run: by the manifest's stage seconds, and by the CPU and wall seconds
    measured around each build (None where the cold row has none: a composed one)."""
    out: dict[str, float | None] = {}
    for key, field in (
        ("ratio_to_cold", "stages_total_s"),
        ("ratio_cpu", "cpu_s"),
        ("ratio_wall", "wall_s"),
    ):
        base, value = cold.get(field), row.get(field)
        out[key] = round(value / base, 4) if base and value is not None else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cold",
        type=Path,
        help="the cold build's manifest; without it the cold build runs here first, at this "
        "commit, into an empty --cache-dir (the one-commit measurement issue 26 asks for)",
    )
    parser.add_argument("--cache-dir", type=Path, required=True, help="its ccache directory")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--python", action="append", default=[])
    parser.add_argument("--no-warm", action="store_true")
    parser.add_argument("--name", default="full-rebuild", help="docs/measured/<name>.json")
    parser.add_argument("--sample", type=int, metavar="N", help="a partial build: every N-th "
                        "object of the whole 1.13.1 CPU build (see above)")  # fmt: skip
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    load_before = _measured.load()
    args = [a for a in opts.rest if a != "--"]
    if opts.sample:
        args += [f"--target={t}" for t in sample_targets(opts.sample)]
    cold = cold_row(opts.cold, args, opts.work, opts.cache_dir)
    runs = ([] if opts.no_warm else [("warm", [])]) + [
        (f"python {p}", ["--python", p]) for p in opts.python
    ]
    rows: list[dict[str, Any]] = []
    what = {"sample_every": opts.sample}
    record(opts.name, cold, rows, args, load_before, what=what)  # the cold row is kept if one fails
    for name, extra in runs:
        root = opts.work / name.replace(" ", "-")
        data, cost = build([*args, *extra], root, opts.cache_dir)
        row = summary(name, data, cost)
        rows.append({**row, **ratios(row, cold)})
        print(json.dumps(rows[-1]), flush=True)
        record(opts.name, cold, rows, args, load_before, what=what)


def record(
    name: str,
    cold: dict[str, Any],
    rows: list[dict[str, Any]],
    args: list[str],
    load: list[float],
    *,
    what: dict[str, Any],
) -> None:
    """Write the rows measured so far to ``docs/measured/<name>.json``."""
    targets = [a for a in args if a.startswith("--target")]
    results = {"cold": cold, "runs": rows, "n": 1, "n_pythons": n_pythons(cold, rows),
               "partial": bool(targets), "targets": len(targets), **what,
               "build_args": args}  # fmt: skip
    print("wrote", _measured.write(name, results, load), flush=True)


if __name__ == "__main__":
    main()
