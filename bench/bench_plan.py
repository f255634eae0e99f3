#!/usr/bin/env python3
"""How long `torchsmith plan` takes, cold process included (target: well under a second).

    python bench/bench_plan.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

ARGS = ["plan", "--torch", "2.5.1", "--cuda", "12.4", "--gpu", "RTX 4090", "--gpu", "8.0",
        "--with", "torchvision,torchaudio", "--json"]  # fmt: skip


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "torchsmith", *ARGS], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        times.append(time.perf_counter() - start)
    print(f"torchsmith plan (whole process, host probe included): n={runs} "
          f"median={statistics.median(times):.3f}s max={max(times):.3f}s")  # fmt: skip


if __name__ == "__main__":
    main()
