"""Step "compile": ninja through ``cmake --build``, with live [N/M] progress and an ETA.

Partial builds name their CMake targets (or object paths) with ``--target``; full builds build
``all``. Ninja keeps every finished object, so a stopped build (Ctrl-C, SIGKILL) resumes where it
stopped. The compiler cache's statistics are read before and after, for the hit rate.
"""

from __future__ import annotations

import time
from pathlib import Path

from torchsmith.cache import CacheStats
from torchsmith.host.cpu import CpuSampler
from torchsmith.report.ninja import NinjaStatus, parse_status
from torchsmith.report.progress import Reporter
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState, CompileResult, build_dir

STAGE = "compile"


class NinjaWatcher:
    """Feeds ninja's status lines to the reporter and times codegen / compile / link: the time
    between two status lines goes to the kind of edge that just finished."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.last: NinjaStatus | None = None
        self.seconds: dict[str, float] = {}
        self._stamp = time.monotonic()

    def __call__(self, line: str) -> None:
        status = parse_status(line)
        if status is None:
            return
        now = time.monotonic()
        self.seconds[status.kind] = self.seconds.get(status.kind, 0.0) + now - self._stamp
        self._stamp = now
        self.last = status
        self.reporter.ninja(status)


def build_command(bdir: Path, targets: list[str], jobs: int) -> list[str]:
    argv = ["cmake", "--build", str(bdir), "--parallel", str(jobs)]
    if targets:
        argv += ["--target", *targets]
    return argv


def read_cache_stats(ctx: BuildContext, benv: BuildEnv) -> CacheStats | None:
    command = benv.cache.stats_command()
    if command is None:
        return None
    done = ctx.executor.run(command, env=benv.env, check=False)
    return benv.cache.parse_stats("\n".join(done.tail)) if done.returncode == 0 else None


def stop_cache_server(ctx: BuildContext, benv: BuildEnv) -> None:
    """End this build's sccache server (its statistics are read): no daemon outlives a build."""
    command = benv.cache.stop_command()
    if command is not None:
        ctx.executor.run(command, env=benv.env, check=False)


def compile_targets(ctx: BuildContext, tree: Path, benv: BuildEnv) -> CompileResult:
    targets = list(ctx.plan.targets)
    before = read_cache_stats(ctx, benv)
    watcher = NinjaWatcher(ctx.reporter)
    jobs = int(benv.env.get("MAX_JOBS", ctx.plan.max_jobs.value))  # local when no cluster
    with ctx.stage(STAGE, ", ".join(targets) if targets else "all targets"), CpuSampler() as cpu:
        argv = build_command(build_dir(tree), targets, jobs)
        ctx.executor.run(argv, env=benv.env, cwd=tree, log_path=ctx.log(STAGE), on_line=watcher)
    after = read_cache_stats(ctx, benv)
    stop_cache_server(ctx, benv)
    stats = after.minus(before) if after and before else None
    last = watcher.last
    return CompileResult(
        targets=targets or ["all"],
        edges_run=last.finished if last else 0,
        edges_total=last.total if last else 0,
        seconds_by_kind={k: round(v, 1) for k, v in sorted(watcher.seconds.items())},
        cache=stats,
        cpu=cpu.summary(jobs),
    )


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``compile``."""
    state.compiled = compile_targets(ctx, state.need_tree(), state.need_benv())
