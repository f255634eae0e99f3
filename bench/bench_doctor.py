"""Benchmark: diagnose a 100 MB build log.

The log repeats the lines of a real ninja build (tests/fixtures/doctor/ninja-build.txt) until it
reaches the size asked for, puts a real failure (a fixture excerpt copied from a public report)
near the end, and closes with the usual noise (``ninja: build stopped``, CalledProcessError).
Then it times ``torchsmith.doctor.diagnose`` on the file and checks the right cause ranks first.

    python bench/bench_doctor.py                # 100 MB, best of 3
    python bench/bench_doctor.py --size-mb 1000 --runs 1
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from torchsmith.doctor import diagnose

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "doctor"
TAIL = (
    "ninja: build stopped: subcommand failed.\n"
    "subprocess.CalledProcessError: Command '['cmake', '--build', '.', '--target', 'install']'"
    " returned non-zero exit status 1.\n"
)


def _excerpt(name: str) -> str:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return "".join(line + "\n" for line in text.splitlines() if not line.startswith("#@ "))


def build_log(path: Path, size: int, failure: str) -> None:
    """Write a log of about ``size`` bytes with ``failure`` at 95 % of it."""
    block = (FIXTURES / "ninja-build.txt").read_bytes()
    repeats = max(1, size // len(block))
    at = int(repeats * 0.95)
    with path.open("wb") as fh:
        for i in range(repeats):
            fh.write(block)
            if i == at:
                fh.write(_excerpt(failure).encode())
        fh.write(TAIL.encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--failure", default="nvcc-host-gcc-too-new.log")
    args = parser.parse_args()
    expected = args.failure.split("--")[0].removesuffix(".log")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "build.log"
        build_log(log, args.size_mb << 20, args.failure)
        size = log.stat().st_size
        times, cpu = [], []
        for _ in range(args.runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            diagnosis = diagnose(log)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    top = diagnosis.top.rule_id if diagnosis.top else None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"log: {size / 1e6:.1f} MB, {diagnosis.lines_scanned} lines")
    print(f"diagnose: best {min(times):.2f} s wall, runs {', '.join(f'{t:.2f}' for t in times)}")
    print(f"cpu time: best {min(cpu):.2f} s (one process, one core)")
    print(f"top cause: {top} (line {diagnosis.first_error and diagnosis.first_error.start_line})")
    print(f"max RSS: {rss:.0f} MiB")
    return 0 if top == expected else 1


if __name__ == "__main__":
    sys.exit(main())
