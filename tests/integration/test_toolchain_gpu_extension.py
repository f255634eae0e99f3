"""GPU machine, real: the add-one extension of tests/fixtures/toolchains/add_one, built there
with the toolkit the ``system`` provider picks for the installed torch's CUDA and the host
compiler the selector picks, runs correctly on the GPU (compared with torch's own ``x + 1``).
Recorded output: tests/fixtures/toolchains/README.md."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.planned import compiler_env, planned
from tests.resources import require, require_module
from torchsmith.host.probe import probe_host
from torchsmith.inspect.elf import read_elf
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext, select_toolkit
from torchsmith.toolchains.provision import provider_named

pytestmark = [pytest.mark.gpu, pytest.mark.slow]
EXTENSION = Path(__file__).resolve().parents[1] / "fixtures" / "toolchains" / "add_one"


def test_add_one_extension_runs_on_the_gpu(tmp_path: Path) -> None:
    torch = require_module("torch", "pip install a CUDA torch into this interpreter")
    require(torch.cuda.is_available(), "a visible CUDA GPU", "run with -m gpu on the GPU machine")
    env = dict(os.environ)
    host = probe_host(env, tmp_path, runner=HOST)
    cuda = ".".join(str(torch.version.cuda).split(".")[:2])
    name, reason = select_toolkit(cuda, host)
    print(f"toolkit: {name}: {reason}")
    provider = provider_named(name)
    ctx = ProvideContext(runner=HOST, cache_root=tmp_path / "cache", env=env)
    record = provider.provide(cuda, host, ctx)
    torch_version = torch.__version__.split("+")[0]
    major, minor = torch.cuda.get_device_capability()
    plan, compiler = planned(
        host, torch=torch_version, accelerator=cuda, gpus=(f"{major}.{minor}",)
    )
    print(f"compiler: {compiler.label}: {plan.compiler.reason}")
    src = tmp_path / "add_one"
    shutil.copytree(EXTENSION, src)
    build_env = {
        **env,
        **record.env(),
        **compiler_env(compiler),
        "TORCH_CUDA_ARCH_LIST": f"{major}.{minor}",
    }
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=src,
        env=build_env,
        check=True,
    )
    built = next(src.glob("ts_add_one*.so"))
    sass = {e.arch for e in read_elf(built).fatbin if e.kind == "sass"}
    assert sass == {f"sm_{major}{minor}"}
    done = subprocess.run(
        [sys.executable, "check_gpu.py"],
        cwd=src,
        env=build_env,
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout, done.stderr)
    assert done.returncode == 0
    assert done.stdout.rstrip().endswith("OK")
    assert "equal=False" not in done.stdout
