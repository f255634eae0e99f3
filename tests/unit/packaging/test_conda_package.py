"""Conda packages from wheels: PyTorch's own naming (pytorch/builder:conda/build_pytorch.sh),
run dependencies from Requires-Dist, where each wheel member lands in the prefix, and the plan
step ``--output conda`` adds."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest
from rattler import MatchSpec

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith.errors import BuildError
from torchsmith.packaging.conda import (
    build_string,
    conda_name,
    cuda_pin,
    member_destination,
    plain_build,
    python_pin,
    run_depends,
)
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec

SITE = "lib/python3.11/site-packages/"


def test_build_strings_follow_the_official_packages() -> None:
    # seed 001's package: pytorch-1.8.0-py3.8_cuda11.0.221_cudnn8.0.5_0
    assert build_string("3.8", "11.0.221", "8.0.5") == "py3.8_cuda11.0.221_cudnn8.0.5_0"
    assert build_string("3.11", None, None) == "py3.11_cpu_0"
    assert build_string("3.11", "12.4", None, 2) == "py3.11_cuda12.4_2"
    assert plain_build("3.11") == "py311_0"


def test_names_and_pins() -> None:
    assert conda_name("torch") == "pytorch"
    assert conda_name("Typing_Extensions") == "typing_extensions"
    assert conda_name("Jinja2") == "jinja2"
    assert python_pin("3.11") == "python >=3.11,<3.12.0a0"
    assert cuda_pin("11.0") == "cudatoolkit >=11.0,<11.1"


def test_run_depends_keep_what_applies_to_linux_and_this_python() -> None:
    requires = [  # torch 2.13.0+cpu's METADATA, plus markers that do not apply
        "filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3",
        "optree>=0.13.0; extra == 'optree'",
        "pywin32; sys_platform == 'win32'", "tomli; python_version < '3.11'",
    ]  # fmt: skip
    depends = run_depends(requires, "3.11")
    assert depends == ["python >=3.11,<3.12.0a0", "filelock", "typing_extensions >=4.10.0",
                       "sympy >=1.13.3"]  # fmt: skip
    for spec in depends:
        MatchSpec(spec)  # every one is a valid conda match spec


@pytest.mark.parametrize(
    ("member", "where"),
    [
        ("torch/lib/libtorch.so", "lib/python3.11/site-packages/torch/lib/libtorch.so"),
        ("torch-2.5.1.dist-info/RECORD", SITE + "torch-2.5.1.dist-info/RECORD"),
        ("torch-2.5.1.data/scripts/torchrun", "bin/torchrun"),
        ("torch-2.5.1.data/purelib/x.py", "lib/python3.11/site-packages/x.py"),
        ("torch-2.5.1.data/headers/t.h", "include/t.h"),
    ],
)  # fmt: skip
def test_wheel_members_land_where_an_installer_puts_them(member: str, where: str) -> None:
    assert member_destination(member, "3.11") == PurePosixPath(where)


def test_members_outside_the_package_are_refused() -> None:
    assert member_destination("torch/", "3.11") is None
    for bad in ("../etc/passwd", "/abs", "torch/../../x"):
        with pytest.raises(BuildError, match="leaves the package"):
            member_destination(bad, "3.11")


def test_output_conda_plans_a_conda_step_after_publish() -> None:
    spec = resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu", "outputs": ("conda",)})
    steps = [s.name for s in resolve(spec, mini_kb(), ci_host()).steps]
    assert steps[-3:] == ["publish", "conda", "attest"]
