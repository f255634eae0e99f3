"""The build command's pure helpers: cache root, the doctor's hint on failure, progress."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from torchsmith.cache_root import default_cache_root
from torchsmith.commands.build import _with_diagnosis
from torchsmith.errors import BuildError, InterruptError, ToolError
from torchsmith.report.ninja import parse_status
from torchsmith.report.progress import PlainProgress, RichProgress
from torchsmith.steps.compile import NinjaWatcher
from torchsmith.steps.context import stage_error


def test_cache_root_from_env_then_xdg_then_home() -> None:
    assert default_cache_root({"TORCHSMITH_CACHE_ROOT": "/x/c"}) == Path("/x/c")
    assert default_cache_root({"XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/torchsmith")
    assert default_cache_root({}) == Path.home() / ".cache" / "torchsmith"


def test_failure_gets_the_doctors_top_cause(fixtures: Path) -> None:
    log = fixtures / "doctor" / "cmake-4-policy-minimum.log"
    exc = BuildError("stage 'configure' failed", "hint", log_path=str(log), returncode=1)
    diagnosed = _with_diagnosis(exc)
    assert diagnosed.hint.startswith("likely cause (torchsmith doctor): ")
    assert "CMAKE_POLICY_VERSION_MINIMUM" in diagnosed.hint
    assert diagnosed.log_path == str(log) and diagnosed.returncode == 1


def test_no_log_no_diagnosis() -> None:
    exc = BuildError("x", "hint", log_path=None)
    assert _with_diagnosis(exc) is exc


def test_signals_are_interruptions_not_failures() -> None:
    killed = ToolError("cmake exited with status -2", returncode=-2)
    assert isinstance(stage_error("compile", killed), InterruptError)
    stopped = ToolError("x", excerpt=["ninja: build stopped: interrupted by user."], returncode=2)
    assert isinstance(stage_error("compile", stopped), InterruptError)
    failed = ToolError("ninja failed", excerpt=["a.cpp:1: error: x"], returncode=1, log_path="l")
    error = stage_error("compile", failed)
    assert isinstance(error, BuildError)
    assert error.message == "stage 'compile' failed: ninja failed"
    assert error.excerpt == ("a.cpp:1: error: x",) and error.log_path == "l"


def test_watcher_feeds_progress_and_times_edge_kinds(fixtures: Path) -> None:
    console = Console(record=True, width=200)
    watcher = NinjaWatcher(PlainProgress(console, every=0.0))
    for line in (fixtures / "build" / "ninja-c10-1.13.1.log").read_text().splitlines():
        watcher(line)
    assert watcher.last == parse_status("[68/68 51.037s] Linking CXX shared library lib/libc10.so")
    assert set(watcher.seconds) == {"codegen", "compile", "link"}
    text = console.export_text()
    assert "compile [37/68]" in text and "link [68/68] ETA 0:00" in text


def test_live_display_on_a_terminal(fixtures: Path) -> None:
    console = Console(record=True, width=160, force_terminal=True)
    progress = RichProgress(console)
    progress.stage_started("compile", "c10")
    watcher = NinjaWatcher(progress)
    for line in (fixtures / "build" / "ninja-c10-1.13.1.log").read_text().splitlines():
        watcher(line)
    progress.stage_finished("compile", 51.0, "68 edges")
    progress.close()
    text = console.export_text()
    assert "compile 51.0 s — 68 edges" in text
    assert "68/68" in text
