"""Python selection/pins and math-library statements: pure decisions with reasons."""

from __future__ import annotations

from pathlib import Path

from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.toolchains.mathlibs import (
    MathInputs,
    describe,
    pip_install_argv,
    plan_math_libraries,
    wheel_env,
    wheels_to_install,
)
from torchsmith.toolchains.python import (
    Pin,
    apply_pins,
    numpy_pins,
    select_build_python,
    uv_argv,
)

PY311 = PythonInfo(path="/usr/bin/python3.11", version="3.11.2")


def test_numpy_below_2_for_old_torch_with_python_floor() -> None:
    (pin,) = numpy_pins("2.2.2", "3.12")
    assert pin.requirement == "numpy>=1.26,<2"
    assert "predates NumPy 2" in pin.reason
    assert "pytorch/pytorch/issues/107302" in pin.source
    assert numpy_pins("1.13.1", "3.10")[0].requirement == "numpy<2"
    assert numpy_pins("2.6.0", "3.10") == []
    assert numpy_pins("main", "3.13")[0].requirement == "numpy>=2.1"


def test_pins_replace_the_trees_own_unpinned_requirement() -> None:
    reqs = ["setuptools", "numpy", "PyYAML", "typing_extensions"]
    pins = [Pin("numpy<2", "why", "src")]
    assert apply_pins(reqs, pins) == ["setuptools", "PyYAML", "typing_extensions", "numpy<2"]


def test_found_python_or_uv() -> None:
    found = select_build_python(HostFacts(pythons=[PY311]), "3.11")
    assert (found.how, found.path) == ("found", "/usr/bin/python3.11")
    missing = select_build_python(HostFacts(pythons=[PY311]), "3.9")
    assert missing.how == "uv"
    assert missing.path is None
    assert "found: 3.11.2" in missing.reason
    uv = Path("/c/uv")
    assert uv_argv(uv, "3.9", Path("/c/py")) == [
        uv,
        "python",
        "install",
        "--install-dir",
        Path("/c/py"),
        "3.9",
    ]


def test_math_libraries_are_never_silently_off() -> None:
    libs = {m.name: m for m in plan_math_libraries(MathInputs(cuda="12.4"))}
    assert libs["blas"].wheels == ("mkl-static", "mkl-include")
    assert libs["blas"].env["BLAS"] == "MKL"
    assert libs["magma"].origin == "off"
    assert "does not build it from source" in libs["magma"].reason
    assert libs["cudnn"].choice == "nvidia-cudnn-cu12"
    assert libs["nccl"].choice == "nvidia-nccl-cu12"
    assert all(" — " in line and line.split(" — ")[1] for line in describe(list(libs.values())))


def test_math_libraries_from_the_system_or_off() -> None:
    inputs = MathInputs(
        cuda="11.8",
        machine="aarch64",
        system_openblas=True,
        magma=True,
        magma_home="/opt/magma",
        cudnn=False,
        nccl_versions=["2.18.3"],
    )
    libs = {m.name: m for m in plan_math_libraries(inputs)}
    assert (libs["blas"].choice, libs["blas"].origin) == ("OpenBLAS", "system")
    assert libs["magma"].env == {"MAGMA_HOME": "/opt/magma", "USE_MAGMA": "1"}
    assert libs["cudnn"].env == {"USE_CUDNN": "0"}
    assert libs["nccl"].origin == "system"
    cpu = {m.name: m for m in plan_math_libraries(MathInputs(cuda=None, mkl=False))}
    assert cpu["blas"].choice == "Eigen"
    assert "libopenblas-dev" in cpu["blas"].reason
    assert cpu["cudnn"].reason == "CPU build"


def test_wheel_env_points_cmake_at_the_wheels(tmp_path: Path) -> None:
    lib = tmp_path / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"")
    libs = {m.name: m for m in plan_math_libraries(MathInputs(cuda="13.0"))}
    env = wheel_env(libs["cudnn"], tmp_path)
    assert env["CUDNN_LIBRARY"] == str(lib / "libcudnn.so.9")
    assert env["CUDNN_INCLUDE_DIR"] == str(tmp_path / "nvidia" / "cudnn" / "include")
    nccl = wheel_env(libs["nccl"], tmp_path)
    assert nccl["USE_SYSTEM_NCCL"] == "1"
    assert nccl["NCCL_LIB_DIR"] == str(tmp_path / "nvidia" / "nccl" / "lib")


def test_wheels_go_into_the_build_env() -> None:
    libs = plan_math_libraries(MathInputs(cuda="12.4", nccl_versions=["2.21.5"]))
    wheels = wheels_to_install(libs)
    assert wheels == ["mkl-static", "mkl-include", "nvidia-cudnn-cu12"]
    argv = pip_install_argv("/b/venv/bin/python", wheels)
    assert argv[:4] == ["/b/venv/bin/python", "-m", "pip", "install"]
    assert argv[-3:] == wheels
    assert wheels_to_install(plan_math_libraries(MathInputs(cuda=None, mkl=False))) == []
