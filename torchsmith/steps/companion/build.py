"""A companion's ``fetch`` and ``compile`` steps. Each records what it made (a marker named like
the step, ``<workspace>/stages/torchvision-fetch.done``), so the same command after a failure or
a kill resumes at the step that did not finish: a fetched tree is fetched again only when its
own source (a ``path`` tree the user changed) moved on, a wheel is compiled again only for
another tree."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchsmith.cache import CompilerCache
from torchsmith.cache.stats import CacheStats
from torchsmith.companions import buildenv
from torchsmith.companions.source import fetch_own, still_current
from torchsmith.errors import BuildError
from torchsmith.kb import load as load_kb
from torchsmith.plan_types import CompanionBuild
from torchsmith.planner.reproducible import EPOCH, companion_build_epoch, epoch_rule_of
from torchsmith.sources.debian_orig import OrigJob, fetch_orig
from torchsmith.sources.epoch import source_epoch
from torchsmith.sources.git import unpinned_warning
from torchsmith.steps.companion.run import Env, Made, companion, need, need_run, root
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState


def appender(path: Path) -> Callable[[str], None]:
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(line: str) -> None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    return write


def marker(ctx: BuildContext, stage: str) -> dict[str, Any]:
    """What a finished earlier run of ``stage`` recorded ({} when none did)."""
    return ctx.workspace.read_marker(stage) if ctx.workspace.is_done(stage) else {}


def _fetch(ctx: BuildContext, comp: CompanionBuild, base: dict[str, str]) -> dict[str, Any]:
    stage = f"{comp.name}-fetch"
    log = appender(ctx.log(stage))
    if comp.source is not None:
        with ctx.stage(stage, f"its source, {comp.source.kind}"):
            made = fetch_own(comp, ctx.options.cache_root / "sources", base, log, ctx.executor)
        if made.get("pinned_by") == "nothing":  # as loud as torch's own fetch (review M2)
            ctx.reporter.message(f"{comp.name}: {unpinned_warning(made['ref'], made['identity'])}")
        return made
    pkg = load_kb().debian_package(comp.package, comp.version)
    job = OrigJob(comp.package, comp.debian_version, comp.version, pkg.dsc_sha256)
    with ctx.stage(stage, f"Debian {comp.package} {comp.debian_version}"):
        tree = fetch_orig(job, ctx.options.cache_root / "sources", base, log, runner=ctx.executor)
    for key, why in tree.details.items():
        if key.startswith("unavailable:"):
            ctx.reporter.message(f"{comp.name}: not served by the mirror: {key[12:]} ({why})")
    return {"root": str(tree.root), "identity": tree.identity, **tree.details}


def with_epoch(
    ctx: BuildContext, comp: CompanionBuild, source: dict[str, Any], base: dict[str, str]
) -> dict[str, Any]:
    """The fetched ``source`` with its SOURCE_DATE_EPOCH (``epoch``, ``epoch_from``) as the
    plan says to get it: its own commit's date, its Debian changelog's, or the plan's."""
    if str(source.get("epoch")).isdigit():  # resolved by an earlier run: the same value
        return source
    own = next((v.value for v in comp.env if v.name == EPOCH), None)
    rule = epoch_rule_of(own or ctx.plan.env_dict().get(EPOCH))
    found = source_epoch(rule, Path(source["root"]), source, base, ctx.executor)
    ctx.reporter.message(f"{comp.name}: {EPOCH} {found.epoch}: {found.epoch_from}")
    return {**source, **found.record()}


