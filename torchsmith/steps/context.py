"""What every build step gets: the plan, the workspace, the executor, the progress reporter,
and a record of each stage's wall time."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.backends.base import Executor
from torchsmith.errors import BuildError, InterruptError, ToolError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.planner.resources import GIB_PER_CXX_JOB, jobs_after_oom
from torchsmith.report.progress import Reporter
from torchsmith.steps.recorded import Recorded
from torchsmith.workspace import Workspace


@dataclass(frozen=True)
class BuildOptions:
    """Choices of the build command that are not part of the plan (they do not change the
    result, so they do not change the plan hash)."""

    cache_root: Path
    output_dir: Path
    install_deps: bool = False
    verify: bool = True
    request: Mapping[str, Any] | None = None
    """The spec as asked (keys set and their origins): the manifest records it for rebuild."""
    recorded: Recorded | None = None
    """A rebuild: the recorded source and toolchain the build must match."""


@dataclass(frozen=True)
class StageLimits:
    """What a failed stage's error names when the machine ran out of disk or memory."""

    workspace: Path
    disk_gb: float
    max_jobs: int
    free_gb: float | None = None
    """Free space of the workspace's file system when the stage failed."""


@dataclass(frozen=True)
class BuildContext:
    plan: BuildPlan
    workspace: Workspace
    executor: Executor
    reporter: Reporter
    options: BuildOptions
    host: HostFacts
    """The facts the plan was made with (travel with it: never probed again while building)."""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return bool(self.plan.targets)

    def log(self, stage: str) -> Path:
        return self.workspace.log(stage)

    def limits(self) -> StageLimits:
        plan, root = self.plan, self.workspace.root
        return StageLimits(root, plan.disk_gb.value, plan.max_jobs.value, free_gb(root))

    @contextmanager
    def stage(self, name: str, what: str) -> Iterator[None]:
        """Time a stage, show it, and turn a failed command into a :class:`BuildError` that
        names the stage, the first real error lines and the log."""
        self.reporter.stage_started(name, what)
        start = time.monotonic()
        try:
            yield
        except BuildError:
            raise
        except ToolError as exc:
            raise stage_error(name, exc, self.limits()) from exc
        finally:
            seconds = time.monotonic() - start
            self.timings[name] = self.timings.get(name, 0.0) + seconds
            self.workspace.add_time(name, seconds)
        self.reporter.stage_finished(name, self.timings[name])


_NOISE = ("ninja: build stopped", "subcommand failed", "CalledProcessError")


