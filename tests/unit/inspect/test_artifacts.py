"""inspect on small artifacts assembled from the real nvcc-built library (no subprocess)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from torchsmith.cli import main
from torchsmith.errors import InspectError
from torchsmith.inspect import inspect_installed, inspect_wheel
from torchsmith.inspect import installed as installed_mod
from torchsmith.inspect.deps import DiskResolver, WheelResolver
from torchsmith.proc import HOST

VERSION_PY = "__version__ = '9.9.0+cu130'\ncuda = '13.0'\ngit_version = 'abc123'\ndebug = False\n"
PLAN = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "inspect"
    / "plans"
    / "plan-2.14.1-cu130.json"
)


def _wheel(tmp_path: Path, lib: Path, tag: str = "cp311-cp311-manylinux_2_17_x86_64") -> Path:
    path = tmp_path / f"torch-9.9.0-{tag}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch/version.py", VERSION_PY)
        zf.write(lib, "torch/lib/libtorch_cuda.so")
        zf.writestr("torch-9.9.0.dist-info/WHEEL", f"Wheel-Version: 1.0\nTag: {tag}\n")
        zf.writestr("torch-9.9.0.dist-info/METADATA", "Name: torch\nVersion: 9.9.0\n")
    return path


def test_wheel_of_a_real_cuda_library(tmp_path: Path, fixtures: Path) -> None:
    insp = inspect_wheel(_wheel(tmp_path, fixtures / "inspect" / "libk_dyn.so"))
    assert (insp.torch_version, insp.cuda, insp.git_version) == ("9.9.0+cu130", "13.0", "abc123")
    assert insp.sass == ["sm_80", "sm_90"] and insp.ptx == ["compute_90"]
    lib = insp.library("libtorch_cuda.so")
    assert lib is not None and lib.gpu is not None and lib.gpu.containers == 2
    assert insp.link("cudart").mode == "dynamic"  # NEEDED, no RPATH into nvidia packages
    cudart = next(d for d in lib.needed if d.soname == "libcudart.so.13")
    assert cudart.provider == "external"
    assert insp.sizes.by_arch["sm_80"] == 4712
    assert insp.wheel is not None and insp.wheel.honest is True  # GLIBC_2.2.5 <= 2.17


def test_not_a_wheel(tmp_path: Path) -> None:
    bad = tmp_path / "x.whl"
    bad.write_text("no zip")
    with pytest.raises(InspectError, match="not a wheel"):
        inspect_wheel(bad)
    with pytest.raises(InspectError, match="no such file"):
        inspect_wheel(tmp_path / "missing.whl")


def test_inspect_command_json(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _wheel(tmp_path, fixtures / "inspect" / "libk_dyn.so")
    assert main(["inspect", str(wheel), "--cuobjdump", "none", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1 and data["sass"] == ["sm_80", "sm_90"]
    assert main(["inspect", "--cuobjdump", "none"]) == 2  # neither wheel nor --python


def test_verify_command_names_the_difference(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _wheel(tmp_path, fixtures / "inspect" / "libk_dyn.so")
    code = main(["verify", str(wheel), "--plan", str(PLAN), "--no-smoke"])
    assert code == 11
    err = capsys.readouterr().err
    assert "arch 7.5: asked for SASS, wheel has none" in err
    assert "wheel has extra compute_90" in err
    assert "cudart: asked for pip-deps, artifact has dynamic" in err


def test_installed_torch_read_from_disk(
    tmp_path: Path, fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch_dir = tmp_path / "site-packages" / "torch"
    (torch_dir / "lib").mkdir(parents=True)
    (torch_dir / "version.py").write_text(VERSION_PY)
    (torch_dir / "lib" / "libtorch_cuda.so").write_bytes(
        (fixtures / "inspect" / "libk_dyn.so").read_bytes()
    )
    show = (fixtures / "device-h100" / "torch-config.txt").read_text()
    probed: dict[str, Any] = {
        "file": str(torch_dir / "__init__.py"),
        "show": show,
        "arch_flags": "sm_80 sm_90 compute_90",
        "cxx11_abi": True,
        "nccl": "2.28.9",
    }
    monkeypatch.setattr(installed_mod, "probe", lambda python, env, runner: probed)
    cudart_dir = tmp_path / "nvidia" / "cu13" / "lib"
    cudart_dir.mkdir(parents=True)
    (cudart_dir / "libcudart.so.13").write_bytes(b"")
    insp = inspect_installed("python3", {"LD_LIBRARY_PATH": str(cudart_dir)}, HOST)
    assert insp.source == "installed" and insp.arch_list == ["sm_80", "sm_90", "compute_90"]
    assert insp.config.source == "show" and insp.config.nccl == "2.28.9"
    assert insp.cxx11_abi is True and insp.cxx11_abi_evidence.startswith("torch._C")
    assert insp.link("cudart").mode == "pip-deps"  # resolved under .../nvidia/...
    assert insp.missing == []


def test_disk_resolver_reports_missing(tmp_path: Path) -> None:
    resolver = DiskResolver(bundled={"libc10.so": "/x/libc10.so"}, env={}, extra_dirs=())
    (tmp_path / "libfoo.so.1").write_bytes(b"")
    assert resolver.resolve("libc10.so", [], "/x").provider == "bundled"
    found = resolver.resolve("libfoo.so.1", ["$ORIGIN"], str(tmp_path))
    assert found.provider == "found" and found.path == str((tmp_path / "libfoo.so.1").resolve())
    assert resolver.resolve("libnope.so", ["$ORIGIN"], str(tmp_path)).provider == "missing"
    assert resolver.resolve("libcuda.so.1", [], "/x").provider == "driver"


def test_wheel_resolver_pip_packages() -> None:
    resolver = WheelResolver(bundled=frozenset({"libc10.so"}))
    rpath = ["$ORIGIN/../../nvidia/cudnn/lib", "$ORIGIN"]
    assert resolver.resolve("libcudnn.so.9", rpath, "/torch/lib").provider == "pip"
    assert resolver.resolve("libcudnn.so.9", ["$ORIGIN"], "/torch/lib").provider == "external"
    assert resolver.resolve("libstdc++.so.6", rpath, "/torch/lib").provider == "system"
