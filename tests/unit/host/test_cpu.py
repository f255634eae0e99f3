"""CPU utilisation sampled from /proc/stat (recorded lines: tests/fixtures/host/README.md) and
how the manifest and the report carry it."""

from __future__ import annotations

import time
from pathlib import Path

from torchsmith.host.cpu import CpuSampler, Ticks, busy_cores, parse_cpu_line
from torchsmith.report.inputs import _missing, cpu_samples

LINES = Path(__file__).resolve().parents[2] / "fixtures" / "host" / "proc-stat-cpu-2s.txt"


def recorded() -> tuple[Ticks, Ticks]:
    first, second = LINES.read_text().splitlines()[:2]
    a, b = parse_cpu_line(first), parse_cpu_line(second)
    assert a is not None and b is not None
    return a, b


def test_the_cpu_line_gives_busy_and_total_ticks() -> None:
    a, b = recorded()
    # 1281605+239742+463828 user/nice/system, 850358 idle, 35961 iowait, 10735 softirq, 4310 steal
    assert a.total == 2886539 and a.busy == 2886539 - 850358 - 35961
    assert busy_cores(a, b, 2) == 2.0  # both cores busy for the 2 s (a build at -j2)
    assert busy_cores(a, a, 2) is None
    assert parse_cpu_line("intr 1 2 3\n") is None


def test_the_sampler_records_busy_cores_until_it_stops(tmp_path: Path) -> None:
    first, second = LINES.read_text().splitlines()[:2]
    stat = tmp_path / "stat"
    stat.write_text(first + "\n")
    with CpuSampler(interval=0.05, path=stat, cores=2) as cpu:
        stat.write_text(second + "\n")
        deadline = time.monotonic() + 5
        while not cpu.samples and time.monotonic() < deadline:
            time.sleep(0.02)
    assert cpu.samples and cpu.samples[0][1] == 2.0
    summary = cpu.summary(job_limit=2)
    assert summary is not None and summary["busy_cores_mean"] >= 0 and summary["cores"] == 2
    assert summary["job_limit"] == 2 and summary["samples"][0][1] == 2.0


def test_an_unreadable_stat_file_gives_no_samples_and_no_summary(tmp_path: Path) -> None:
    with CpuSampler(interval=0.01, path=tmp_path / "missing") as cpu:
        time.sleep(0.05)
    assert cpu.samples == [] and cpu.summary(2) is None


def test_the_report_reads_the_samples_and_stops_calling_them_missing() -> None:
    manifest = {"resources": {"cpu_during_compile": {"samples": [[2.0, 1.9], [4.0, 2.0]]}}}
    assert cpu_samples(manifest) == [(2.0, 1.9), (4.0, 2.0)]
    assert not any("CPU utilisation" in m for m in _missing(manifest, None))
    assert any("CPU utilisation" in m for m in _missing({}, None))
