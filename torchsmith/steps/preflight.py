"""Checks before any work starts: the compilers, CMake, ninja, the compiler cache and the
Python the plan needs are there, and the disk has room. Every problem is reported at once, as
a :class:`HostError`, before a minute is spent building."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from torchsmith.backends.base import Executor
from torchsmith.errors import HostError
from torchsmith.host.apt_policy import not_installable
from torchsmith.host.probe import probe_host
from torchsmith.host.pythons import version_key
from torchsmith.host.system import os_release
from torchsmith.plan_model import BuildPlan
from torchsmith.sources.hostdeps import ensure_packages
from torchsmith.steps.state import Toolchain
from torchsmith.toolchains.compiler import install_compiler, install_hint
from torchsmith.workspace import check_cache_root

_CXX = {"gcc": "g++", "clang": "clang++"}
APT_TOOLS = {"cmake": "cmake", "ninja": "ninja-build", "ccache": "ccache"}
"""Programs preflight demands -> the Debian package that ships each (--install-deps)."""
# What an interpreter is really (a pyenv shim is a shell script that picks one, or fails).
_ASK_PYTHON = (
    "import sys, sysconfig; print(sys.executable); print('%d.%d' % sys.version_info[:2] + "
    "('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))"
)
"""The interpreter and its version, '3.13t' for a free-threaded build (PEP 703)."""
_PYTHON_HINT = (
    "make that Python runnable (pyenv: `pyenv install`/`pyenv local` that version; Debian: "
    "apt-get install python3.X-venv), or choose another --python"
)


def compiler_candidates(label: str) -> list[tuple[str, str]]:
    """(cc, cxx) names to look for, for a plan compiler like 'gcc-12' or 'clang-14'."""
    family, _, major = label.partition("-")
    cxx = _CXX.get(family, f"{family}++")
    names = [(f"{family}-{major}", f"{cxx}-{major}")] if major else []
    return [*names, (family, cxx)]


def base_python(plan: BuildPlan) -> list[str]:
    """Interpreters to build the Python env from, best first. Debian's route with the suite's
    python3 needs that interpreter (the Debian python3-* modules are only visible to it)."""
    if plan.source.system_python:
        return ["/usr/bin/python3"]
    version = str(plan.python.value or "")
    return [f"python{version}", "python3"] if version else ["python3"]


def _first(ex: Executor, names: list[str], env: Mapping[str, str]) -> str | None:
    for name in names:
        found = ex.which(name, env) if "/" not in name else (name if Path(name).exists() else None)
        if found:
            return found
    return None


def resolve_python(ex: Executor, path: str, env: Mapping[str, str], want: str) -> str:
    """The real interpreter behind ``path`` (a pyenv shim resolves to the version it picks),
    asked of the interpreter itself; refused with the cause when it cannot run or is not the
    plan's Python ``want`` ('3.11'; '' for any)."""
    try:
        done = ex.capture([path, "-c", _ASK_PYTHON], env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HostError(f"the plan's Python {path} cannot be run: {exc}", _PYTHON_HINT) from exc
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or len(lines) < 2:
        cause = " ".join(done.stderr.strip().splitlines()[:1]) or f"exit status {done.returncode}"
        raise HostError(f"the plan's Python {path} cannot run: {cause}", _PYTHON_HINT)
    real, version = lines[-2], lines[-1]
    if want and version != want:
        raise HostError(f"{path} is Python {version}; the plan needs {want}", _PYTHON_HINT)
    return real or path


def pyenv_installed(shim: str, want: str) -> str | None:
    """For a pyenv shim (``<root>/shims/pythonX.Y``) whose version is installed but not
    selected: the newest ``<root>/versions/X.Y.*/bin/pythonX.Y``."""
    path = Path(shim)
    if path.parent.name != "shims" or not want:
        return None
    found = path.parent.parent.glob(f"versions/{want}.*/bin/python{want}")
    best = sorted(found, key=lambda p: version_key(p.parts[-3]))
    return str(best[-1]) if best else None


def plan_python(ex: Executor, path: str, env: Mapping[str, str], want: str) -> str:
    """The real interpreter of the plan's Python; a pyenv shim that cannot run falls back to
    the version pyenv has installed, else it is refused with its own words."""
    try:
        return resolve_python(ex, path, env, want)
    except HostError:
        installed = pyenv_installed(path, want)
        if installed is None:
            raise
        return resolve_python(ex, installed, env, want)


def _check_install_target(
    ex: Executor, plan: BuildPlan, env: Mapping[str, str], build_python: str
) -> None:
    """``--output install``: the named interpreter runs and is the Python the wheel is for
    (checked now, not after the build)."""
    if plan.install_python is None:
        return
    asked = ex.capture([build_python, "-c", _ASK_PYTHON], env=env, timeout=60).stdout.split()
    want = str(plan.python.value or "") or (asked[-1] if asked else "")
    try:
        resolve_python(ex, plan.install_python, env, want)
    except HostError as exc:
        raise HostError(
            f"--install-python: {exc.message}",
            f"name an interpreter of Python {want or 'the build'} (the wheel is built for it), "
            "or build for the target's version with --python X.Y",
        ) from exc


def _version(ex: Executor, argv: list[str], env: Mapping[str, str]) -> str:
    done = ex.run(argv, env=env, check=False)
    lines = [line for line in done.tail if line.strip()]
    return lines[0].strip() if done.returncode == 0 and lines else "unknown"


def _which_compilers(ex: Executor, label: str, env: Mapping[str, str]) -> tuple[str, str] | None:
    for cc, cxx in compiler_candidates(label):
        cc_path, cxx_path = ex.which(cc, env), ex.which(cxx, env)
        if cc_path and cxx_path:
            return cc_path, cxx_path
    return None


def _install(ex: Executor, label: str, env: Mapping[str, str], where: Path) -> None:
    """--install-deps: the plan's compiler from the host's package manager (root only)."""
    family, _, major = label.partition("-")
    if family not in {"gcc", "clang"} or not major.isdigit():
        return
    hint = install_hint(family, int(major))  # type: ignore[arg-type]
    host = probe_host(env, where, ex)
    install_compiler(hint, host, env, runner=ex, is_root=os.geteuid() == 0)


def _find_compilers(
    ex: Executor, plan: BuildPlan, env: Mapping[str, str], where: Path, install_deps: bool
) -> tuple[str, str]:
    label = plan.compiler.value or "gcc"
    found = _which_compilers(ex, label, env)
    if found is None and install_deps:
        _install(ex, label, env, where)
        found = _which_compilers(ex, label, env)
    if found is not None:
        return found
    raise HostError(
        f"the plan's compiler {label} (C and C++) is not on PATH", _compiler_hint(ex, label, env)
    )


def _compiler_hint(ex: Executor, label: str, env: Mapping[str, str]) -> str:
    """How to get the compiler, claiming only what this host's own package lists say."""
    family, _, major = label.partition("-")
    if family not in {"gcc", "clang"} or not major.isdigit():
        return "install it, or choose another --compiler"
    hint = install_hint(family, int(major))  # type: ignore[arg-type]
    os_id = (os_release() or ("", ""))[0]
    missing = _not_in_apt_lists(ex, list(hint.apt), env) if os_id in {"debian", "ubuntu"} else []
    if missing:
        return (
            f"this host's apt lists have no {' '.join(missing)} (`apt-cache policy` finds no "
            f"candidate), so neither apt-get nor --install-deps can supply it here; a machine "
            f"or container whose distribution packages {label} can (torchsmith's container "
            "backends are not implemented yet), or choose another --compiler"
        )
    return (
        f"install it ({hint.command(os_id)}), pass --install-deps to let torchsmith install "
        "it, or choose another --compiler"
    )


def _not_in_apt_lists(ex: Executor, packages: list[str], env: Mapping[str, str]) -> list[str]:
    """The packages ``apt-cache policy`` knows no candidate for; [] when it cannot be asked."""
    if ex.which("apt-cache", env) is None:
        return []
    try:
        done = ex.capture(["apt-cache", "policy", *packages], env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return not_installable(done.stdout, packages) if done.returncode == 0 else []


def _install_tools(ex: Executor, names: list[str], env: Mapping[str, str]) -> bool:
    """--install-deps: the build tools torchsmith itself runs (cmake, ninja, ccache) from apt —
    not only the source's Build-Depends; False where apt-get is not on PATH."""
    packages = [APT_TOOLS[name] for name in names if name in APT_TOOLS]
    if not packages or shutil.which("apt-get", path=env.get("PATH", "")) is None:
        return False
    ensure_packages(packages, env, runner=ex, install=True, why="the build tools torchsmith runs")
    return True


def _check_cache_root(where: Path) -> None:
    """The cache root must be a directory this user can write: make it (mode 0700; as root, one
    others can write is refused: :func:`check_cache_root`) and a file in it. /proc/..., a
    read-only mount or a file are named as such."""
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_cache_root(where)
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as exc:
        raise HostError(
            f"cannot write to the cache root {where}: {exc.strerror or exc}",
            "pass --cache-root DIR: a directory you can write, on a disk with room",
        ) from exc


def _check_disk(ex: Executor, plan: BuildPlan, where: Path) -> None:
    need = plan.disk_gb.value
    free = ex.disk_free_gib(where)
    if free < need:
        raise HostError(
            f"only {free:.1f} GiB free at {where}; this build needs about {need:.0f} GiB",
            "free some space or pass --cache-root on a bigger disk",
        )


def preflight(
    ex: Executor,
    plan: BuildPlan,
    env: Mapping[str, str],
    where: Path,
    install_deps: bool = False,
) -> Toolchain:
    """Find every program the plan needs and check the disk, or raise before any work."""
    _check_cache_root(where)
    _check_disk(ex, plan, where)
    cc, cxx = _find_compilers(ex, plan, env, where, install_deps)
    missing: list[str] = []
    found: dict[str, str | None] = {
        "cmake": ex.which("cmake", env),
        "ninja": ex.which("ninja", env),
        "python": _first(ex, base_python(plan), env),
    }
    if found["python"] is not None:
        want = "" if plan.source.system_python else str(plan.python.value or "")
        found["python"] = plan_python(ex, found["python"], env, want)
        _check_install_target(ex, plan, env, found["python"])
    cache_kind = plan.cache.value
    if cache_kind != "none":
        found[cache_kind] = ex.which(cache_kind, env)
    missing = [name for name, path in found.items() if path is None]
    if missing and install_deps and _install_tools(ex, missing, env):
        found |= {name: ex.which(name, env) for name in missing if name in APT_TOOLS}
        missing = [name for name, path in found.items() if path is None]
    if missing:
        raise HostError(
            f"missing on this machine: {', '.join(missing)}",
            "install them (Debian: apt-get install cmake ninja-build ccache python3-venv), "
            "or pass --cache none to build without a compiler cache",
        )
    _check_nccl(ex, plan, env)
    return _with_versions(ex, env, (cc, cxx), found, cache_kind)


# where the plan says a system NCCL is (features.system_nccl with [nccl] / --nccl-root /
# TORCHSMITH_NCCL_ROOT), and what pytorch's cmake/Modules/FindNCCL.cmake looks for there
_NCCL_FILES = {"NCCL_INCLUDE_DIR": "nccl.h", "NCCL_LIB_DIR": "libnccl.so*"}


def _check_nccl(ex: Executor, plan: BuildPlan, env: Mapping[str, str]) -> None:
    """Trial E10: NCCL_ROOT=/nonexistent was planned and built with, unchecked."""
    dirs = plan.env_dict()
    missing = [
        f"{pattern} in {dirs[name]} ({name})"
        for name, pattern in _NCCL_FILES.items()
        if name in dirs and not _exists(ex, dirs[name], pattern, env)
    ]
    if missing:
        raise HostError(
            f"the system NCCL the plan names is not there: no {'; no '.join(missing)}",
            "give NCCL's install prefix (--nccl-root, TORCHSMITH_NCCL_ROOT or [nccl] root; "
            "Debian: apt-get install libnccl-dev, prefix /usr with lib_dir "
            "/usr/lib/x86_64-linux-gnu), or drop system_nccl (torch builds its own NCCL)",
        )


def _exists(ex: Executor, folder: str, pattern: str, env: Mapping[str, str]) -> bool:
    """A file matching ``pattern`` in ``folder`` on the machine that builds (the executor's)."""
    probe = 'for f in "$1"/$2; do [ -e "$f" ] && exit 0; done; exit 1'
    return ex.capture(["sh", "-c", probe, "sh", folder, pattern], env=env).returncode == 0


def _with_versions(
    ex: Executor,
    env: Mapping[str, str],
    compilers: tuple[str, str],
    found: Mapping[str, str | None],
    cache_kind: str,
) -> Toolchain:
    cc, cxx = compilers
    cache = found.get(cache_kind) if cache_kind != "none" else None
    programs = {"cc": cc, "cxx": cxx, **{k: v for k, v in found.items() if v}}
    versions = {
        name: _version(ex, [path, "--version"], env) for name, path in sorted(programs.items())
    }
    return Toolchain(
        cc=cc,
        cxx=cxx,
        cmake=str(found["cmake"]),
        ninja=str(found["ninja"]),
        python=str(found["python"]),
        cache=cache,
        versions=versions,
    )
