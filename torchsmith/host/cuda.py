"""CUDA toolkits: candidates in priority order (CUDA_HOME, CUDA_PATH, nvcc on PATH,
/usr/local/cuda, /usr/local/cuda-*, Debian's /usr/lib/nvidia-cuda-toolkit, conda, pip's
nvidia/cu13 and nvidia/cuda_nvcc layouts), one per real nvcc, each asked ``nvcc --version``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, parallel, query, which
from torchsmith.host.model import CudaToolkit
from torchsmith.runner import Runner

DEBIAN_ROOT = Path("/usr/lib/nvidia-cuda-toolkit")
PIP_LAYOUTS = ("nvidia/cu13", "nvidia/cu12", "nvidia/cuda_nvcc")
_DRYRUN = ("-dryrun", "-v", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null")
WRAPPER_MAX_BYTES = 4096  # a plain exec wrapper is a few lines; a longer script is asked


class ToolkitCandidate(NamedTuple):  # a NamedTuple: no generated code at import (start-up)
    root: Path
    nvcc: Path
    origin: str
    wrapper: bool = False  # nvcc is a script: ask it (-dryrun) where the real one is


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def _version_key(path: Path) -> Version:
    try:
        return Version(path.name.removeprefix("cuda-"))
    except InvalidVersion:
        return Version("0")


def site_packages_dirs(env: Mapping[str, str]) -> list[Path]:
    """site-packages of the active venv/conda env, of this Python and of ``python3`` on PATH."""
    prefixes = [env.get("VIRTUAL_ENV"), env.get("CONDA_PREFIX"), sys.prefix]
    python = which("python3", env)
    if python is not None:
        prefixes.append(str(python.parent.parent))
    dirs: dict[Path, None] = {}
    for prefix in filter(None, prefixes):
        for pattern in ("lib/python3*/site-packages", "lib64/python3*/site-packages"):
            dirs.update(dict.fromkeys(sorted(Path(prefix).glob(pattern))))
    return list(dirs)


def _from_root(root: Path, origin: str) -> ToolkitCandidate:
    return ToolkitCandidate(root, root / "bin" / "nvcc", origin)


def _path_candidate(env: Mapping[str, str]) -> ToolkitCandidate | None:
    nvcc = which("nvcc", env)
    if nvcc is None:
        return None
    real = Path(os.path.realpath(nvcc))
    return ToolkitCandidate(real.parent.parent, real, f"PATH ({nvcc})", wrapper=_is_script(real))


def _env_candidates(env: Mapping[str, str]) -> Iterable[ToolkitCandidate]:
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(var):
            yield _from_root(Path(env[var]), var)
    path_cand = _path_candidate(env)
    if path_cand is not None:
        yield path_cand
    if env.get("CONDA_PREFIX"):
        yield _from_root(Path(env["CONDA_PREFIX"]), "CONDA_PREFIX")


def toolkit_candidates(
    env: Mapping[str, str], root: Path = Path("/"), site_dirs: Sequence[Path] | None = None
) -> list[ToolkitCandidate]:
    """Every place a toolkit may be, in priority order; missing ones are dropped later."""
    local = root / "usr/local"
    versioned = sorted(local.glob("cuda-*"), key=_version_key, reverse=True)
    sites = site_packages_dirs(env) if site_dirs is None else site_dirs
    return [
        *_env_candidates(env),
        _from_root(local / "cuda", "/usr/local/cuda"),
        *(_from_root(p, str(p)) for p in versioned),
        _from_root(root / DEBIAN_ROOT.relative_to("/"), "Debian nvidia-cuda-toolkit"),
        *(_from_root(s / layout, f"pip ({s})") for s in sites for layout in PIP_LAYOUTS),
    ]


def exec_target(script: Path, env: Mapping[str, str]) -> Path | None:
    """The program a plain ``exec /ABS/PATH "$@"`` wrapper runs (:func:`parse.parse_exec_wrapper`),
    read from the script itself, when it is an executable file and no script; None: the wrapper
    must be asked (also under ``BASH_ENV``, which bash reads before the script)."""
    if env.get("BASH_ENV"):
        return None
    try:
        with script.open("rb") as fh:
            text = fh.read(WRAPPER_MAX_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    target = parse.parse_exec_wrapper(text) if len(text) <= WRAPPER_MAX_BYTES else None
    if target is None:
        return None
    real = Path(os.path.realpath(target))
    runnable = real.is_file() and os.access(real, os.X_OK) and not _is_script(real)
    return real if runnable else None


def _read_wrapper(cand: ToolkitCandidate, env: Mapping[str, str]) -> ToolkitCandidate:
    """A plain ``exec`` wrapper → the toolkit it runs (:func:`exec_target`), so that it counts
    as that nvcc among the others (one ``--version`` for both); any other candidate as is."""
    real = exec_target(cand.nvcc, env) if cand.wrapper else None
    if real is None:
        return cand
    return cand._replace(root=real.parent.parent, nvcc=real, wrapper=False)


def _unwrap(cand: ToolkitCandidate, env: Mapping[str, str], runner: Runner) -> ToolkitCandidate:
    """A wrapper script on PATH → the toolkit it runs: read from a plain ``exec`` wrapper
    (:func:`exec_target`), else asked (``nvcc -dryrun``'s _HERE_, which runs the host
    compiler's preprocessor: ~10 ms of CPU at every probe, a script's answer is never kept)."""
    read = _read_wrapper(cand, env)
    if not read.wrapper:
        return read
    here = parse.parse_nvcc_dryrun_bin(query([cand.nvcc, *_DRYRUN], env, runner))
    if here is None:
        raise ProbeError(f"{cand.nvcc} is a script and `nvcc -dryrun` did not say where nvcc is")
    real = Path(os.path.realpath(Path(here) / "nvcc"))
    return cand._replace(root=real.parent.parent, nvcc=real, wrapper=False)


def probe_toolkit(cand: ToolkitCandidate, env: Mapping[str, str], runner: Runner) -> CudaToolkit:
    if cand.wrapper:
        cand = _unwrap(cand, env, runner)
    text = query([cand.nvcc, "--version"], env, runner, cacheable=True)
    found = parse.parse_nvcc_version(text)
    if found is None:
        raise ProbeError(f"{cand.nvcc}: cannot read a version from `nvcc --version`")
    root = os.path.realpath(cand.root)
    return CudaToolkit(root=root, nvcc=str(cand.nvcc), version=found[0], origin=cand.origin)


def _present(cands: Iterable[ToolkitCandidate], warnings: list[str]) -> list[ToolkitCandidate]:
    """Candidates whose nvcc exists, one per real nvcc (wrappers are resolved later)."""
    seen: dict[str, ToolkitCandidate] = {}
    for cand in cands:
        if not cand.nvcc.is_file():
            if cand.origin in ("CUDA_HOME", "CUDA_PATH"):
                warnings.append(f"{cand.origin}={cand.root} has no bin/nvcc")
            continue
        key = str(cand.nvcc) if cand.wrapper else os.path.realpath(cand.nvcc)
        seen.setdefault(key, cand)
    return list(seen.values())


def _attempt(cand: ToolkitCandidate, env: Mapping[str, str], runner: Runner) -> CudaToolkit | str:
    try:
        return probe_toolkit(cand, env, runner)
    except ProbeError as exc:
        return exc.message


def probe_toolkits(
    env: Mapping[str, str], runner: Runner, root: Path = Path("/")
) -> tuple[list[CudaToolkit], list[str]]:
    warnings: list[str] = []
    cands = _present((_read_wrapper(c, env) for c in toolkit_candidates(env, root)), warnings)
    results = parallel(lambda c: _attempt(c, env, runner), cands)
    toolkits: dict[str, CudaToolkit] = {}
    for item in results:
        if isinstance(item, str):
            warnings.append(item)
        else:
            toolkits.setdefault(os.path.realpath(item.nvcc), item)
    return list(toolkits.values()), warnings
