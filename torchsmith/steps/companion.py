"""Step "companion": each companion of the plan built against exactly its torch — the wheel
``--against`` names, or (one run) the torch wheel this build has just published.

Order (each a stage with its own log, ``<workspace>/logs/<stage>.log``):

1. ``companion-torch``: the torch wheel is published into the output directory first — a
   companion that fails later never loses it;
2. ``companion-env``: a venv of the plan's Python with that wheel installed ``--no-deps`` (no
   resolver may choose another torch), then torch's own runtime requirements and the build tools;
   made once per torch wheel (its sha256 is recorded);
3. per companion ``<name>-fetch`` (Debian orig checked against the signed Sources index, or
   its own path/tarball source with the planned version.txt),
   ``<name>-build`` (``pip wheel --no-build-isolation --no-deps`` with the plan's variables, the
   compiler cache as a masquerade dir, MAX_JOBS), ``<name>-verify`` (Requires-Dist pins exactly
   that torch; smoke test in a fresh venv holding the two wheels), ``<name>-publish``.

Finished stages are recorded (markers), so rerunning the same command resumes at the companion
that failed. A failure names the companion, its stage and its log.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.cache import CompilerCache
from torchsmith.cache.stats import CacheStats
from torchsmith.companions import buildenv
from torchsmith.companions.binary import check_binaries
from torchsmith.companions.model import CompanionBuild, CompanionBuildPlan
from torchsmith.companions.source import fetch_own, still_current
from torchsmith.companions.torchsource import (
    ASK_SITE,
    TorchSource,
    install_args,
    link,
    of_interpreter,
    of_wheel,
)
from torchsmith.companions.verify import SMOKE_EXTRAS, SMOKE_SCRIPTS, check_torch_pin
from torchsmith.errors import BuildError, InternalError, ToolError, TorchsmithError, VerifyError
from torchsmith.hashing import sha256_file
from torchsmith.inspect.companion import inspect_companion_wheel
from torchsmith.kb import load as load_kb
from torchsmith.packaging.conda import wheel_metadata
from torchsmith.report.manifest import artifact_record
from torchsmith.sources.debian_orig import OrigJob, fetch_orig
from torchsmith.sources.hostdeps import ensure_packages
from torchsmith.steps.context import BuildContext
from torchsmith.steps.publish import publish_file, publish_manifest
from torchsmith.steps.state import BuildState

ENV_STAGE = "companion-env"


@dataclass(frozen=True)
class Env:
    """The companions' build environment."""

    python: Path
    base: dict[str, str]
    cache: CompilerCache
    cache_bin: Path | None
    torch: dict[str, Any]
    source: TorchSource
    """The torch every venv gets: the published wheel, or --against python:'s own."""
    cuda_env: dict[str, str]
    """The companions' CUDA variables known only once the toolkit is provisioned."""
    toolkit: dict[str, Any] | None = None
    made: dict[str, Path] = field(default_factory=dict)
    """What this run has made once for all companions (the smoke venv)."""


def cuda_env(
    plan: CompanionBuildPlan, toolkit: dict[str, Any] | None, cache: CompilerCache
) -> dict[str, str]:
    """CUDA_HOME of the provisioned toolkit, and nvcc through the compiler cache: torchvision's
    ninja file calls ``$PYTORCH_NVCC`` (torch/utils/cpp_extension.py: "user can set nvcc
    compiler with ccache"), torchaudio's CMake reads CMAKE_CUDA_COMPILER_LAUNCHER."""
    if plan.cuda is None:
        return {}
    if toolkit is None:
        raise InternalError(
            "the companions' CUDA ops are planned but no toolkit was provisioned",
            "the plan's toolchain step must come before companion; report this as a bug",
        )
    root = Path(toolkit["root"])
    env = {"CUDA_HOME": str(root), "CUDA_PATH": str(root)}
    if cache.active and cache.program:
        env["PYTORCH_NVCC"] = f"{cache.program} {root / 'bin' / 'nvcc'}"
        env["CMAKE_CUDA_COMPILER_LAUNCHER"] = cache.program
    return env


def _plan_of(ctx: BuildContext) -> CompanionBuildPlan:
    build = ctx.plan.companion_build
    if build is None:
        raise InternalError(
            "the companion step ran for a plan without companions to build",
            "report this as a torchsmith bug",
        )
    return build


def _root(ctx: BuildContext) -> Path:
    return ctx.workspace.root / "companions"


