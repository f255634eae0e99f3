"""Wall time, CPU and peak memory of inspecting a torch wheel (issue 26's goal, for the 767 MB
torch 2.6.0 cu124 wheel: < 3 s wall on an idle machine, < 200 MB RSS; the 555 MB 2.14.1 CUDA
wheel is the default because the machine keeps it). Each of N runs (default 5) is a fresh
process, so each peak RSS is its own; medians are printed and written to
``docs/measured/<name>.json`` with the commit, machine and load.

    python bench/bench_inspect.py [WHEEL] [--runs N] [--name inspect]"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

DEFAULT = Path("/opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl")
GOAL_WALL_S, GOAL_RSS_MIB = 3.0, 200.0


def one(wheel: Path) -> dict[str, Any]:
    """One inspection in this process: wall, CPU (this process and its threads), peak RSS."""
    from torchsmith.inspect import inspect_wheel
    from torchsmith.inspect.inflate import codec_name

    start = time.perf_counter()
    insp = inspect_wheel(wheel)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024, "sass": list(insp.sass),
            "libraries": len(insp.libraries), "unpacked_mib": insp.sizes.total / 2**20,
            "inflater": codec_name(), "cxx11_abi": insp.cxx11_abi}  # fmt: skip


def fresh(wheel: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, str(wheel), "--one"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--name", default="inspect", help="docs/measured/<name>.json")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.one:
        print(json.dumps(one(opts.wheel)))
        return 0
    load_before = _measured.load()
    runs = [fresh(opts.wheel) for _ in range(opts.runs)]
    results = {key: _measured.summary([r[key] for r in runs])
               for key in ("wall_s", "cpu_s", "peak_rss_mib")}  # fmt: skip
    results["wheel"] = {"name": opts.wheel.name, "mib": opts.wheel.stat().st_size / 2**20,
                        "sass": runs[0]["sass"], "libraries": runs[0]["libraries"],
                        "inflater": runs[0]["inflater"],
                        "cxx11_abi": runs[0]["cxx11_abi"]}  # fmt: skip
    wall, rss = results["wall_s"]["median"], results["peak_rss_mib"]["median"]
    ok = wall < GOAL_WALL_S and rss < GOAL_RSS_MIB
    results["goal"] = {"wall_s": GOAL_WALL_S, "peak_rss_mib": GOAL_RSS_MIB, "met": ok}
    verdict = "met" if ok else "NOT met"
    print(f"{opts.wheel.name}: wall median {wall:.2f} s, CPU median "
          f"{results['cpu_s']['median']:.2f} s, peak RSS median {rss:,.0f} MiB, n={opts.runs} "
          f"(goal < {GOAL_WALL_S} s, < {GOAL_RSS_MIB:.0f} MiB: {verdict})")  # fmt: skip
    print("wrote", _measured.write(opts.name, results, load_before))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
