"""inspect and verify on real torch wheels, fetched once by pip into the test cache
(tests/integration/conftest.py). About 10 s each on 2 cores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.inspect import inspect_installed, inspect_wheel
from torchsmith.plan_model import Decision
from torchsmith.proc import HOST
from torchsmith.verify import load_plan, verify_inspection

PLANS = Path(__file__).resolve().parents[1] / "fixtures" / "inspect" / "plans"
pytestmark = pytest.mark.network  # the wheels: pip download, once
OFFICIAL = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]


@pytest.mark.slow
def test_cpu_wheel_has_no_cuda(cpu_torch_wheel: Path) -> None:
    insp = inspect_wheel(cpu_torch_wheel)
    assert insp.torch_version == "2.13.0+cpu"
    assert insp.cuda is None and insp.sass == [] and insp.ptx == []
    assert all(lib.gpu is None for lib in insp.libraries)
    assert all(link.mode == "none" for link in insp.linkage)
    assert insp.wheel is not None and insp.wheel.honest is True
    assert insp.cxx11_abi is True


@pytest.mark.slow
def test_cuda_wheel_targets_per_library(cuda_torch_wheel: Path) -> None:
    insp = inspect_wheel(cuda_torch_wheel)
    assert insp.torch_version == "2.14.1+cu130" and insp.cuda == "13.0"
    assert insp.arch_list == OFFICIAL  # the string torch.cuda.get_arch_list() splits
    assert insp.sass == OFFICIAL and insp.ptx == []
    cuda = insp.library("libtorch_cuda.so")
    assert cuda is not None and cuda.gpu is not None and cuda.gpu.sass == OFFICIAL
    linalg = insp.library("libtorch_cuda_linalg.so")
    assert linalg is not None and linalg.gpu is not None and linalg.gpu.sass == OFFICIAL[1:]
    assert {link.component: link.mode for link in insp.linkage} == dict.fromkeys(
        ("cudart", "cudnn", "nccl", "cublas"), "pip-deps"
    )
    assert insp.glibc == "2.28" and insp.wheel is not None and insp.wheel.honest


@pytest.mark.slow
def test_cuda_wheel_against_wrong_plan_fails_naming_it(
    capsys: pytest.CaptureFixture[str], cuda_torch_wheel: Path
) -> None:
    plan = load_plan(PLANS / "plan-2.14.1-cu130.json")
    wrong = plan.model_copy(
        update={
            "archs": Decision(value=["8.6", "9.0+PTX"], origin="user", reason="test"),
            "linking": {"cuda": Decision(value="static", origin="user", reason="test")},
        }
    )
    failed = {
        c.name: c.detail
        for c in verify_inspection(inspect_wheel(cuda_torch_wheel), wrong)
        if c.ok is False
    }
    assert failed["SASS archs"] == "wheel has extra sm_75 sm_80 sm_100 sm_120"
    assert failed["PTX archs"] == "arch 9.0: asked for PTX, wheel has none"
    assert failed["linking cudart"].startswith("cudart: asked for static, artifact has pip-deps")
    code = main(
        [
            "verify",
            str(cuda_torch_wheel),
            "--plan",
            str(PLANS / "manifest-2.14.1-cu130.json"),
            "--no-smoke",
            "--json",
        ]
    )
    assert code == 0
    assert '"passed": true' in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.network
# proc.run leaves the child's stdout pipe for the garbage collector (reported to the lead)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_cpu_wheel_smoke_in_fresh_venv(tmp_path: Path, cpu_torch_wheel: Path) -> None:
    """pip installs the wheel with its dependencies into a fresh venv (≈ 40 s)."""
    plan = PLANS / "plan-2.13.0-cpu.json"
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    code = main(["verify", str(cpu_torch_wheel), "--plan", str(plan), "--workdir", str(tmp_path)])
    assert code == 0
    log = (tmp_path / "smoke.log").read_text()
    assert '"name": "autograd", "ok": true' in log
    # the venv the smoke tests made holds an installed torch: inspect it too
    insp = inspect_installed(str(tmp_path / "venv" / "bin" / "python"), dict(os.environ), HOST)
    assert insp.source == "installed" and insp.torch_version == "2.13.0+cpu"
    assert insp.config.source == "show" and insp.config.use["USE_MKLDNN"] is True
    assert insp.cxx11_abi is True and insp.missing == []


@pytest.mark.slow
def test_static_markers_on_real_nccl(tmp_path: Path, nccl_wheel: Path) -> None:
    """libnccl.so.2 carries NCCL and (statically) cudart: the markers a static torch would show."""
    import zipfile

    from torchsmith.inspect.elf import read_elf

    with zipfile.ZipFile(nccl_wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("/libnccl.so.2"))
        target = tmp_path / "libnccl.so.2"
        target.write_bytes(zf.read(member))
    facts = read_elf(target)
    assert facts.markers == frozenset({"nccl", "cudart"})
    assert {"ncclCommInitRank", "cudaMalloc"} <= facts.defined


@pytest.mark.slow
def test_plan_json_round_trips_into_verify_of_the_real_wheel(
    tmp_path: Path, cpu_torch_wheel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New-user trial §3 #2: `plan --json > p.json; verify WHEEL --plan p.json` was rc 2
    (plan_hash: Extra inputs are not permitted)."""
    assert main(["plan", "--torch", "2.13.0", "--cpu", "--json"]) == 0
    plan = tmp_path / "p.json"
    plan.write_text(capsys.readouterr().out)
    code = main(["verify", str(cpu_torch_wheel), "--plan", str(plan), "--no-smoke", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "plan_hash" not in captured.err
