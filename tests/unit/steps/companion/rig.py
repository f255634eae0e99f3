"""A companion run over the steps' rig: the one-run plan of torch 1.13.1 with torchvision (real
planner, real KB), a BuildContext for it and a CompanionRun as the environment step leaves it
(no venv is made: the recording executor runs nothing)."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path

from tests.unit.steps.conftest import Rig, make_rig
from torchsmith import kb
from torchsmith.cache import CompilerCache
from torchsmith.companions.torchsource import TorchSource
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.companion.run import CompanionRun, Env

HOST = Path(__file__).resolve().parents[3] / "fixtures" / "plan" / "host-ci.json"
FETCHED = {"epoch": 1671062400, "epoch_from": "the plan's fallback, the release's date"}
"""What a companion's fetch step records of its epoch (torchvision from Debian's orig)."""
TORCH_LIBS = frozenset({"libc10.so", "libtorch_cpu.so", "libtorch.so", "libshm.so"})


def one_run(**cli: object) -> BuildPlan:
    host = HostFacts.model_validate_json(HOST.read_text())
    base = {"torch": "1.13.1", "accelerator": "cpu", "source": "debian"}
    spec = resolve_spec(cli={**base, "companions": ("torchvision",), **cli})
    return resolve(spec, kb.load(), host)


def companion_rig(tmp_path: Path, **cli: object) -> Rig:
    """The steps' rig with the one-run plan (its workspace is the path plan's: no matter)."""
    rig = make_rig(tmp_path)
    rig.ctx = dataclasses.replace(rig.ctx, plan=one_run(**cli))
    plan = rig.ctx.plan.companion_build
    assert plan is not None
    cache = CompilerCache(kind="none", directory=tmp_path / "cc", basedir=tmp_path)
    source = TorchSource(creator="/usr/bin/python3.11", wheel=None, libs=TORCH_LIBS)
    env = Env(tmp_path / "env" / "bin" / "python", {"PATH": "/usr/bin"}, cache, None,
              {"version": "1.13.1", "cxx11_abi": False}, source, {})  # fmt: skip
    rig.state.companions = CompanionRun(plan, env, None)
    rig.executor.ran.clear()  # preflight's probes
    return rig


def companion_wheel(where: Path, requires: str = "torch==1.13.1") -> Path:
    """A torchvision wheel as pip wheel lays it out (METADATA with the torch pin)."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / "torchvision-0.14.1-cp311-cp311-linux_x86_64.whl"
    meta = f"Metadata-Version: 2.1\nName: torchvision\nVersion: 0.14.1\nRequires-Dist: {requires}\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torchvision/__init__.py", "")
        zf.writestr("torchvision-0.14.1.dist-info/METADATA", meta)
        zf.writestr(
            "torchvision-0.14.1.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
        )
        zf.writestr("torchvision-0.14.1.dist-info/RECORD", "")
    return path
