"""Inspect the torch installed for a Python interpreter: run that interpreter once (through
:mod:`torchsmith.proc`) to learn where torch is and what ``torch.__config__.show()`` says, then
read the files directly."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import InspectError
from torchsmith.inspect.abi import cmake_abi
from torchsmith.inspect.assemble import LibFile, Parts, Probe, assemble
from torchsmith.inspect.config import parse_show
from torchsmith.inspect.deps import DiskResolver
from torchsmith.inspect.elf import read_elf
from torchsmith.inspect.meta import parse_version_py
from torchsmith.inspect.model import BuildConfig, Inspection
from torchsmith.interpreter import invocable
from torchsmith.runner import Runner

MARK = "TORCHSMITH_PROBE "
PROBE_SCRIPT = """
import json, warnings
warnings.simplefilter("ignore")
import torch
def attempt(fn):
    try:
        return fn()
    except Exception:
        return None
flags = getattr(torch._C, "_cuda_getArchFlags", None)
out = {
    "file": torch.__file__,
    "version": torch.__version__,
    "show": attempt(torch.__config__.show),
    "arch_flags": attempt(flags) if flags else None,
    "cxx11_abi": getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", None),
    "nccl": attempt(lambda: ".".join(map(str, torch.cuda.nccl.version()))),
}
print("TORCHSMITH_PROBE " + json.dumps(out))
"""
_PYTHON_HINT = (
    "give the interpreter whose torch to inspect, e.g. --python /path/to/venv/bin/python "
    "or --python python3"
)
_SHARED = re.compile(r"\.so(\.\d+)*$")


def probe(
    python: str, env: Mapping[str, str], runner: Runner, timeout: float = 300
) -> dict[str, Any]:
    """Import torch in ``python`` once and return what it says about itself. It runs in an
    empty temporary directory: ``python -c`` puts the working directory first on sys.path, so a
    ``torch/`` source checkout there would be imported instead of the installed torch."""
    python = invocable(python)
    if "/" in python and not Path(python).exists():
        raise InspectError(f"--python {python}: no such file", _PYTHON_HINT)
    try:
        with tempfile.TemporaryDirectory(prefix="torchsmith-probe-") as empty:
            done = runner.capture(
                [python, "-c", PROBE_SCRIPT], env=env, cwd=Path(empty), timeout=timeout
            )
    except FileNotFoundError as exc:
        raise InspectError(f"--python {python}: no such interpreter on PATH", _PYTHON_HINT) from exc
    except OSError as exc:  # a directory, not executable, not a program
        raise InspectError(
            f"--python {python} cannot be run: {exc.strerror or exc}", _PYTHON_HINT
        ) from exc
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(MARK)]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        if not tail:  # /bin/false, a shell script: not a Python that ran the probe
            raise InspectError(
                f"--python {python} exited with status {done.returncode} and said nothing: "
                "it did not run the probe as a Python interpreter would",
                _PYTHON_HINT,
            )
        raise InspectError(
            f"{python} could not import torch: {' '.join(tail)}",
            "check that torch is installed for that interpreter",
        )
    data: dict[str, Any] = json.loads(lines[-1].removeprefix(MARK))
    return data


def _libs(torch_dir: Path) -> list[LibFile]:
    site = torch_dir.parent
    found = []
    for path in sorted(torch_dir.rglob("*.so*")):
        if not _SHARED.search(path.name) or not path.is_file() or path.is_symlink():
            continue
        facts = read_elf(path, arch_flags=path.name.startswith(("libtorch_python", "_C.")))
        rel = str(path.relative_to(site))
        found.append(
            LibFile(path=rel, size=path.stat().st_size, origin=str(path.parent), facts=facts)
        )
    return found


def _config(data: dict[str, Any]) -> BuildConfig:
    show = data.get("show")
    config = parse_show(show) if isinstance(show, str) else BuildConfig(source="files")
    return config.model_copy(update={"nccl": data.get("nccl")})


def inspect_installed(python: str, env: Mapping[str, str], runner: Runner) -> Inspection:
    """Everything :class:`Inspection` holds about the torch that ``python`` imports."""
    data = probe(python, env, runner)
    torch_dir = Path(data["file"]).parent
    version_file = torch_dir / "version.py"
    version = parse_version_py(version_file.read_text() if version_file.exists() else "")
    libs = _libs(torch_dir)
    config_file = torch_dir / "share" / "cmake" / "Torch" / "TorchConfig.cmake"
    cmake = config_file.read_text(errors="replace") if config_file.is_file() else ""
    total = sum(
        p.stat().st_size for p in torch_dir.rglob("*") if p.is_file() and not p.is_symlink()
    )
    bundled = {Path(lib.path).name: str(torch_dir.parent / lib.path) for lib in libs}
    parts = Parts(
        source="installed",
        location=str(torch_dir),
        total_size=total,
        libs=libs,
        version=version,
        config=_config(data),
        probe=Probe(
            show=data.get("show"),
            arch_flags=data.get("arch_flags"),
            cxx11_abi=data.get("cxx11_abi"),
            nccl=data.get("nccl"),
        ),
        cmake_abi=cmake_abi(cmake),
    )
    return assemble(parts, DiskResolver(bundled=bundled, env=env))
