"""The real facts of the torch named by ``--against``, read by ``torchsmith inspect`` (the CLI
layer calls this before planning; the planner itself reads no file)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from torchsmith.errors import UsageError
from torchsmith.inspect import Inspection, inspect_artifact
from torchsmith.interpreter import invocable
from torchsmith.plan_types import TorchFacts
from torchsmith.runner import Runner
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import ResolvedSpec

PYTHON_PREFIX = "python:"
_CP_TAG = re.compile(r"^cp(\d)(\d+)$")
_SITE = re.compile(r"/python(\d+\.\d+)/")
_HINT = "give --against path/to/torch-X.Y.Z-cpXY-…whl or --against python:/path/to/python"


def wheel_version_and_python(path: Path) -> tuple[str, str | None]:
    """(metadata version, Python 'X.Y' of its cpXY tag) from a wheel's file name."""
    try:
        name, version, _build, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise UsageError(f"--against {path}: not a wheel file name ({exc})", _HINT) from exc
    if name != "torch":
        raise UsageError(f"--against {path} is a {name} wheel, not torch", _HINT)
    pythons = sorted(p for p in (_python_of(t.interpreter) for t in tags) if p is not None)
    return str(version), (pythons[0] if pythons else None)


def _python_of(interpreter: str) -> str | None:
    match = _CP_TAG.match(interpreter)
    return f"{match[1]}.{match[2]}" if match else None


def facts_of(kind: str, location: str, insp: Inspection, version: str) -> TorchFacts:
    """The plan's record of an inspected torch."""
    python = None
    if kind == "python":
        found = _SITE.search(insp.location)
        python = found[1] if found else None
    return TorchFacts(
        kind="wheel" if kind == "wheel" else "python",
        location=location,
        version=version,
        runtime_version=insp.torch_version,
        cuda=insp.cuda,
        arch_list=list(insp.arch_list),
        cxx11_abi=insp.cxx11_abi,
        abi_evidence=insp.cxx11_abi_evidence,
        python=python,
        requires_dist=list(insp.wheel.requires_dist) if insp.wheel else [],
    )


def read_against(against: str, env: Mapping[str, str], runner: Runner) -> TorchFacts:
    """Inspect the torch ``against`` names (a wheel file, or ``python:PATH``)."""
    if against.startswith(PYTHON_PREFIX):
        interpreter = invocable(against.removeprefix(PYTHON_PREFIX))
        insp = inspect_artifact(python=interpreter, env=env, runner=runner)
        version = insp.torch_version or "?"
        return facts_of("python", interpreter, insp, version.split("+")[0])
    path = Path(against).expanduser().resolve()
    version, python = wheel_version_and_python(path)
    insp = inspect_artifact(wheel=path, env=env, runner=runner)
    return facts_of("wheel", str(path), insp, version).model_copy(update={"python": python})


def against_of(
    spec: BuildSpec | ResolvedSpec, env: Mapping[str, str], runner: Runner
) -> TorchFacts | None:
    """The facts of the torch the spec's ``against`` names (None when it names none)."""
    against = (spec.spec if isinstance(spec, ResolvedSpec) else spec).against
    return None if against is None else read_against(against, env, runner)
