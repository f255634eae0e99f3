"""Issue 13 part 1, ``linking.cuda = pip-deps`` for real: a wheel whose ``torch/lib/libuser.so``
needs ``libcudart.so.12`` (a stub with that soname, CMake-style absolute RPATH onto it) goes
through the ``repair`` step of a torch 2.6.0 + CUDA 12.4 pip-deps plan: auditwheel leaves the
soname external, then the wheel declares the 13 ``nvidia-*-cu12`` pins of the official 2.6.0
wheel and gets its RPATH into ``site-packages/nvidia/*/lib``. In a fresh venv pip resolves every
declared dependency on PyPI (``--dry-run --report``: metadata only, not the 2.6 GB of
wheels), then installs the wheel with the one it loads here, NVIDIA's
``nvidia-cuda-runtime-cu12==12.4.127`` (1 MB): the library loads and its ``libcudart.so.12``
is the nvidia wheel's, found through the declared RPATH. ~20 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.unit.planner.kb import ci_host
from torchsmith.backends.local import LocalExecutor
from torchsmith.inspect.elf import read_elf
from torchsmith.kb import load
from torchsmith.kb.pipdeps import pins_for
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps import repair
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.workspace import prepare_workspace

from .test_repair_install import Said, _stub, _wheel_linking

pytestmark = [pytest.mark.slow, pytest.mark.network]

LOAD = (
    "import ctypes, os, torch; ctypes.CDLL(os.path.join(torch.__path__[0], 'lib', 'libuser.so'));"
    "print([l.split()[-1] for l in open('/proc/self/maps') if 'libcudart.so.12' in l][0])"
)


def _pip_deps_wheel(tmp_path: Path) -> Path:
    outside = tmp_path / "cuda"
    outside.mkdir()
    wheel = _wheel_linking(tmp_path, [_stub(outside, "libcudart.so.12")])
    cli = {"torch": "2.6.0", "accelerator": "12.4", "gpus": ("8.6",), "linking.cuda": "pip-deps",
           "source": f"path:{tmp_path}"}  # fmt: skip
    plan = resolve(resolve_spec(cli=cli), load(), ci_host())
    env = dict(os.environ)
    workspace = prepare_workspace(tmp_path / "cache", plan, {}, lambda _t: None)
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    ctx = BuildContext(plan, workspace, LocalExecutor(env), Said(), options, ci_host())
    try:
        repaired, _record = repair.repair(ctx, wheel, env)
        record = repair.declare_pip_deps(ctx, repaired, env)
    finally:
        workspace.release()
    assert "torch/lib/libuser.so" in record["changed"]
    return repaired


def test_a_pip_deps_wheel_declares_and_loads_the_official_nvidia_wheels(tmp_path: Path) -> None:
    wheel = _pip_deps_wheel(tmp_path)
    pins = pins_for("2.6.0", "12.4")
    assert pins is not None
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read("torch-2.5.1.dist-info/METADATA").decode()
        (tmp_path / "user.so").write_bytes(zf.read("torch/lib/libuser.so"))
        assert not [n for n in zf.namelist() if "libcudart" in n]  # left external
    declared = [line.removeprefix("Requires-Dist: ") for line in meta.splitlines()
                if line.startswith("Requires-Dist: nvidia-")]  # fmt: skip
    assert declared == list(pins.requires)
    facts = read_elf(tmp_path / "user.so")
    assert list(facts.rpath[: len(pins.rpath)]) == list(pins.rpath) and not facts.runpath
    assert "libcudart.so.12" in facts.needed

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [
        str(venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
    ]
    report = tmp_path / "report.json"
    subprocess.run([*pip, "--dry-run", "--ignore-installed", "--report", str(report),
                    str(wheel)], check=True)  # fmt: skip
    resolved = {i["metadata"]["name"]: i["metadata"]["version"]
                for i in json.loads(report.read_text())["install"]}  # fmt: skip
    for line in pins.requires:
        req = Requirement(line)
        assert resolved.get(req.name) in req.specifier, (req, resolved.get(req.name))

    subprocess.run([*pip, "--no-deps", str(wheel), "nvidia-cuda-runtime-cu12==12.4.127"],
                   check=True)  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    ran = subprocess.run([venv / "bin" / "python", "-c", LOAD], env=env, capture_output=True,
                         text=True, check=True, cwd=tmp_path)  # fmt: skip
    loaded = Path(ran.stdout.strip())
    assert loaded.parent.parts[-3:] == ("nvidia", "cuda_runtime", "lib"), loaded
    assert str(loaded).startswith(str(venv))
