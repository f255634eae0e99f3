"""Reliability trial 1 (issue 16), kill anywhere: ``torchsmith build`` as a real process, its
whole process group SIGKILLed (as a job scheduler does) right after a step starts — the steps
of the plan, and once in the middle of ninja's compile — at points drawn at random per run
(seed printed; ``RELIABILITY_SEED`` replays one, ``RELIABILITY_TRIALS`` sets how many);
then the same command. Each trial checks that the rerun finishes; that the output directory,
polled every few milliseconds through both runs, never shows a wheel or manifest that is not
complete (hidden ``.partial-`` temporaries of a killed publish are allowed until the next run
removes them); that after success it holds exactly the wheel and its manifest; and that ninja
reran no edge it had finished (its ``.ninja_log`` at the kill against the rerun's manifest
``ninja.edges_run``, and the finished objects' mtimes unchanged). ``pytest -s`` prints a table.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .small_tree import (
    ATTESTED,
    MANIFEST,
    WHEEL,
    args,
    big_source,
    cli_env,
    make_tree,
    run_cli,
    start_cli,
)

pytestmark = [pytest.mark.slow, pytest.mark.network]

POINTS = (
    "fetch", "copy", "environment", "fixes", "configure", "compile", "compile-mid", "package",
    "repair", "publish",
)  # fmt: skip
BIG = {f"big{i}": big_source(f"big{i}", 250_000) for i in range(6)}
EDGES = 3 + len(BIG) + 1  # objects and the link
POLL_S = 0.005


@dataclass
class Trial:
    point: str
    killed_in: str = "-"
    finished_edges: dict[str, int] = field(default_factory=dict)
    temporaries: set[str] = field(default_factory=set)
    bad: list[str] = field(default_factory=list)
    resume: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def ninja_log(cache: Path) -> dict[str, int]:
    """Outputs ninja recorded as finished, with their mtimes (ns) now."""
    found: dict[str, int] = {}
    for log in cache.glob("builds/*/src/build/.ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            output = line.split("\t")[3] if line.count("\t") >= 4 else ""
            path = log.parent / output
            if output.endswith((".o", ".so")) and path.exists():
                found[output] = path.stat().st_mtime_ns
    return found


def check_dist(dist: Path, trial: Trial) -> None:
    """What a reader of the output directory sees right now is whole, or hidden."""
    for path in dist.iterdir() if dist.is_dir() else []:
        try:
            if path.name.startswith(".") and ".partial-" in path.name:
                trial.temporaries.add(path.name)
            elif path.name.endswith(".whl"):
                assert zipfile.ZipFile(path).testzip() is None
            elif path.name.endswith(".json"):
                json.loads(path.read_text())
            else:
                trial.bad.append(f"unexpected {path.name}")
        except FileNotFoundError:
            continue  # replaced or removed between listing and reading
        except (zipfile.BadZipFile, ValueError, AssertionError) as exc:
            trial.bad.append(f"incomplete {path.name}: {exc}")


def should_kill(point: str, lines: list[str], cache: Path, at_objects: int) -> bool:
    if point == "compile-mid":
        started = any(line.startswith("==> compile:") for line in lines)
        return started and len(ninja_log(cache)) >= at_objects
    return any(line.startswith(f"==> {point}:") for line in lines)


def kill_run(argv: list[str], trial: Trial, cache: Path, dist: Path, at_objects: int) -> None:
    """Start the build, kill its process group at the trial's point, watching ``dist``."""
    child = start_cli(argv, cli_env())
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(child.stdout.readline, "")))  # type: ignore[union-attr]
    reader.start()
    while child.poll() is None:
        check_dist(dist, trial)
        if should_kill(trial.point, list(lines), cache, at_objects):
            os.killpg(child.pid, signal.SIGKILL)
            break
        time.sleep(POLL_S)
    child.wait()
    reader.join()
    child.stdout.close()  # type: ignore[union-attr]
    started = [line.split(":")[0][4:] for line in lines if line.startswith("==> ")]
    trial.killed_in = started[-1] if started and child.returncode < 0 else "(finished)"
    trial.finished_edges = ninja_log(cache)


def resume_run(argv: list[str], trial: Trial, dist: Path) -> str:
    """The same command again, ``dist`` watched from another thread; its output."""
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            check_dist(dist, trial)
            time.sleep(POLL_S)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = run_cli(argv, cli_env())
    finally:
        done.set()
        watcher.join()
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def check_result(trial: Trial, cache: Path, dist: Path) -> None:
    assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, MANIFEST, *ATTESTED])
    manifest = json.loads((dist / MANIFEST).read_text())
    wheel = (dist / WHEEL).read_bytes()
    assert manifest["artifacts"][0]["sha256"] == hashlib.sha256(wheel).hexdigest()
    trial.resume = {**manifest["ninja"], "cache": manifest.get("compiler_cache")}
    after = ninja_log(cache)
    rebuilt = [out for out, mtime in trial.finished_edges.items() if after.get(out) != mtime]
    assert not rebuilt, f"{trial.point}: finished outputs rebuilt: {rebuilt}"
    if trial.finished_edges or manifest["ninja"]["edges_run"]:
        assert manifest["ninja"]["edges_run"] == EDGES - len(trial.finished_edges), trial
    assert not trial.bad, trial.bad


def one_trial(point: str, root: Path, rng: random.Random) -> Trial:
    tree = make_tree(root / "tree", extra=BIG)
    cache, dist = root / "cache", root / "dist"
    argv = args(tree, cache, dist)
    trial = Trial(point)
    start = time.monotonic()
    kill_run(argv, trial, cache, dist, at_objects=rng.randint(1, EDGES - 2))
    resume_run(argv, trial, dist)
    trial.seconds = time.monotonic() - start
    check_result(trial, cache, dist)
    return trial


def table(seed: int, trials: list[Trial]) -> str:
    rows = [f"kill-anywhere trials, seed {seed} (RELIABILITY_SEED={seed} replays them)"]
    rows.append(f"{'point':<12} {'killed in':<12} {'edges done':>10} {'rerun ran':>9} "
                f"{'temps seen':>10} {'cache hits':>10} {'s':>5}")  # fmt: skip
    for t in trials:
        hits = (t.resume.get("cache") or {}).get("hits", "-")
        rows.append(
            f"{t.point:<12} {t.killed_in:<12} {len(t.finished_edges):>10} "
            f"{t.resume['edges_run']:>9} {len(t.temporaries):>10} {hits!s:>10} {t.seconds:>5.1f}"
        )
    return "\n".join(rows)


def test_kill_anywhere_then_the_same_command_finishes(tmp_path: Path) -> None:
    seed = int(os.environ.get("RELIABILITY_SEED") or random.randrange(2**31))
    count = int(os.environ.get("RELIABILITY_TRIALS", "4"))
    print(f"\nkill-anywhere seed {seed}")
    rng = random.Random(seed)
    points = rng.sample(POINTS, k=min(count, len(POINTS)))
    trials = [one_trial(point, tmp_path / f"t{i}", rng) for i, point in enumerate(points)]
    print(table(seed, trials))