def _publish_torch(ctx: BuildContext, plan: CompanionBuildPlan) -> Path | None:
    """The torch wheel into the output directory (none for --against python:)."""
    if plan.torch.kind == "python":
        return None
    wheel = Path(plan.torch.location)
    out = ctx.options.output_dir
    with ctx.stage("companion-torch", f"{wheel.name} → {out} (before any companion)"):
        out.mkdir(parents=True, exist_ok=True)
        if (out / wheel.name).resolve() == wheel.resolve():
            return wheel
        return publish_file(wheel, out)


def _ask_torch(ctx: BuildContext, python: Path, env: dict[str, str]) -> dict[str, Any]:
    done = ctx.executor.capture([python, "-c", buildenv.ASK_TORCH], env=env, timeout=300)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise BuildError(
            f"the companions' build env cannot import its torch: {done.stderr.strip()[-400:]}",
            f"see {ctx.log(ENV_STAGE)}; the torch wheel's own requirements must install",
        )
    facts: dict[str, Any] = json.loads(lines[-1])
    return facts


def _make_env(
    ctx: BuildContext, plan: CompanionBuildPlan, source: TorchSource, env: dict[str, str]
) -> None:
    venv = _root(ctx) / "env"
    reqs = buildenv.runtime_requirements(plan.torch.requires_dist)
    log = ctx.log(ENV_STAGE)
    first, *rest = buildenv.venv_commands(source.creator, venv, install_args(source), reqs)
    ctx.executor.run(first, env=env, log_path=log)
    link(source, venv)
    for argv in rest:
        ctx.executor.run(argv, env=env, log_path=log)


def torch_source(
    ctx: BuildContext, state: BuildState, plan: CompanionBuildPlan, published: Path | None
) -> TorchSource:
    """The published torch wheel, or the torch the --against interpreter imports."""
    if published is not None:
        return of_wheel(published, state.tools.python)
    python = plan.torch.location
    done = ctx.executor.capture([python, "-c", ASK_SITE], env=state.base_env, timeout=300)
    if done.returncode != 0 or not done.stdout.strip():
        raise BuildError(
            f"--against python:{python} cannot import torch: {done.stderr.strip()[-400:]}",
            "name an interpreter whose environment has torch installed",
        )
    return of_interpreter(python, done.stdout.strip().splitlines()[-1])


def _env_key(plan: CompanionBuildPlan, source: TorchSource) -> dict[str, Any]:
    if source.wheel is not None:
        return {"torch_sha256": sha256_file(source.wheel)}
    return {"torch": plan.torch.version, **source.key()}


def environment(
    ctx: BuildContext, state: BuildState, plan: CompanionBuildPlan, published: Path | None
) -> Env:
    """The build env (made once per torch) and the compiler cache."""
    source = torch_source(ctx, state, plan, published)
    venv = _root(ctx) / "env"
    base = state.build_env_base()
    cache = buildenv.plan_cache(ctx.plan, ctx.options.cache_root, state.tools.cache, base)
    cache_bin = None
    if cache.active and cache.kind == "ccache" and cache.program:
        cache_bin = buildenv.masquerade(_root(ctx) / "ccache-bin", cache.program)
    env = buildenv.build_env(base, venv, cache, cache_bin, {})
    key = _env_key(plan, source)
    made = ctx.workspace.read_marker(ENV_STAGE) if ctx.workspace.is_done(ENV_STAGE) else {}
    if made != key:
        with ctx.stage(ENV_STAGE, f"{venv}: torch {plan.torch.version}: {source.describe()}"):
            _make_env(ctx, plan, source, env)
        ctx.workspace.mark_done(ENV_STAGE, key)
    torch = _ask_torch(ctx, venv / "bin" / "python", env)
    torch.update(key)
    torch["abi_note"] = abi_note(plan, torch)
    if torch["abi_note"]:
        ctx.reporter.message(torch["abi_note"])
    python = venv / "bin" / "python"
    record = state.toolkit.record if state.toolkit else None
    cuda = cuda_env(plan, record, cache)
    return Env(python, base, cache, cache_bin, torch, source, cuda, record)


def abi_note(plan: CompanionBuildPlan, torch: dict[str, Any]) -> str:
    """Say so when inspect's reading of the C++ ABI differs from the torch's own."""
    inspected, actual = plan.torch.cxx11_abi, torch.get("cxx11_abi")
    if inspected is None or actual is None or inspected == actual:
        return ""
    return (
        f"C++11 ABI: inspect read {inspected} ({plan.torch.abi_evidence}); the torch itself "
        f"says {actual} (torch._C._GLIBCXX_USE_CXX11_ABI). The companions are compiled with "
        "the torch's own value (torch.utils.cpp_extension passes it)"
    )


