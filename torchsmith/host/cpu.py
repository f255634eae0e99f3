"""CPU utilisation of the machine while a stage runs: the aggregate ``cpu`` line of
``/proc/stat`` (proc(5): user nice system idle iowait irq softirq steal …, in clock ticks) read
every few seconds by a background thread; each sample is the number of cores busy since the
last one (all processes: a build sharing the machine shows as such). Linux only: elsewhere, or
when the file cannot be read, there are simply no samples."""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

PROC_STAT = Path("/proc/stat")
IDLE_FIELDS = (3, 4)
"""idle and iowait (0-based among the numbers after 'cpu')."""


@dataclass(frozen=True)
class Ticks:
    busy: int
    total: int


def parse_cpu_line(text: str) -> Ticks | None:
    """The aggregate ``cpu`` line of /proc/stat; guest time is already inside user/nice."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            numbers = [int(p) for p in parts[1:9]]  # up to steal; guest/guest_nice are in user
            idle = sum(numbers[i] for i in IDLE_FIELDS if i < len(numbers))
            return Ticks(busy=sum(numbers) - idle, total=sum(numbers))
    return None


def busy_cores(before: Ticks, after: Ticks, cores: int) -> float | None:
    total = after.total - before.total
    if total <= 0:
        return None
    return round(cores * (after.busy - before.busy) / total, 2)


@dataclass
class CpuSampler:
    """``with CpuSampler() as cpu: …`` then ``cpu.summary(job_limit)``."""

    interval: float = 2.0
    path: Path = PROC_STAT
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    samples: list[tuple[float, float]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _read(self) -> Ticks | None:
        try:
            return parse_cpu_line(self.path.read_text(encoding="ascii", errors="replace"))
        except (OSError, ValueError):
            return None

    def _loop(self, start: float, last: Ticks | None) -> None:
        while last is not None and not self._stop.wait(self.interval):
            now = self._read()
            if now is None:
                return
            busy = busy_cores(last, now, self.cores)
            if busy is not None:
                self.samples.append((round(time.monotonic() - start, 1), busy))
            last = now

    def __enter__(self) -> CpuSampler:
        first = (time.monotonic(), self._read())  # the baseline, before the work starts
        self._thread = threading.Thread(
            target=self._loop, args=first, name="cpu-sampler", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def summary(self, job_limit: int) -> dict[str, Any] | None:
        """What the manifest records (None without samples)."""
        if not self.samples:
            return None
        busy = [b for _, b in self.samples]
        return {
            "what": "cores busy on the whole machine (/proc/stat), every interval",
            "interval_s": self.interval,
            "cores": self.cores,
            "job_limit": job_limit,
            "busy_cores_mean": round(statistics.fmean(busy), 2),
            "busy_cores_p90": round(sorted(busy)[int(0.9 * (len(busy) - 1))], 2),
            "samples": [list(s) for s in self.samples],
        }
