"""Time and peak memory of inspecting the torch 2.14.1 CUDA wheel (target: < 60 s, < 1 GB on
2 cores). Usage: python bench/bench_inspect.py [WHEEL]"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from torchsmith.inspect import inspect_wheel

DEFAULT = Path("/opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl")


def main() -> int:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    start = time.perf_counter()
    insp = inspect_wheel(wheel)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak_mib = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    size_mib = wheel.stat().st_size / 2**20
    unpacked = insp.sizes.total / 2**20
    print(f"wheel {wheel.name}: {size_mib:,.0f} MiB ({unpacked:,.0f} MiB unpacked)")
    print(f"SASS {' '.join(insp.sass)}; {len(insp.libraries)} libraries")
    print(f"time {seconds:.1f} s (process CPU {cpu:.1f} s), peak RSS {peak_mib:,.0f} MiB")
    ok = seconds < 60 and peak_mib < 1024
    print("within target (< 60 s, < 1024 MiB)" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