def run_fetch(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``fetch`` of companion ``subject``: its tree, and the epoch of its build."""
    run = need_run(state)
    comp, made = companion(run.plan, subject), run.of(subject)
    done = marker(ctx, f"{subject}-fetch")
    if done and not still_current(comp, done, run.env.base, ctx.executor):
        ctx.reporter.message(f"{subject}: its source tree changed since the last run: fetched anew")
        done = {}
    if done and Path(done.get("root", "")).is_dir():
        ctx.reporter.message(f"{subject}: source fetched by an earlier run ({done['root']})")
        fetched = done
    else:
        fetched = _fetch(ctx, comp, run.env.base)
    made.source = with_epoch(ctx, comp, fetched, run.env.base)
    if made.source != done:
        ctx.workspace.mark_done(f"{subject}-fetch", made.source)


def _stats(ctx: BuildContext, cache: CompilerCache, env: dict[str, str]) -> CacheStats | None:
    argv = cache.stats_command()
    if argv is None:
        return None
    done = ctx.executor.capture(argv, env=env, timeout=60)
    return cache.parse_stats(done.stdout) if done.returncode == 0 else None


def cache_record(
    cache: CompilerCache, before: CacheStats | None, after: CacheStats | None
) -> dict[str, Any]:
    if before is None or after is None:
        return {"kind": cache.kind, "hits": None, "misses": None, "hit_rate": None}
    delta = after.minus(before)
    rate = None if delta.hit_rate is None else round(delta.hit_rate, 4)
    return {"kind": cache.kind, "hits": delta.hits, "misses": delta.misses, "hit_rate": rate}


def reproducible(ctx: BuildContext, comp: CompanionBuild, source: dict[str, Any]) -> dict[str, str]:
    """The companion's SOURCE_DATE_EPOCH (planner/reproducible.py ``build_epoch``: its own
    commit's date, its Debian changelog's, or the release's; bdist_wheel stamps the wheel's
    members with it) and, for a companion from Debian's orig or a tarball (no repository),
    the plan's GIT_DIR."""
    env = {EPOCH: str(companion_build_epoch(ctx.plan, comp, source))}
    if (comp.source is None or comp.source.kind == "tarball") and "GIT_DIR" in ctx.plan.env_dict():
        env["GIT_DIR"] = ctx.plan.env_dict()["GIT_DIR"]
    return env


PIP_WHEEL = ("-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps")


def _pip_wheel(
    ctx: BuildContext, e: Env, comp: CompanionBuild, source: dict[str, Any], jobs: int
) -> tuple[Path, dict[str, Any]]:
    tree, work = Path(source["root"]), root(ctx) / comp.name
    src, wheels = work / "src", work / "wheels"
    for path in (src, wheels):
        shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(tree, src, symlinks=True)
    wheels.mkdir(parents=True)
    planned = {v.name: v.value for v in comp.env}
    own = {**e.cuda_env, **planned, **reproducible(ctx, comp, source)}
    env = buildenv.build_env(e.base, e.python.parent.parent, e.cache, e.cache_bin, own)
    before, stage = _stats(ctx, e.cache, env), f"{comp.name}-compile"
    with ctx.stage(stage, f"{comp.name} {comp.version}: pip wheel (MAX_JOBS {jobs})"):
        argv: list[str | Path] = [e.python, *PIP_WHEEL, "-w", wheels, src]
        ctx.executor.run(argv, env=env, cwd=src, log_path=ctx.log(stage))
    after = _stats(ctx, e.cache, env)
    built = sorted(wheels.glob("*.whl"))
    if len(built) != 1:
        made = f"{comp.name}: pip wheel made {len(built)} wheels"
        raise BuildError(made, f"see {ctx.log(stage)}")
    return built[0], cache_record(e.cache, before, after)


def _reuse(ctx: BuildContext, made: Made, subject: str) -> bool:
    """The wheel a finished earlier run compiled from this very tree, if it is still there."""
    done = marker(ctx, f"{subject}-compile")
    same = all(done.get(k) == made.source.get(k) for k in ("identity", "root"))
    if not (same and Path(done.get("wheel", "")).is_file()):
        return False
    ctx.reporter.message(f"{subject}: compiled by an earlier run, {done['wheel']}")
    made.built, made.compiler_cache = Path(done["wheel"]), done.get("compiler_cache", {})
    return True


def run_compile(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``compile`` of companion ``subject`` (``pip wheel``: compiled and packaged)."""
    run = need_run(state)
    comp, made = companion(run.plan, subject), run.of(subject)
    tree = need(Path(made.source["root"]) if made.source else None, "the fetched tree", "fetch")
    if not _reuse(ctx, made, subject):
        made.built, made.compiler_cache = _pip_wheel(
            ctx, run.env, comp, {**made.source, "root": str(tree)}, run.plan.max_jobs
        )
        record = {"wheel": str(made.built), "compiler_cache": made.compiler_cache}
        keys = {k: made.source.get(k) for k in ("identity", "root")}
        ctx.workspace.mark_done(f"{subject}-compile", {**record, **keys})
    made.wheel = made.built
