"""A failed stage that ran out of disk or memory is said by name (issue 16, trials 2 and 3).
The lines are real output recorded on the 2-core Debian 12 machine (gcc 12.2, ccache 4.8)
by tests/integration/test_reliability_disk.py and test_reliability_oom.py."""

from __future__ import annotations

from pathlib import Path

from torchsmith.errors import BuildError, ToolError
from torchsmith.planner.resources import jobs_after_oom
from torchsmith.steps.context import StageLimits, stage_error

# gcc-12 -c big1.c (an 8 MiB .data array) into a full tmpfs, without ccache
ENOSPC = (
    "/tmp/cchO2IiI.s: Fatal error: can't fill 256 bytes in section .data of "
    "CMakeFiles/fake.dir/big1.c.o: 'No space left on device'"
)
# ccache gcc-12 in a 240 MiB memory cgroup, two cc1 of ~160 MiB each
OOM = (
    "FAILED: CMakeFiles/fake.dir/big0.c.o ",
    "gcc-12: fatal error: Killed signal terminated program cc1",
    "compilation terminated.",
)
WS = Path("/cache/builds/abc")


def failed(*lines: str, log: Path | None = None) -> ToolError:
    return ToolError(
        "cmake exited with status 1", excerpt=lines, returncode=1,
        log_path=str(log) if log else None,
    )  # fmt: skip


def test_no_space_left_names_disk_full_the_path_and_the_need() -> None:
    err = stage_error("compile", failed(ENOSPC), StageLimits(WS, 11.0, 2, free_gb=3.0))
    assert isinstance(err, BuildError)
    assert "disk full (no space left on device)" in err.message
    assert "CMakeFiles/fake.dir/big1.c.o" not in err.message  # the path is the first path seen
    assert "/tmp/cchO2IiI.s" in err.message
    assert "needs about 11 GB in /cache/builds/abc (3.00 GB free there now)" in err.message
    assert "run the same command again" in err.hint


def test_a_failure_on_a_nearly_full_disk_is_disk_full_without_a_message() -> None:
    """ccache on a full disk fails without a word (it cannot write the compiler's stderr)."""
    err = stage_error("compile", failed("FAILED: a.o"), StageLimits(WS, 11.0, 2, free_gb=0.01))
    assert "disk full (a tool could not write, not even its message)" in err.message
    assert "0.01 GB free" in err.message


def test_the_enospc_line_is_found_in_the_log_tail(tmp_path: Path) -> None:
    log = tmp_path / "compile.log"
    log.write_text("[3/8] Building C object big1.c.o\n" + ENOSPC + "\n")
    err = stage_error("compile", failed("FAILED: x", log=log), StageLimits(WS, 8.0, 2, 50.0))
    assert "disk full" in err.message


def test_a_compiler_killed_for_memory_names_max_jobs_and_what_fits() -> None:
    err = stage_error("compile", failed(*OOM), StageLimits(WS, 11.0, 4, free_gb=50.0))
    assert "ran out of memory" in err.message
    assert "with 4 parallel jobs (MAX_JOBS); 2 would fit" in err.message
    assert "--max-jobs 2" in err.hint


def test_at_one_job_the_way_out_is_memory_not_jobs() -> None:
    err = stage_error("compile", failed(*OOM), StageLimits(WS, 11.0, 1, free_gb=50.0))
    assert "--max-jobs" not in err.hint and "add RAM or swap" in err.hint


def test_other_failures_stay_as_they_were() -> None:
    err = stage_error("compile", failed("a.c:1: error: x"), StageLimits(WS, 11.0, 2, 50.0))
    assert err.message == "stage 'compile' failed: cmake exited with status 1"


def test_jobs_after_oom_halves_down_to_one() -> None:
    assert [jobs_after_oom(n) for n in (1, 2, 3, 8)] == [1, 1, 1, 4]
