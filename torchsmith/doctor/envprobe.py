"""The thin probing layer behind ``torchsmith doctor --env``: gather :class:`EnvFacts`.

Host facts come from :func:`torchsmith.host.probe.probe_host` when that module is present, else
from a minimal probe of our own. The Python side runs one small script in the chosen interpreter
(through the runner the command passes in) that lists every torch on its sys.path, imports torch
and the companion libraries, and reports back as JSON. Probing never raises for a missing tool:
what cannot be learned stays unknown.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from torchsmith.doctor.envcheck import EnvFacts, PythonFacts
from torchsmith.doctor.plancheck import PlanFacts, PlanNeeds
from torchsmith.host.model import Compiler, CudaToolkit, HostFacts
from torchsmith.interpreter import invocable
from torchsmith.runner import Runner

_PY_SCRIPT = r"""
import json, os, sys, warnings
out = {"executable": sys.executable, "installs": [], "extensions": []}
for entry in sys.path:
    init = os.path.join(entry or os.getcwd(), "torch", "__init__.py")
    if os.path.isfile(init):
        ver = None
        vfile = os.path.join(os.path.dirname(init), "version.py")
        if os.path.isfile(vfile):
            for line in open(vfile):
                if line.startswith("__version__"):
                    ver = line.split("=", 1)[1].strip().strip("'\"")
        out["installs"].append({"path": os.path.dirname(init), "version": ver})
try:
    import torch
    out["imported"] = {"path": os.path.dirname(torch.__file__), "version": torch.__version__,
                       "cuda": torch.version.cuda,
                       "cxx11_abi": bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False))}
except Exception as exc:
    out["import_error"] = "%s: %s" % (type(exc).__name__, exc)