def real_error_lines(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The excerpt without the build tools' own epilogue (it says nothing about the cause)."""
    return tuple(line for line in lines if not any(n in line for n in _NOISE))


def was_interrupted(exc: ToolError) -> bool:
    """The command died of a signal (Ctrl-C, SIGTERM) rather than failing by itself."""
    code = exc.returncode
    signalled = code is not None and (code < 0 or code in (130, 143))
    return signalled or any("interrupted by user" in line for line in exc.excerpt)


_DISK_FULL = re.compile(r"No space left on device|ENOSPC|Disk quota exceeded")
_NO_MEMORY = re.compile(
    r"Killed signal terminated program|internal compiler error: Killed|"
    r"out of memory allocating|virtual memory exhausted|cannot allocate memory|"
    r"died due to signal 9|terminated with signal 9",
    re.IGNORECASE,
)
_PATH = re.compile(r"(/[^\s:'\"`]+)")
TAIL_LINES = 400
NEARLY_FULL_GB = 0.25
"""Less free than this where the build writes, and a failed stage is named disk full even
without an ENOSPC line: a tool that cannot write often cannot write its message either
(ccache, measured in tests/integration/test_reliability_disk.py, prints nothing)."""


def failure_lines(exc: ToolError) -> tuple[str, ...]:
    """The relevant lines and the end of the failed command's log (the cause of a disk or
    memory failure is often not among the "first real error" lines)."""
    try:
        text = Path(exc.log_path).read_text(errors="replace") if exc.log_path else ""
    except OSError:
        text = ""
    tail = text.splitlines()[-TAIL_LINES:]
    return (*exc.excerpt, *tail)


def first_match(pattern: re.Pattern[str], lines: tuple[str, ...]) -> str | None:
    return next((line for line in lines if pattern.search(line)), None)


def free_gb(path: Path) -> float | None:
    """Free space of the file system holding ``path`` (or its nearest existing parent)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return shutil.disk_usage(candidate).free / 1e9
    return None


def disk_full_error(
    stage: str, exc: ToolError, line: str | None, limits: StageLimits
) -> BuildError:
    found = _PATH.search(line.split("No space left", maxsplit=1)[0]) if line else None
    path = found[1] if found else str(limits.workspace)
    free = "unknown" if limits.free_gb is None else f"{limits.free_gb:.2f} GB"
    said = "no space left on device" if line else "a tool could not write, not even its message"
    return BuildError(
        f"stage {stage!r} failed: disk full ({said}) writing {path}; "
        f"the build needs about {limits.disk_gb:g} GB in {limits.workspace} "
        f"({free} free there now)",
        f"free at least {limits.disk_gb:g} GB on the file system of {limits.workspace} "
        "(or use --cache-root on a larger disk; TMPDIR for /tmp), then run the same command "
        "again: finished work is kept and the build resumes",
        log_path=exc.log_path,
        excerpt=real_error_lines(exc.excerpt) + ((line,) if line else ()),
        returncode=exc.returncode,
    )


def nearly_full(limits: StageLimits) -> bool:
    return limits.free_gb is not None and limits.free_gb < NEARLY_FULL_GB


def memory_error(stage: str, exc: ToolError, line: str, limits: StageLimits) -> BuildError:
    fit = jobs_after_oom(limits.max_jobs)
    fix = (
        f"run the same command with --max-jobs {fit} (another plan, so another build "
        "directory: what was compiled comes back from the compiler cache)"
        if fit < limits.max_jobs
        else "already one job at a time: add RAM or swap, or stop other work on the machine"
    )
    return BuildError(
        f"stage {stage!r} failed: a compiler ran out of memory ({line.strip()}) with "
        f"{limits.max_jobs} parallel jobs (MAX_JOBS); {fit} would fit in the memory left",
        f"{fix}; torchsmith budgets {GIB_PER_CXX_JOB:g} GiB per C++ job",
        log_path=exc.log_path,
        excerpt=real_error_lines(exc.excerpt),
        returncode=exc.returncode,
    )


def resource_error(stage: str, exc: ToolError, limits: StageLimits) -> BuildError | None:
    """A disk-full or out-of-memory failure said by name, or None."""
    lines = failure_lines(exc)
    disk = first_match(_DISK_FULL, lines)
    if disk is not None or nearly_full(limits):
        return disk_full_error(stage, exc, disk, limits)
    memory = first_match(_NO_MEMORY, lines)
    return None if memory is None else memory_error(stage, exc, memory, limits)


def stage_error(
    stage: str, exc: ToolError, limits: StageLimits | None = None
) -> BuildError | InterruptError:
    if was_interrupted(exc):
        return InterruptError(
            f"stage {stage!r} was interrupted",
            "run the same command again: finished work is kept and the build resumes",
        )
    named = resource_error(stage, exc, limits) if limits is not None else None
    return named or BuildError(
        f"stage {stage!r} failed: {exc.message}",
        exc.hint
        or "read the relevant lines and the full log; fix, then run the same command "
        "again to resume",
        log_path=exc.log_path,
        excerpt=real_error_lines(exc.excerpt),
        returncode=exc.returncode,
    )


def effective_env(env: Mapping[str, str], keys: set[str]) -> dict[str, str]:
    """The subset of ``env`` torchsmith set on purpose (never the whole user environment)."""
    return {k: env[k] for k in sorted(keys) if k in env}