def _stats(ctx: BuildContext, cache: CompilerCache, env: dict[str, str]) -> CacheStats | None:
    argv = cache.stats_command()
    if argv is None:
        return None
    done = ctx.executor.capture(argv, env=env, timeout=60)
    return cache.parse_stats(done.stdout) if done.returncode == 0 else None


@dataclass
class Result:
    """What one companion produced."""

    name: str
    record: dict[str, Any]
    wheel: Path | None = None


def _fetch(ctx: BuildContext, comp: CompanionBuild, base: dict[str, str]) -> dict[str, Any]:
    if comp.source is not None:
        where = f"its own source, {comp.source.kind}"
        with ctx.stage(f"{comp.name}-fetch", where):
            log = _appender(ctx.log(f"{comp.name}-fetch"))
            return fetch_own(comp, ctx.options.cache_root / "sources", base, log)
    pkg = load_kb().debian_package(comp.package, comp.version)
    job = OrigJob(comp.package, comp.debian_version, comp.version, pkg.dsc_sha256)
    log = ctx.log(f"{comp.name}-fetch")
    with ctx.stage(f"{comp.name}-fetch", f"Debian {comp.package} {comp.debian_version}"):
        tree = fetch_orig(job, ctx.options.cache_root / "sources", base, _appender(log))
    for key, why in tree.details.items():
        if key.startswith("unavailable:"):
            ctx.reporter.message(f"{comp.name}: not served by the mirror: {key[12:]} ({why})")
    return {"root": str(tree.root), "identity": tree.identity, **tree.details}


def _appender(path: Path) -> Any:
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(line: str) -> None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    return write


def _build(
    ctx: BuildContext, e: Env, comp: CompanionBuild, tree: Path
) -> tuple[Path, dict[str, Any]]:
    work = _root(ctx) / comp.name
    src, wheels = work / "src", work / "wheels"
    for path in (src, wheels):
        shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(tree, src, symlinks=True)
    wheels.mkdir(parents=True)
    own = {**e.cuda_env, **{v.name: v.value for v in comp.env}}
    env = buildenv.build_env(e.base, e.python.parent.parent, e.cache, e.cache_bin, own)
    before = _stats(ctx, e.cache, env)
    argv: list[str | Path] = [
        e.python,
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-build-isolation",
        "--no-deps",
    ]
    with ctx.stage(
        f"{comp.name}-build",
        f"{comp.name} {comp.version} wheel (MAX_JOBS {_plan_of(ctx).max_jobs})",
    ):
        ctx.executor.run(
            [*argv, "-w", wheels, src], env=env, cwd=src, log_path=ctx.log(f"{comp.name}-build")
        )
    after = _stats(ctx, e.cache, env)
    built = sorted(wheels.glob("*.whl"))
    if len(built) != 1:
        raise BuildError(
            f"{comp.name}: pip wheel made {len(built)} wheels",
            f"see {ctx.log(comp.name + '-build')}",
        )
    return built[0], _cache_record(e.cache, before, after)


def _cache_record(
    cache: CompilerCache, before: CacheStats | None, after: CacheStats | None
) -> dict[str, Any]:
    if before is None or after is None:
        return {"kind": cache.kind, "hits": None, "misses": None, "hit_rate": None}
    delta = after.minus(before)
    rate = None if delta.hit_rate is None else round(delta.hit_rate, 4)
    return {"kind": cache.kind, "hits": delta.hits, "misses": delta.misses, "hit_rate": rate}


def _smoke_python(ctx: BuildContext, e: Env, env: dict[str, str], log: Path) -> Path:
    """One fresh venv per run with the torch alone (made at the first companion's smoke test);
    each companion's wheel joins it, so the last smoke test imports them all together."""
    venv = _root(ctx) / "smoke-venv"
    python = venv / "bin" / "python"
    if "smoke" not in e.made:
        ctx.executor.run([e.source.creator, "-m", "venv", "--clear", venv], env=env, log_path=log)
        link(e.source, venv)
        torch = install_args(e.source)
        if torch:
            ctx.executor.run(buildenv.pip(python, *torch), env=env, log_path=log)
        e.made["smoke"] = python
    return python


