"""Math libraries of a build, each with an explicit statement of where it comes from:

* BLAS/LAPACK: MKL from PyPI (``mkl-static`` + ``mkl-include`` into the build env, as PyTorch's
  README says for Linux source builds: https://github.com/pytorch/pytorch#from-source) when the
  plan wants MKL on x86_64; otherwise OpenBLAS when the system has it, else Eigen.
* magma: built from source is not something torchsmith does; it is *found* (MAGMA_HOME) or
  *off* — and the plan always says which, never silently.
* cuDNN / NCCL: from the system (host probe), from NVIDIA's PyPI wheels
  (``nvidia-cudnn-cuXX``, ``nvidia-nccl-cuXX``), or off.

:func:`plan_math_libraries` is pure (plan time); :func:`wheel_env` maps installed wheels to the
variables PyTorch's CMake reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from torchsmith import proc

LibName = Literal["blas", "magma", "cudnn", "nccl"]
Origin = Literal["pypi", "system", "bundled", "off"]


@dataclass(frozen=True)
class MathLib:
    """One library: where it comes from, the wheels to install, the build variables."""

    name: LibName
    origin: Origin
    choice: str
    reason: str
    wheels: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def cuda_major(cuda: str) -> str:
    return cuda.split(".", maxsplit=1)[0]


def plan_blas(mkl: bool | None, machine: str, system_openblas: bool) -> MathLib:
    if mkl is not False and machine == "x86_64":
        why = "asked for" if mkl else "default on x86_64 (like the official binaries)"
        return MathLib(
            "blas",
            "pypi",
            "MKL",
            f"{why}: mkl-static + mkl-include from PyPI",
            ("mkl-static", "mkl-include"),
            {"BLAS": "MKL", "USE_MKL": "1"},
        )
    why = "MKL asked off" if mkl is False else f"no MKL for {machine}"
    if system_openblas:
        return MathLib(
            "blas",
            "system",
            "OpenBLAS",
            f"{why}: the system's OpenBLAS",
            env={"BLAS": "OpenBLAS", "USE_MKL": "0"},
        )
    return MathLib(
        "blas",
        "bundled",
        "Eigen",
        f"{why}, no OpenBLAS found: Eigen (slow BLAS; "
        "apt-get install libopenblas-dev for OpenBLAS)",
        env={"BLAS": "Eigen", "USE_MKL": "0"},
    )


def plan_magma(wanted: bool | None, cuda: str | None, magma_home: str | None) -> MathLib:
    if cuda is None:
        return MathLib("magma", "off", "off", "CPU build: magma is a CUDA library")
    if wanted is False:
        return MathLib(
            "magma",
            "off",
            "off",
            "the plan turns magma off (GPU linear algebra "
            "then falls back to cuSOLVER/cuBLAS where PyTorch can)",
            env={"USE_MAGMA": "0"},
        )
    if magma_home:
        return MathLib(
            "magma",
            "system",
            f"found at {magma_home}",
            "MAGMA_HOME is set",
            env={"MAGMA_HOME": magma_home, "USE_MAGMA": "1"},
        )
    return MathLib(
        "magma",
        "off",
        "off",
        "no magma found (MAGMA_HOME unset) and torchsmith does "
        "not build it from source: off; install magma-cuda and set MAGMA_HOME to "
        "enable it",
        env={"USE_MAGMA": "0"},
    )


def _wheel(lib: Literal["cudnn", "nccl"], cuda: str) -> str:
    return f"nvidia-{lib}-cu{cuda_major(cuda)}"


def plan_cuda_library(
    lib: Literal["cudnn", "nccl"],
    wanted: bool | None,
    cuda: str | None,
    system_versions: list[str],
) -> MathLib:
    if cuda is None:
        return MathLib(lib, "off", "off", "CPU build")
    if wanted is False:
        return MathLib(
            lib, "off", "off", f"the plan turns {lib} off", env={f"USE_{lib.upper()}": "0"}
        )
    if system_versions:
        return MathLib(
            lib, "system", system_versions[0], f"{lib} {system_versions[0]} found on this machine"
        )
    return MathLib(
        lib,
        "pypi",
        _wheel(lib, cuda),
        f"not on this machine: NVIDIA's {_wheel(lib, cuda)} wheel into the build env",
    )


@dataclass(frozen=True)
class MathInputs:
    """What the plan and host say, reduced to what this module needs."""

    cuda: str | None
    machine: str = "x86_64"
    mkl: bool | None = None
    magma: bool | None = None
    cudnn: bool | None = None
    nccl: bool | None = None
    system_openblas: bool = False
    magma_home: str | None = None
    cudnn_versions: list[str] = field(default_factory=list)
    nccl_versions: list[str] = field(default_factory=list)


def plan_math_libraries(inputs: MathInputs) -> list[MathLib]:
    """Every math library with its origin and reason (pure)."""
    return [
        plan_blas(inputs.mkl, inputs.machine, inputs.system_openblas),
        plan_magma(inputs.magma, inputs.cuda, inputs.magma_home),
        plan_cuda_library("cudnn", inputs.cudnn, inputs.cuda, inputs.cudnn_versions),
        plan_cuda_library("nccl", inputs.nccl, inputs.cuda, inputs.nccl_versions),
    ]


def wheel_env(lib: MathLib, site: Path) -> dict[str, str]:
    """Variables that point PyTorch's CMake at a library installed from wheels in ``site``
    (a venv's site-packages or a ``pip install --target`` dir). Names as read by
    pytorch/pytorch@v1.13.1:cmake/Modules_CUDA_fix/FindCUDNN.cmake (CUDNN_ROOT_DIR,
    CUDNN_INCLUDE_DIR, CUDNN_LIBRARY) and cmake/Modules/FindNCCL.cmake (NCCL_ROOT_DIR,
    NCCL_INCLUDE_DIR, NCCL_LIB_DIR)."""
    nvidia = site / "nvidia"
    if lib.origin != "pypi":
        return dict(lib.env)
    if lib.name == "cudnn":
        root = nvidia / "cudnn"
        found = sorted((root / "lib").glob("libcudnn.so*"))
        env = {"CUDNN_ROOT_DIR": str(root), "CUDNN_INCLUDE_DIR": str(root / "include")}
        env["USE_CUDNN"] = "1"
        return {**env, "CUDNN_LIBRARY": str(found[0])} if found else env
    if lib.name == "nccl":
        root = nvidia / "nccl"
        return {
            "USE_SYSTEM_NCCL": "1",
            "NCCL_ROOT_DIR": str(root),
            "NCCL_INCLUDE_DIR": str(root / "include"),
            "NCCL_LIB_DIR": str(root / "lib"),
        }
    return dict(lib.env)


def describe(libs: list[MathLib]) -> list[str]:
    """One line per library for the plan's output: never a silent off."""
    return [f"{lib.name}: {lib.choice} ({lib.origin}) — {lib.reason}" for lib in libs]


def merged_env(libs: list[MathLib], site: Path, base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    for lib in libs:
        env.update(wheel_env(lib, site))
    return env


def wheels_to_install(libs: list[MathLib]) -> list[str]:
    return [w for lib in libs if lib.origin == "pypi" for w in lib.wheels or (lib.choice,)]


def pip_install_argv(python: str | Path, wheels: list[str]) -> list[str | Path]:
    """Install into the *build env* (its python): mkl-static/mkl-include put their files in
    ``<venv>/lib`` and ``<venv>/include``, which CMake searches because ``<venv>/bin`` is on the
    build's PATH; the NVIDIA wheels land in site-packages/nvidia/ (see :func:`wheel_env`)."""
    return [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *wheels]


def install_math_wheels(
    libs: list[MathLib], python: str | Path, env: Mapping[str, str], log_path: Path | None = None
) -> list[str]:
    """pip-install the plan's PyPI math libraries into the build env; returns what it asked for."""
    wheels = wheels_to_install(libs)
    if wheels:
        proc.run(pip_install_argv(python, wheels), env=env, log_path=log_path)
    return wheels