if "imported" in out:
    for name in ("torchvision", "torchaudio"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                mod = __import__(name)
                if name == "torchvision":
                    from torchvision import extension
                    getattr(extension, "_assert_has_ops", lambda: None)()
                bad = [str(w.message) for w in caught if "undefined symbol" in str(w.message)]
                out["extensions"].append({"name": name, "ok": not bad,
                                          "error": bad[0] if bad else None})
            except ModuleNotFoundError:
                pass
            except Exception as exc:
                out["extensions"].append({"name": name, "ok": False,
                                          "error": "%s: %s" % (type(exc).__name__, exc)})
print(json.dumps(out))
"""


def probe_python(python: str, env: Mapping[str, str], runner: Runner) -> PythonFacts | None:
    """Run the probe script in ``python``; None when it cannot run or says nothing useful.
    It runs in an empty temporary directory: ``python -c`` puts the working directory first on
    sys.path, so a ``torch/`` there would be imported instead of the installed one."""
    try:
        with tempfile.TemporaryDirectory(prefix="torchsmith-envprobe-") as empty:
            argv = [invocable(python), "-c", _PY_SCRIPT]
            done = runner.capture(argv, env=env, cwd=Path(empty), timeout=120)
        data = json.loads(done.stdout.strip().splitlines()[-1])
        return PythonFacts.model_validate(data)
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError, ValidationError):
        return None


def probe_host_facts(env: Mapping[str, str], disk_path: Path, runner: Runner) -> HostFacts:
    """The host module's full probe when it exists, else a minimal one."""
    try:
        module: Any = importlib.import_module("torchsmith.host.probe")
        facts = module.probe_host(env, disk_path, runner)
        if isinstance(facts, HostFacts):
            return facts
    except ImportError:
        pass
    return minimal_host(env, disk_path, runner)


def minimal_host(env: Mapping[str, str], disk_path: Path, runner: Runner) -> HostFacts:
    """Cores, RAM, free disk, the default gcc, the nvcc on PATH and the driver's CUDA level."""
    smi = _output(["nvidia-smi"], env, runner)
    driver = re.search(r"Driver Version:\s*([\d.]+)", smi)
    driver_cuda = re.search(r"CUDA Version:\s*([\d.]+)", smi)
    return HostFacts(
        cores=os.cpu_count() or 1,
        ram_gib=_ram_gib(),
        disk_free_gib=shutil.disk_usage(disk_path).free / 2**30 if disk_path.exists() else 0.0,
        disk_path=str(disk_path),
        compilers=_gcc(env, runner),
        cuda_toolkits=_nvcc(env, runner),
        driver_version=driver.group(1) if driver else None,
        driver_cuda=driver_cuda.group(1) if driver_cuda else None,
    )


def _output(argv: list[str], env: Mapping[str, str], runner: Runner) -> str:
    try:
        done = runner.capture(argv, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr if done.returncode == 0 else ""


def _ram_gib() -> float:
    try:
        text = Path("/proc/meminfo").read_text(encoding="ascii")
    except OSError:
        return 0.0
    match = re.search(r"MemTotal:\s+(\d+) kB", text)
    return int(match.group(1)) / 2**20 if match else 0.0


def _gcc(env: Mapping[str, str], runner: Runner) -> list[Compiler]:
    version = _output(["gcc", "-dumpfullversion", "-dumpversion"], env, runner).strip()
    cc = shutil.which("gcc", path=env.get("PATH"))
    if not version or not cc:
        return []
    cxx = shutil.which("g++", path=env.get("PATH"))
    return [Compiler(family="gcc", version=version, cc=cc, cxx=cxx)]


def _nvcc(env: Mapping[str, str], runner: Runner) -> list[CudaToolkit]:
    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if not nvcc:
        return []
    found = re.search(r"release (\d+\.\d+)", _output([nvcc, "--version"], env, runner))
    if not found:
        return []
    root = str(Path(nvcc).resolve().parent.parent)
    return [CudaToolkit(root=root, nvcc=nvcc, version=found.group(1), origin="PATH")]


def disk_path_state(path: Path) -> tuple[str | None, bool]:
    """(what is wrong with ``path`` as a build directory or None, whether it can be made)."""
    if path.is_dir():
        writable = os.access(path, os.W_OK)
        return (None, True) if writable else ("is not writable by this user", False)
    if path.exists():
        return "is not a directory", False
    parent = next((p for p in path.parents if p.exists()), Path("/"))
    try:
        Path(tempfile.mkdtemp(prefix=".torchsmith-doctor-", dir=parent)).rmdir()
    except OSError as exc:
        return f"does not exist and cannot be made in {parent}: {exc.strerror or exc}", False
    return f"does not exist (free space was measured at {parent}, where it would be made)", True


def gather(
    env: Mapping[str, str],
    disk_path: Path,
    python: str | None,
    target_cuda: str | None = None,
    compiler: str | None = None,
    *,
    runner: Runner,
) -> EnvFacts:
    """Every fact ``torchsmith doctor --env`` checks. ``env`` is the build's environment."""
    path = tuple(p for p in env.get("PATH", "").split(os.pathsep) if p)
    ld = tuple(p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p)
    jobs = env.get("MAX_JOBS", "")
    home = env.get("CUDA_HOME") or env.get("CUDA_PATH") or None
    named = (*path, *ld, *([home] if home else []))
    problem, creatable = disk_path_state(disk_path)
    return EnvFacts(
        compiler=compiler,
        disk_path_problem=problem,
        disk_path_creatable=creatable,
        host=probe_host_facts(env, disk_path, runner),
        path=path,
        ld_library_path=ld,
        cuda_home=home,
        realpaths={p: os.path.realpath(p) for p in named if "cuda" in p},
        max_jobs=int(jobs) if jobs.isdigit() else None,
        target_cuda=target_cuda,
        python=probe_python(python, env, runner) if python else None,
    )


# -- what a plan needs -------------------------------------------------------------------------
_ENGINE_QUERY = {
    "docker": ["docker", "info", "--format", "{{.ServerVersion}}"],
    "apptainer": ["apptainer", "--version"],
}
# Where MKL and magma are found when they are not in the linker cache (Intel's and magma's
# documented install prefixes; conda environments).
_LIB_DIRS = {
    "mkl": ("/opt/intel/oneapi/mkl/latest/lib", "/opt/intel/mkl/lib/intel64"),
    "magma": ("/usr/local/magma/lib", "/opt/magma/lib"),
}
_LIB_FILES = {"mkl": "libmkl_rt.so", "magma": "libmagma.so"}
_LIB_ENV = {"mkl": ("MKLROOT", "CONDA_PREFIX"), "magma": ("MAGMA_HOME", "CONDA_PREFIX")}


def engine_answer(
    backend: str, env: Mapping[str, str], runner: Runner
) -> tuple[str | None, str | None]:
    """(the engine's answer, or None and why it gave none)."""
    argv = _ENGINE_QUERY.get(backend)
    if argv is None:
        return None, f"no way known to ask {backend}"
    try:
        done = runner.capture(argv, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"cannot run {argv[0]}: {getattr(exc, 'strerror', None) or exc}"
    text = done.stdout.strip()
    if done.returncode == 0 and text:
        return text.splitlines()[0], None
    why = next((line for line in done.stderr.splitlines() if line.strip()), "no output")
    return None, f"`{' '.join(argv)}` exited with status {done.returncode}: {why.strip()}"


def find_library(name: str, env: Mapping[str, str], ldconfig_text: str) -> str | None:
    """Where the linker cache, a known prefix or the environment has ``name`` (mkl, magma)."""
    file = _LIB_FILES[name]
    if file in ldconfig_text:
        return "ldconfig -p"
    roots = [*_LIB_DIRS[name], *(f"{env[v]}/lib" for v in _LIB_ENV[name] if env.get(v))]
    return next((f"{root}/{file}" for root in roots if Path(root, file).exists()), None)


def gather_plan(needs: PlanNeeds, env: Mapping[str, str], runner: Runner) -> PlanFacts:
    """The facts plancheck judges: the engine's answer and the math libraries found."""
    answer, error = (
        engine_answer(needs.backend, env, runner) if needs.in_container else (None, None)
    )
    wanted = [n for n in ("mkl", "magma") if getattr(needs, n)] if not needs.in_container else []
    ldconfig_path = shutil.which("ldconfig", path=f"{env.get('PATH', '')}:/usr/sbin:/sbin")
    ldconfig = _output([ldconfig_path or "ldconfig", "-p"], env, runner) if wanted else ""
    found = {n: where for n in wanted if (where := find_library(n, env, ldconfig))}
    return PlanFacts(needs=needs, engine_answer=answer, engine_error=error, libraries=found)
