"""Step ``configure``: through setup.py where the tree has one, else CMake with the plan's args."""

from __future__ import annotations

from pathlib import Path

from tests.unit.steps.conftest import Rig
from torchsmith.steps import configure, environment, source


def _prepared(rig: Rig) -> Path:
    source.run_fetch(rig.ctx, rig.state)
    source.run_copy(rig.ctx, rig.state)
    environment.run(rig.ctx, rig.state)
    return rig.state.need_tree()


def test_a_tree_without_setup_py_is_configured_by_cmake_with_the_plan_args(rig: Rig) -> None:
    tree = _prepared(rig)
    configure.run(rig.ctx, rig.state)
    argv = rig.executor.ran[-1]
    assert argv[:3] == ["cmake", "-S", str(tree)] and "Ninja" in argv
    assert set(rig.ctx.plan.cmake_args) <= set(argv)


def test_a_setup_py_tree_is_configured_by_setup_py_cmake_only(rig: Rig) -> None:
    tree = _prepared(rig)
    (tree / "setup.py").write_text("")
    configure.run(rig.ctx, rig.state)
    assert rig.executor.ran[-1][1:] == ["setup.py", "build", "--cmake-only"]


def test_cmake_cache_values_are_read_with_their_types() -> None:
    values = configure.parse_cmake_cache(
        "// c\nUSE_CUDA:BOOL=OFF\nCMAKE_CXX_COMPILER:FILEPATH=/g++\n"
    )
    assert values == {"USE_CUDA": "OFF", "CMAKE_CXX_COMPILER": "/g++"}


def test_a_workspace_configured_with_another_toolkit_is_configured_again(
    rig: Rig, tmp_path: Path
) -> None:
    tree = _prepared(rig)
    root = tmp_path / "cuda"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "nvcc").write_text("")
    record = {"root": str(root), "version": "12.4.131", "packages": []}
    configure.configure(rig.ctx, tree, rig.state.need_benv(), record)
    bdir = tree / "build"
    for name in ("build.ninja", "CMakeCache.txt"):
        (bdir / name).write_text("")
    runs = len(rig.executor.ran)
    configure.configure(rig.ctx, tree, rig.state.need_benv(), record)
    assert len(rig.executor.ran) == runs  # the same toolkit: nothing to do
    (root / "include").mkdir()  # the entry re-provisioned: include/ appears
    configure.configure(rig.ctx, tree, rig.state.need_benv(), record)
    assert len(rig.executor.ran) == runs + 1 and not (bdir / "CMakeCache.txt").exists()
