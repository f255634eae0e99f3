"""ninja status parsing on a real recorded log (tests/fixtures/build/ninja-c10-1.13.1.log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.report.ninja import NinjaStatus, edge_kind, parse_status, summarize
from torchsmith.report.progress import format_eta


@pytest.fixture
def c10_log(fixtures: Path) -> list[str]:
    return (fixtures / "build" / "ninja-c10-1.13.1.log").read_text().splitlines()


def test_real_c10_log_summary(c10_log: list[str]) -> None:
    summary = summarize(c10_log)
    assert (summary.edges_run, summary.edges_total) == (68, 68)
    assert summary.by_kind["link"] == 1
    assert summary.by_kind["codegen"] == 3  # ATen headers, sources, declarations_yaml
    assert summary.by_kind["compile"] == 67


def test_each_status_line_parses(c10_log: list[str]) -> None:
    statuses = [parse_status(line) for line in c10_log]
    parsed = [s for s in statuses if s is not None]
    assert len(parsed) == 71
    assert parsed[0] == NinjaStatus(1, 4, 6.965, "Generating ATen headers")
    assert parsed[-1].description == "Linking CXX shared library lib/libc10.so"
    assert all(s.elapsed is not None for s in parsed)
    assert parse_status(c10_log[0]) is None  # the echoed command line


def test_default_ninja_status_and_other_lines() -> None:
    status = parse_status("[3/10] Building CXX object a.o")
    assert status == NinjaStatus(3, 10, None, "Building CXX object a.o")
    assert status.eta_seconds() is None
    assert parse_status("ninja: build stopped: subcommand failed.") is None
    assert parse_status("-- Configuring done") is None


def test_eta_from_the_average_pace() -> None:
    status = NinjaStatus(10, 40, 20.0, "Building CXX object x.o")
    assert status.eta_seconds() == pytest.approx(60.0)
    assert NinjaStatus(1, 40, 2.0, "x").eta_seconds() is None  # too early to tell
    assert format_eta(60.0) == "ETA 1:00"
    assert format_eta(3725.0) == "ETA 1:02:05"
    assert format_eta(None) == "ETA …"


@pytest.mark.parametrize(
    ("description", "kind"),
    [
        ("Linking CXX shared library lib/libc10.so", "link"),
        ("Building CXX object c10/CMakeFiles/c10.dir/core/Device.cpp.o", "compile"),
        ("Generating ATen headers", "codegen"),
        ("Re-running CMake...", "other"),
    ],
)
def test_edge_kind(description: str, kind: str) -> None:
    assert edge_kind(description) == kind
