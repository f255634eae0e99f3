"""The pure parts of the build steps: requirements, the build environment, the commands."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from torchsmith.cache import make_cache
from torchsmith.plan_model import BuildPlan, EnvSetting
from torchsmith.steps.compile import build_command
from torchsmith.steps.configure import configure_command
from torchsmith.steps.environment import (
    BuildEnv,
    compose_env,
    in_tree,
    read_build_requirements,
    requirement_name,
    select_requirements,
)
from torchsmith.steps.package import package_command
from torchsmith.steps.preflight import Toolchain, base_python, compiler_candidates

TOOLS = Toolchain(
    "/usr/bin/gcc",
    "/usr/bin/g++",
    "/usr/bin/cmake",
    "/usr/bin/ninja",
    "/usr/bin/python3",
    "/usr/bin/ccache",
)


@pytest.fixture
def plan(fixtures: Path) -> BuildPlan:
    text = (fixtures / "build" / "plan-debian-1.13.1-c10.json").read_text()
    return BuildPlan.model_validate_json(text)


def test_build_requirements_of_the_real_1131_tree(fixtures: Path, tmp_path: Path) -> None:
    shutil.copy(fixtures / "build" / "pyproject-1.13.1.toml", tmp_path / "pyproject.toml")
    reqs = read_build_requirements(tmp_path)
    assert reqs[:3] == ["setuptools", "wheel", "astunparse"]
    chosen = select_requirements(reqs, {"cmake", "ninja"})
    assert "cmake" not in chosen and "ninja" not in chosen and "dataclasses" not in chosen
    assert chosen.count("setuptools") == 1
    assert "numpy" in chosen and "pyyaml" in chosen


def test_requirements_txt_when_no_build_system(fixtures: Path, tmp_path: Path) -> None:
    shutil.copy(fixtures / "build" / "requirements-1.13.1.txt", tmp_path / "requirements.txt")
    reqs = read_build_requirements(tmp_path)
    assert "numpy" in reqs and "typing_extensions" in reqs
    assert not any(r.startswith("#") for r in reqs)


def test_requirement_names() -> None:
    assert requirement_name("typing_extensions>=4") == "typing-extensions"
    assert requirement_name("cmake>=3.18; platform_system!='Windows'") == "cmake"


def test_compose_env_layers(plan: BuildPlan, tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin", "PYTHONPATH": "/elsewhere", "HOME": "/root", "MAX_JOBS": "64"}
    cache = make_cache("ccache", tmp_path, "/usr/bin/ccache")
    env, keys = compose_env(base, plan, TOOLS, tmp_path / "venv", cache)
    assert "PYTHONPATH" not in env
    assert env["HOME"] == "/root"
    assert env["PATH"] == f"{tmp_path / 'venv' / 'bin'}:/usr/bin"
    assert env["MAX_JOBS"] == "2"  # the plan's, not the caller's
    assert env["CC"] == "/usr/bin/gcc" and env["CXX"] == "/usr/bin/g++"
    assert env["USE_CCACHE"] == "0"
    assert env["CCACHE_DIR"] == str(tmp_path / "ccache")
    assert env["NINJA_STATUS"] == "[%f/%t %es] "
    assert env["PYTORCH_BUILD_VERSION"] == "1.13.1+cpu"
    assert "HOME" not in keys and "CC" in keys and "USE_CUDA" in keys


def test_the_plans_tree_placeholder_is_the_source_tree(plan: BuildPlan, tmp_path: Path) -> None:
    """CPPFLAGS' debug prefix map names the tree only in the build's variables, never in the
    plan (planner/reproducible.py debug_map_env)."""
    flag = EnvSetting(name="CPPFLAGS", value="-fdebug-prefix-map={tree}=.", reason="test")
    mapped = plan.model_copy(update={"env": [*plan.env, flag]})
    cache = make_cache("ccache", tmp_path, "/usr/bin/ccache")
    tree = tmp_path / "src"
    env, keys = compose_env({}, mapped, TOOLS, tmp_path / "venv", cache, tree=tree)
    assert env["CPPFLAGS"] == f"-fdebug-prefix-map={tree}=." and "CPPFLAGS" in keys
    assert "CPPFLAGS" not in compose_env({}, mapped, TOOLS, tmp_path / "venv", cache)[0]
    spaced = in_tree({"CPPFLAGS": flag.value}, Path("/a b/src"))  # read shell-like by distutils
    assert spaced == {"CPPFLAGS": "-fdebug-prefix-map='/a b/src'=."}


def test_the_plans_flags_come_after_the_callers_own(plan: BuildPlan, tmp_path: Path) -> None:
    """A user's CPPFLAGS is kept: the plan's debug prefix map is appended, not put in its place."""
    flag = EnvSetting(name="CPPFLAGS", value="-fdebug-prefix-map={tree}=.", reason="test")
    mapped = plan.model_copy(update={"env": [*plan.env, flag]})
    cache = make_cache("ccache", tmp_path, "/usr/bin/ccache")
    tree = tmp_path / "src"
    base = {"CPPFLAGS": "-I/opt/include", "CFLAGS": "-O1"}
    env = compose_env(base, mapped, TOOLS, tmp_path / "venv", cache, tree=tree)[0]
    assert env["CPPFLAGS"] == f"-I/opt/include -fdebug-prefix-map={tree}=."
    assert env["CFLAGS"] == "-O1"  # a flag variable the plan does not set is the caller's
    alone = compose_env({}, mapped, TOOLS, tmp_path / "venv", cache, tree=tree)[0]
    assert alone["CPPFLAGS"] == f"-fdebug-prefix-map={tree}=."


def test_commands(plan: BuildPlan, tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("")
    benv = BuildEnv(
        tmp_path / "venv/bin/python", {}, make_cache("none", tmp_path, None), frozenset()
    )
    assert configure_command(tmp_path, benv, []) == [
        str(benv.python),
        "setup.py",
        "build",
        "--cmake-only",
    ]
    (tmp_path / "setup.py").unlink()
    assert configure_command(tmp_path, benv, ["-DUSE_CUDA=OFF"])[-3:] == [
        "-G",
        "Ninja",
        "-DUSE_CUDA=OFF",
    ]
    assert build_command(tmp_path / "build", ["c10"], 2) == [
        "cmake", "--build", str(tmp_path / "build"), "--parallel", "2", "--target", "c10",
    ]  # fmt: skip
    assert "--target" not in build_command(tmp_path / "build", [], 2)
    wh = tmp_path / "wh"
    assert package_command("setup.py", benv.python, wh)[1:3] == ["setup.py", "bdist_wheel"]
    pep517 = package_command("pep517", benv.python, wh)
    assert pep517[1:5] == ["-m", "pip", "wheel", "--no-build-isolation"]


def test_compilers_and_python(plan: BuildPlan) -> None:
    assert compiler_candidates("gcc-12") == [("gcc-12", "g++-12"), ("gcc", "g++")]
    assert compiler_candidates("clang-14")[0] == ("clang-14", "clang++-14")
    assert base_python(plan) == ["/usr/bin/python3"]