def _smoke(ctx: BuildContext, e: Env, comp: CompanionBuild, wheel: Path) -> dict[str, Any]:
    log = ctx.log(f"{comp.name}-verify")
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    env = {k: v for k, v in e.base.items() if k not in drop}
    python = _smoke_python(ctx, e, env, log)
    ctx.executor.run(buildenv.pip(python, wheel, *SMOKE_EXTRAS[comp.name]), env=env, log_path=log)
    with tempfile.TemporaryDirectory(prefix="torchsmith-smoke-") as work:
        script = Path(work) / "smoke.py"
        script.write_text(SMOKE_SCRIPTS[comp.name], encoding="utf-8")
        done = ctx.executor.run([python, script, work], env=env, cwd=Path(work), log_path=log)
    result: dict[str, Any] = json.loads(done.tail[-1])
    if result.get("torch") != e.torch.get("version"):
        raise VerifyError(
            f"{comp.name}'s smoke venv imports torch {result.get('torch')}, not the "
            f"{e.torch.get('version')} it was built against",
            f"see {log}",
        )
    return result


def _verify(ctx: BuildContext, e: Env, comp: CompanionBuild, wheel: Path) -> dict[str, Any]:
    plan = _plan_of(ctx)
    version = plan.torch.version
    smoke_what = comp.smoke if ctx.options.verify else "smoke test skipped (--no-verify)"
    code = f", GPU code for {plan.arch_list}" if plan.arch_list else ""
    what = f"Requires-Dist pins torch=={version}; links, C++ ABI{code}; {smoke_what}"
    with ctx.stage(f"{comp.name}-verify", what):
        pin = check_torch_pin(wheel, version)
        insp = inspect_companion_wheel(wheel)
        binaries = check_binaries(insp, e.source.libs, e.torch.get("cxx11_abi"), plan.arch_list)
        smoke: dict[str, Any] | str = smoke_what
        if ctx.options.verify:
            smoke = _smoke(ctx, e, comp, wheel)
        else:
            ctx.reporter.message(f"{comp.name}: {smoke_what}; Requires-Dist checked")
    return {"requires_torch": pin, "binaries": binaries, "smoke": smoke}


def _system_packages(ctx: BuildContext, comp: CompanionBuild, env: dict[str, str]) -> None:
    """The packages its build needs (libjpeg, libpng…): checked, installed with --install-deps;
    without them setup.py would leave the decoders out and only the smoke test would notice."""
    names = [p.name for p in comp.system_packages]
    if not names:
        return
    why = f"{comp.name} {comp.version} (" + "; ".join(p.reason for p in comp.system_packages)
    installed = ensure_packages(
        names, env, install=ctx.options.install_deps, why=why + ")", on_line=None
    )
    if installed:
        ctx.reporter.message(f"{comp.name}: installed {' '.join(installed)} (--install-deps)")


def _built(ctx: BuildContext, e: Env, comp: CompanionBuild) -> tuple[Path, dict[str, Any]]:
    """The companion's wheel: the one a finished earlier run left, else fetched and built."""
    stage = f"{comp.name}-built"
    done = ctx.workspace.read_marker(stage) if ctx.workspace.is_done(stage) else {}
    if done and not still_current(comp, done.get("source", {}), e.base):
        ctx.reporter.message(
            f"{comp.name}: its source tree changed since the last run: built again"
        )
        done = {}
    if done.get("wheel") and Path(done["wheel"]).is_file():
        ctx.reporter.message(f"{comp.name}: built by an earlier run, {done['wheel']}")
        return Path(done["wheel"]), done
    _system_packages(ctx, comp, e.base)
    source = _fetch(ctx, comp, e.base)
    wheel, cache = _build(ctx, e, comp, Path(source["root"]))
    done = {"wheel": str(wheel), "source": source, "compiler_cache": cache}
    ctx.workspace.mark_done(stage, done)
    return wheel, done


def _one(ctx: BuildContext, e: Env, comp: CompanionBuild) -> Result:
    wheel, done = _built(ctx, e, comp)
    verified = _verify(ctx, e, comp, wheel)
    with ctx.stage(f"{comp.name}-publish", f"{wheel.name} → {ctx.options.output_dir}"):
        final = publish_file(wheel, ctx.options.output_dir, plan_hash=ctx.plan.plan_hash())
    record = {
        "name": comp.name,
        "version": comp.version,
        "source": done.get("source", {}),
        "env": {v.name: v.value for v in comp.env},
        "compiler_cache": done.get("compiler_cache", {}),
        "verify": verified,
        "artifact": artifact_record(final),
    }
    return Result(comp.name, record, final)


