"""The companions' build environment: a venv of the plan's Python holding the exact torch wheel
(installed with ``--no-deps``, so no resolver can pick another torch), then torch's own runtime
requirements as its wheel declares them (the ``nvidia-*`` libraries a CUDA torch needs to be
imported) and the build tools; and the compiler cache as a masquerade directory (``gcc``,
``g++``, ``cc``, ``c++`` → ccache) first on PATH, which both ``torch.utils.cpp_extension``'s
ninja files (torchvision) and CMake (torchaudio) pick up."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from torchsmith.cache import CachePlan, CompilerCache, cache_from_plan
from torchsmith.plan_model import BuildPlan

BUILD_TOOLS = ("setuptools", "wheel")
COMPILERS = ("gcc", "g++", "cc", "c++")
ASK_TORCH = (
    "import json, torch; print(json.dumps({'version': torch.__version__, "
    "'cxx11_abi': bool(torch._C._GLIBCXX_USE_CXX11_ABI), 'cuda': torch.version.cuda}))"
)


def runtime_requirements(requires_dist: Iterable[str]) -> list[str]:
    """torch's Requires-Dist without extras-only entries and without torch itself."""
    kept = []
    for text in requires_dist:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.name.lower() == "torch" or (req.marker and "extra" in str(req.marker)):
            continue
        kept.append(str(req))
    return kept


def pip(python: Path, *args: str | Path) -> list[str | Path]:
    return [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]


def venv_commands(
    base_python: str, venv: Path, torch: list[str | Path], reqs: list[str]
) -> list[list[str | Path]]:
    """The commands that make the build env: venv, the exact torch (``torch``: its wheel, or
    nothing when the venv sees an interpreter's torch), its requirements, the build tools."""
    python = venv / "bin" / "python"
    commands: list[list[str | Path]] = [[base_python, "-m", "venv", "--clear", venv]]
    if torch:
        commands.append(pip(python, "--no-deps", *torch))
    return [*commands, pip(python, *reqs, *BUILD_TOOLS)]


def plan_cache(
    plan: BuildPlan, cache_root: Path, program: str | None, env: Mapping[str, str]
) -> CompilerCache:
    setup = plan.cache_setup or CachePlan(kind=plan.cache.value, local_dir=plan.cache_dir)
    return cache_from_plan(setup, cache_root, program, env)


def masquerade(directory: Path, program: str) -> Path:
    """``directory`` with gcc/g++/cc/c++ symlinks to the compiler cache (made once)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in COMPILERS:
        link = directory / name
        if not link.is_symlink() or str(link.readlink()) != program:
            link.unlink(missing_ok=True)
            link.symlink_to(program)
    return directory


def build_env(
    base: Mapping[str, str],
    venv: Path,
    cache: CompilerCache,
    cache_bin: Path | None,
    own: Mapping[str, str],
) -> dict[str, str]:
    """The companion build's variables: base < compiler cache < the plan's companion env."""
    env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX")}
    launcher = {k: v for k, v in cache.env().items() if "COMPILER_LAUNCHER" not in k}
    env.update(launcher)
    path = [str(venv / "bin"), base.get("PATH", "/usr/bin:/bin")]
    if cache_bin is not None:
        path.insert(0, str(cache_bin))
    env.update({"VIRTUAL_ENV": str(venv), "PATH": ":".join(path), **own})
    env.update(cache.secret_env())
    return env
