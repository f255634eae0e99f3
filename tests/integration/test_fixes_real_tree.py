"""The patch fixes for torch 1.13.1 applied to the REAL 1.13.1 source (Debian's orig tarball, the
upstream release tree minus DFSG-removed third-party code): every edit fits exactly, applying
twice changes nothing, and the edited files still compile as Python.

About 5-10 s wall on the shared 2-core machine (3 s CPU: tarfile decompresses the 18 MB .xz up
to the two files), once the tarball is cached by the session fixture (18 MB download, first use)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from torchsmith.kb import load
from torchsmith.kb.models import Fix
from torchsmith.planner.fixes import applicable_fixes
from torchsmith.steps.edits import apply_edits

pytestmark = [pytest.mark.network, pytest.mark.slow]
TOP = "pytorch-1.13.1"


def _patch_fixes() -> list[Fix]:
    found = applicable_fixes(
        load(), torch="1.13.1", cuda="11.8", gcc="11", python="3.10", source_kind="git"
    )
    return [f for f in found if f.action == "patch"]


def _extract(tarball: Path, dest: Path, paths: set[str]) -> Path:
    wanted = {f"{TOP}/{p}" for p in paths}
    found = set()
    with tarfile.open(tarball) as archive:
        for member in archive:
            handle = archive.extractfile(member) if member.name in wanted else None
            if handle is not None:
                target = dest / member.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(handle.read())
                found.add(member.name)
            if found == wanted:
                break
    assert found == wanted, "the tarball lacks a file a fix edits"
    return dest / TOP


def _dict_keys(tree: ast.Module, name: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict)
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    raise AssertionError(f"{name} not found")


@pytest.fixture(scope="module")
def tree(debian_pytorch_1131_orig: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    paths = {e.path for f in _patch_fixes() for e in f.edits}
    return _extract(debian_pytorch_1131_orig, tmp_path_factory.mktemp("t113"), paths)


def test_seed_004_patches_fit_the_real_tree_once(tree: Path) -> None:
    fixes = _patch_fixes()
    assert {f.id for f in fixes} >= {
        "cpp-extension-cuda118-compiler-bounds",
        "cpp-extension-sm89-sm90",
    }
    files = sorted({tree / e.path for f in fixes for e in f.edits})
    before = {p: p.read_bytes() for p in files}
    for fix in fixes:
        assert all(s.endswith("would apply") for s in apply_edits(tree, fix, dry_run=True))
        assert all(s.endswith(": applied") for s in apply_edits(tree, fix))
    after = {p: p.read_bytes() for p in files}
    assert all(after[p] != before[p] for p in files)
    for fix in fixes:
        assert all(s.endswith("already applied") for s in apply_edits(tree, fix))
    assert {p: p.read_bytes() for p in files} == after

    python = [str(p) for p in files if p.suffix == ".py"]  # cmake/Codegen.cmake too
    subprocess.run([sys.executable, "-m", "py_compile", *python], check=True)


def test_patched_cpp_extension_says_what_seed_004_needs(tree: Path) -> None:
    for fix in _patch_fixes():
        apply_edits(tree, fix)  # idempotent: the previous test may already have applied them
    source = (tree / "torch/utils/cpp_extension.py").read_text(encoding="utf-8")
    module = ast.parse(source)
    assert "11.8" in _dict_keys(module, "CUDA_GCC_VERSIONS")
    assert "11.8" in _dict_keys(module, "CUDA_CLANG_VERSIONS")
    assert "'8.6', '8.9', '9.0']" in source
    assert "'11.8': ((6, 0, 0), (15, 0, 0))," in source  # clang <= 14 (KB CUDA 11.8 record)
