"""What a companion wheel must hold (issue 11): Requires-Dist pinning exactly the torch it was
built against; the build env's torch requirements as the torch wheel declares them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from torchsmith.cache.launcher import CompilerCache
from torchsmith.companions import buildenv
from torchsmith.companions.torchsource import PTH, install_args, link, of_interpreter
from torchsmith.companions.verify import check_torch_pin, torch_requirements
from torchsmith.errors import VerifyError
from torchsmith.inspect.model import Inspection

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "companions"


def wheel_with(tmp_path: Path, name: str, metadata: str) -> Path:
    path = tmp_path / name
    dist = "-".join(name.split("-")[:2]) + ".dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{dist}/METADATA", metadata)
    return path


def test_the_built_torchvision_pins_exactly_its_torch(tmp_path: Path) -> None:
    meta = (FIXTURES / "torchvision-0.21.0-METADATA").read_text()
    wheel = wheel_with(tmp_path, "torchvision-0.21.0-cp311-cp311-linux_x86_64.whl", meta)
    assert check_torch_pin(wheel, "2.6.0") == "torch==2.6.0"
    with pytest.raises(VerifyError, match=r"must require exactly torch==2\.6\.1"):
        check_torch_pin(wheel, "2.6.1")


def test_a_wheel_without_a_torch_requirement_is_refused(tmp_path: Path) -> None:
    insp = Inspection.model_validate_json(
        (FIXTURES / "inspect-torch-2.6.0-cp311-wheel.json").read_text()
    )
    assert insp.wheel is not None
    meta = "".join(f"Requires-Dist: {r}\n" for r in insp.wheel.requires_dist)
    assert torch_requirements(meta) == []
    wheel = wheel_with(tmp_path, "torchvision-0.21.0-cp311-cp311-linux_x86_64.whl", meta)
    with pytest.raises(VerifyError, match="no torch requirement"):
        check_torch_pin(wheel, "2.6.0")


def test_the_build_env_gets_torchs_own_runtime_requirements_without_extras() -> None:
    insp = Inspection.model_validate_json(
        (FIXTURES / "inspect-torch-2.6.0-cp311-wheel.json").read_text()
    )
    assert insp.wheel is not None
    reqs = buildenv.runtime_requirements(insp.wheel.requires_dist)
    assert any(r.startswith("nvidia-cudnn-cu12==9.1.0.70") for r in reqs)
    assert not any("extra" in r for r in reqs)
    assert not any(
        r.split(";")[0].strip().startswith(("torch", "opt-einsum", "optree")) for r in reqs
    )


def test_the_build_env_installs_the_exact_torch_without_dependencies(tmp_path: Path) -> None:
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
    venv, pinned = tmp_path / "env", buildenv.pip(tmp_path / "env" / "bin" / "python")
    make, torch, rest = buildenv.venv_commands(
        "/usr/bin/python3.11", venv, [wheel], ["sympy==1.13.1"]
    )
    assert make == ["/usr/bin/python3.11", "-m", "venv", "--clear", venv]
    assert torch == [*pinned, "--no-deps", wheel]
    assert rest == [*pinned, "sympy==1.13.1", *buildenv.BUILD_TOOLS]


def test_an_interpreters_torch_is_seen_through_a_pth_file_never_installed(tmp_path: Path) -> None:
    venv = tmp_path / "env"
    make, tools = buildenv.venv_commands("/opt/venv/bin/python", venv, [], [])
    assert make[0] == "/opt/venv/bin/python"
    assert tools == buildenv.pip(venv / "bin" / "python", *buildenv.BUILD_TOOLS)
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (tmp_path / "torch" / "lib").mkdir(parents=True)
    (tmp_path / "torch" / "lib" / "libc10.so").write_bytes(b"")
    answer = json.dumps(
        {"torch_dir": str(tmp_path / "torch"), "version": "2.6.0", "site": ["/opt/venv/sp"]}
    )
    source = of_interpreter("/opt/venv/bin/python", answer)
    assert source.wheel is None and source.libs == {"libc10.so"}
    assert install_args(source) == []
    link(source, venv)
    pth = venv / "lib" / "python3.11" / "site-packages" / PTH
    assert pth.read_text() == "/opt/venv/sp\n"


def test_the_compiler_cache_is_a_masquerade_dir_first_on_path(tmp_path: Path) -> None:
    bindir = buildenv.masquerade(tmp_path / "bin", "/usr/bin/ccache")
    assert sorted(p.name for p in bindir.iterdir()) == sorted(buildenv.COMPILERS)
    assert all(str(p.readlink()) == "/usr/bin/ccache" for p in bindir.iterdir())
    cache = CompilerCache("ccache", tmp_path / "cc", tmp_path, "/usr/bin/ccache")
    env = buildenv.build_env(
        {"PATH": "/usr/bin", "PYTHONPATH": "/x"}, tmp_path / "env", cache, bindir, {"MAX_JOBS": "2"}
    )
    assert env["PATH"].split(":")[:2] == [str(bindir), str(tmp_path / "env" / "bin")]
    assert env["CCACHE_DIR"] == str(tmp_path / "cc") and env["MAX_JOBS"] == "2"
    assert "PYTHONPATH" not in env and not any("LAUNCHER" in k for k in env)
