"""Benchmark: diagnose a 100 MB build log, hostile 1 MiB lines, and memory against log size.

The log repeats the lines of a real ninja build (tests/fixtures/doctor/ninja-build.txt) until it
reaches the size asked for, puts a real failure (a fixture excerpt copied from a public report)
near the end, and closes with the usual noise (``ninja: build stopped``, CalledProcessError).
Then it times ``torchsmith.doctor.diagnose`` on the file (CPU time of this process, median of
``--runs``) and checks the right cause ranks first. Hostile logs hold one 1 MiB line built to
make a backtracking regex explode; each is timed once. Memory: the peak RSS of a fresh process
diagnosing a log of ``--size-mb`` and of a tenth of it.

    python bench/bench_doctor.py                          # 100 MB, median of 5
    python bench/bench_doctor.py --json-out docs/measured/bench-doctor.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from torchsmith.doctor import diagnose

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "doctor"
TAIL = (
    "ninja: build stopped: subcommand failed.\n"
    "subprocess.CalledProcessError: Command '['cmake', '--build', '.', '--target', 'install']'"
    " returned non-zero exit status 1.\n"
)
MIB = 1 << 20
# one 1 MiB line each: repeated prefixes of rule and classifier patterns, long runs of the
# characters their \S+ / .* / [^']* parts consume, and many triggers on one line
HOSTILE = {
    "repeated-error-prefix": "error: " * (MIB // 7),
    "no-newline-word-run": "a" * MIB + " error",
    "many-colons": "x:1:" * (MIB // 4) + " error",
    "quote-run": "error: command '" + "'" * MIB,
    "cmake-error-spaces": "CMake Error at " + " " * MIB + "x",
    "path-slashes": "fatal error: " + "/a" * (MIB // 2) + ": No such file or directory",
    "undefined-reference": "undefined reference to `" + "_Z" * (MIB // 2),
    "version-digits": "version " + "1." * (MIB // 2) + " is required",
    "undefined-symbol-word-run": "undefined symbol: " + "a" * MIB,
    "relocation-against-repeated": " can not be used when making a shared object; recompile "
    "with -fPIC " + "relocation R_X86_64_32 against " * (MIB // 31),
    "c10-reference-repeated": "undefined reference to `c10::f(" * (MIB // 29),
}


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


def _cpu(log: Path) -> tuple[float, str | None]:
    start = time.process_time()
    diagnosis = diagnose(log)
    top = diagnosis.top.rule_id if diagnosis.top else None
    return time.process_time() - start, top


def _hostile(tmp: Path) -> dict[str, float]:
    times = {}
    for name, line in HOSTILE.items():
        log = tmp / f"{name}.log"
        log.write_text("[1/2] Building CXX object a.o\n" + line + "\n", encoding="utf-8")
        times[name] = round(_cpu(log)[0], 3)
    return times


def _peak_rss_mib(log: Path) -> float:
    """Peak RSS of a fresh interpreter that diagnoses ``log``."""
    code = (
        "import resource, sys; from torchsmith.doctor import diagnose; diagnose(sys.argv[1]); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(log)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1]) / 1024


def _machine() -> dict[str, object]:
    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--failure", default="nvcc-host-gcc-too-new.log")
    parser.add_argument("--json-out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    expected = args.failure.split("--")[0].removesuffix(".log")
    machine = _machine()
    with tempfile.TemporaryDirectory() as tmp:
        log, small = Path(tmp) / "build.log", Path(tmp) / "small.log"
        build_log(log, args.size_mb * MIB, args.failure)
        build_log(small, max(1, args.size_mb // 10) * MIB, args.failure)
        runs = [_cpu(log) for _ in range(args.runs)]
        hostile = _hostile(Path(tmp))
        rss = {"small": _peak_rss_mib(small), "large": _peak_rss_mib(log)}
        size = log.stat().st_size
    cpu = [round(t, 3) for t, _ in runs]
    top = runs[-1][1]
    result = {
        "log_mb": round(size / 1e6, 1),
        "cpu_s_runs": cpu,
        "cpu_s_median": round(statistics.median(cpu), 3),
        "top_cause": top,
        "top_cause_expected": expected,
        "hostile_1mib_line_cpu_s": hostile,
        "peak_rss_mib": {
            f"{args.size_mb // 10 or 1} MB": round(rss["small"], 1),
            f"{args.size_mb} MB": round(rss["large"], 1),
        },
        "self_max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "commit": _measured.commit(),
        "machine": machine,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps(result, indent=2))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if top == expected else 1


if __name__ == "__main__":
    sys.exit(main())
