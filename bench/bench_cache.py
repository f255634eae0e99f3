#!/usr/bin/env python3
"""Warm rebuild / cold build of the same target set through a shared compiler cache.

Two ``torchsmith build`` runs of Debian's pytorch 1.13.1 (``--source debian``) in two cache
roots (separate workspaces, separate empty local caches) that share one remote: a Redis
started here on 127.0.0.1 (Debian's redis-server). The first run fills the remote (cold), the
second gets its objects from it (warm). Prints each run's stage times, cache hits and the
warm/cold ratios (compile stage, whole build).

    python bench/bench_cache.py [--target c10 ...] [--kind ccache|sccache] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    proc = subprocess.Popen([*argv, "--appendonly", "no", "--dir", str(work)],
                            stdout=subprocess.DEVNULL)  # fmt: skip
    for _ in range(100):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"redis://127.0.0.1:{port}"
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("redis-server did not start")


def build(root: Path, spec: Path, targets: list[str]) -> dict[str, Any]:
    dist = root / "dist"
    argv = [sys.executable, "-m", "torchsmith", "build", "--spec", str(spec), "--source",
            "debian", "--cpu", "--torch", "1.13.1", "--install-deps",
            *(f"--target={t}" for t in targets), "--cache-root", str(root / "cache"),
            "--output-dir", str(dist)]  # fmt: skip
    start = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    (manifest,) = dist.glob("*.manifest.json")
    data: dict[str, Any] = json.loads(manifest.read_text())
    data["wall"] = time.monotonic() - start
    return data


def show(name: str, run: dict[str, Any]) -> None:
    cache = run["compiler_cache"]
    print(f"{name}: wall {run['wall']:.1f} s, stages {run['stages']}, hits {cache['hits']} "
          f"(remote {cache.get('remote_hits')}), misses {cache['misses']}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--kind", default="ccache", choices=("ccache", "sccache"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-cache"))
    parser.add_argument("--name", default="cache", help="docs/measured/<name>.json")
    args = parser.parse_args()
    load_before = _measured.load()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    targets = args.target or ["c10"]
    redis, url = start_redis(args.work)
    try:
        spec = args.work / "spec.toml"
        spec.write_text(f'[cache]\nkind = "{args.kind}"\nlocation = "{url}"\n')
        cold = build(args.work / "a", spec, targets)
        warm = build(args.work / "b", spec, targets)
    finally:
        redis.terminate()
        redis.wait()
    show("cold", cold)
    show("warm", warm)
    print(f"warm/cold: compile stage {warm['stages']['compile'] / cold['stages']['compile']:.3f}"
          f", whole build {warm['wall'] / cold['wall']:.3f}")  # fmt: skip
    keys = ("wall", "stages", "compiler_cache")
    results = {"targets": targets, "kind": args.kind, "n": 1,
               "cold": {k: cold[k] for k in keys}, "warm": {k: warm[k] for k in keys},
               "ratio_compile": round(warm["stages"]["compile"] / cold["stages"]["compile"], 3),
               "ratio_wall": round(warm["wall"] / cold["wall"], 3)}  # fmt: skip
    print("wrote", _measured.write(args.name, results, load_before))


if __name__ == "__main__":
    main()
