"""What every build step gets: the plan, the workspace, the executor, the progress reporter,
and a record of each stage's wall time."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from torchsmith.backends.base import Executor
from torchsmith.errors import BuildError, InterruptError, ToolError
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.report.progress import Reporter
from torchsmith.workspace import Workspace


@dataclass(frozen=True)
class BuildOptions:
    """Choices of the build command that are not part of the plan (they do not change the
    result, so they do not change the plan hash)."""

    cache_root: Path
    output_dir: Path
    install_deps: bool = False
    verify: bool = True


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
            raise stage_error(name, exc) from exc
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


def stage_error(stage: str, exc: ToolError) -> BuildError | InterruptError:
    if was_interrupted(exc):
        return InterruptError(
            f"stage {stage!r} was interrupted",
            "run the same command again: finished work is kept and the build resumes",
        )
    return BuildError(
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