def _failure(
    ctx: BuildContext, comp: CompanionBuild, exc: TorchsmithError, torch_wheel: Path | None
) -> BuildError:
    stage = _last_stage(ctx, comp)
    log = getattr(exc, "log_path", None) or str(ctx.log(stage))
    return BuildError(
        f"companion {comp.name} {comp.version} failed in stage {stage}: {exc.message}",
        f"log: {log}. {_kept(torch_wheel)}rerunning the same command "
        f"resumes at {comp.name}. {exc.hint}".strip(),
        log_path=log,
        excerpt=exc.excerpt if isinstance(exc, ToolError) else (),
        returncode=exc.returncode if isinstance(exc, ToolError) else None,
    )


def _kept(torch_wheel: Path | None) -> str:
    return f"The torch wheel is kept ({torch_wheel}); " if torch_wheel else ""


def _last_stage(ctx: BuildContext, comp: CompanionBuild) -> str:
    started = [s for s in ctx.timings if s.startswith(f"{comp.name}-")]
    return started[-1] if started else f"{comp.name}-fetch"


def _total_cache(kind: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    hits = sum(int(r.get("hits") or 0) for r in records)
    misses = sum(int(r.get("misses") or 0) for r in records)
    rate = round(hits / (hits + misses), 4) if hits + misses else None
    return {"kind": kind, "hits": hits, "misses": misses, "hit_rate": rate}


def _manifest(
    ctx: BuildContext, state: BuildState, plan: CompanionBuildPlan, e: Env, results: list[Result]
) -> None:
    if plan.torch.kind == "build":
        add_to_torch_manifest(ctx, state, e.torch, results)
        return
    torch = [e.source.wheel] if e.source.wheel else []
    state.artifacts = [artifact_record(w) for w in torch] + [r.record["artifact"] for r in results]
    state.published = torch + [r.wheel for r in results if r.wheel]
    state.manifest = {
        "schema_version": 1,
        "kind": "companions",
        "plan_hash": ctx.plan.plan_hash(),
        "plan": ctx.plan.model_dump(mode="json"),
        "source": {"kind": "against", "version": plan.torch.version},
        "torch": {**plan.torch.model_dump(mode="json"), "in_build_env": e.torch},
        "companions": [r.record for r in results],
        "stages": {k: round(v, 1) for k, v in ctx.timings.items()},
        "total_seconds": round(sum(ctx.timings.values()), 1),
        "compiler_cache": _total_cache(e.cache.kind, [r.record["compiler_cache"] for r in results]),
        "artifacts": state.artifacts,
        "workspace": str(ctx.workspace.root),
    }
    name = f"companions-{ctx.plan.plan_hash()}.manifest.json"
    dirs = [ctx.options.output_dir, ctx.workspace.root]
    state.manifest_paths = publish_manifest(state.manifest, dirs, name)


def add_to_torch_manifest(
    ctx: BuildContext, state: BuildState, torch_in_env: dict[str, Any], results: list[Result]
) -> None:
    """One run: the torch build's manifest gains the companions (records, artifacts, stage
    times) and is published again under its own name — one manifest for all the wheels."""
    if not state.manifest_paths:
        raise InternalError(
            "the companion step ran before the torch's manifest was published",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    state.artifacts += [r.record["artifact"] for r in results]
    state.published += [r.wheel for r in results if r.wheel]
    manifest = dict(state.manifest)
    manifest["companions"] = [r.record for r in results]
    manifest["companions_torch_in_build_env"] = torch_in_env
    manifest["artifacts"] = state.artifacts
    manifest["stages"] = {k: round(v, 1) for k, v in ctx.timings.items()}
    state.manifest = manifest
    dirs = [ctx.options.output_dir, ctx.workspace.root]
    state.manifest_paths = publish_manifest(manifest, dirs, state.manifest_paths[0].name)


def runtime_plan(plan: CompanionBuildPlan, state: BuildState) -> CompanionBuildPlan:
    """The companions' plan with the torch they are built against on disk: for a torch this
    build makes (kind ``build``), the wheel the publish step published and its Requires-Dist."""
    if plan.torch.kind != "build":
        return plan
    wheel = state.published[0] if state.published else state.need_wheel()
    requires = wheel_metadata(wheel)[2]
    torch = plan.torch.model_copy(update={"location": str(wheel), "requires_dist": requires})
    return plan.model_copy(update={"torch": torch})


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``companion``."""
    plan = runtime_plan(_plan_of(ctx), state)
    published = _publish_torch(ctx, plan)
    e = environment(ctx, state, plan, published)
    results = []
    for comp in plan.builds:
        try:
            results.append(_one(ctx, e, comp))
        except TorchsmithError as exc:
            raise _failure(ctx, comp, exc, published) from exc
    _manifest(ctx, state, plan, e, results)
