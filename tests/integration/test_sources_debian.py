"""The debian source provider on Debian's real pytorch 1.13.1+dfsg-4 (bookworm), and the
torchsmith fixes (kb/data/fixes_debian.toml) that make its DFSG tree configure.

First run downloads 18.5 MB + 216 kB from deb.debian.org (about 10 s); later runs reuse the cache
under $TORCHSMITH_TEST_CACHE/sources and need no network. The CMake configure test takes
15-40 s on 2 cores (marked slow)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.resources import require, require_tool
from torchsmith import kb
from torchsmith.errors import HostError, SourceError
from torchsmith.kb.models import Fix
from torchsmith.plan_model import SourcePlan
from torchsmith.planner.fixes import applicable_fixes
from torchsmith.proc import HOST
from torchsmith.sources import expand_placeholders, fetch_source
from torchsmith.sources.base import SourceTree
from torchsmith.sources.debian import fetch_debian
from torchsmith.sources.hostdeps import ensure_packages
from torchsmith.steps.edits import apply_edits

pytestmark = [
    pytest.mark.network,
]


@pytest.fixture(autouse=True)
def _needs_apt_get() -> None:
    require_tool("apt-get", "a Debian/Ubuntu host")


PLAN = SourcePlan(kind="debian", location="pytorch", ref="1.13.1+dfsg-4", reason="test")
DEBIAN_TAR = "pytorch_1.13.1+dfsg-4.debian.tar.xz"
ORIG_SHA = "d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7"
# The configure environment of docs/debian-source-builds.md §1.3 (the planner's job in a build),
# less what the fixes set themselves (USE_ITT, BUILD_CUSTOM_PROTOBUF, USE_CCACHE).
OFF = (
    "USE_CUDA", "USE_ROCM", "USE_DISTRIBUTED", "BUILD_TEST", "USE_MKLDNN", "USE_FBGEMM",
    "USE_NNPACK", "USE_QNNPACK", "USE_PYTORCH_QNNPACK", "USE_XNNPACK", "USE_KINETO",
    "USE_BREAKPAD", "USE_MPI", "USE_GLOO", "USE_TENSORPIPE", "BUILD_CAFFE2",
    "BUILD_CAFFE2_OPS", "USE_MAGMA", "USE_NCCL", "USE_NUMA",
)  # fmt: skip
CONFIGURE_ENV = {**dict.fromkeys(OFF, "0"), "USE_SYSTEM_LIBS": "1", "MAX_JOBS": "2"}


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}


@pytest.fixture(scope="module")
def tree(source_cache: Path) -> SourceTree:
    return fetch_debian(PLAN, source_cache, _env(), runner=HOST, check_deps=False)


def _debian_fixes() -> list[Fix]:
    """The Debian-source fixes of this tree's release (1.13.1; 2.6's have their own tree)."""
    fixes = kb.load().fixes
    return [
        f
        for f in fixes
        if f.applies.source == "debian" and "1.13.1" in SpecifierSet(f.applies.torch)
    ]


def _plan_fixes() -> list[Fix]:
    """Every fix the registry gives this build: Debian 1.13.1, CPU, GCC 12, Python 3.11."""
    return applicable_fixes(
        kb.load(), torch="1.13.1", cuda=None, gcc="12", python="3.11", source_kind="debian"
    )


def _apply(root: Path, fix: Fix, details: dict[str, str]) -> None:
    """Apply one fix the way the fixes step does: edits dry-run first, commands in the root."""
    if fix.edits:
        assert all("would apply" in line for line in apply_edits(root, fix, dry_run=True))
        apply_edits(root, fix)
        assert all("already applied" in line for line in apply_edits(root, fix, dry_run=True))
    if fix.command:
        argv = expand_placeholders(fix.command, details)
        subprocess.run(argv, cwd=root, check=True, env=_env())


@pytest.fixture(scope="module")
def fixed_tree(tree: SourceTree, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("debian113") / "pytorch-1.13.1"
    shutil.copytree(tree.root, root, symlinks=True)
    for fix in _plan_fixes():
        _apply(root, fix, tree.details)
    return root


def test_fetch_says_debian_patches_are_unavailable_and_verifies_the_orig(tree: SourceTree) -> None:
    assert tree.kind == "debian"
    assert tree.version == "1.13.1"
    assert tree.owned
    assert (tree.root / "setup.py").is_file()
    assert (tree.root / "version.txt").read_text().strip() == "1.13.0a0"
    assert tree.details["sha256:pytorch_1.13.1+dfsg.orig.tar.xz"] == ORIG_SHA
    assert "404" in tree.details[f"unavailable:{DEBIAN_TAR}"]
    assert "NOT applied" in tree.details["patches"]
    assert len(tree.identity) == 64


def test_second_fetch_reuses_the_cache_without_network(
    tree: SourceTree, source_cache: Path
) -> None:
    lines: list[str] = []
    again = fetch_debian(
        PLAN, source_cache, _env(), runner=HOST, check_deps=False, on_line=lines.append
    )
    assert again == tree
    assert not [line for line in lines if "downloading" in line or "apt-get update" in line]
    assert any("NOT AVAILABLE" in line and DEBIAN_TAR in line for line in lines)


def test_the_extra_packaging_for_fixes_is_fetched(tree: SourceTree) -> None:
    extra = Path(tree.details["debian_extra:pytorch=2.6.0+dfsg-7"])
    assert (extra / "debian" / "patches" / "series").is_file()


def test_every_debian_fix_applies_to_the_real_tree(tree: SourceTree, fixed_tree: Path) -> None:
    ids = {f.id for f in _plan_fixes()}
    assert {f.id for f in _debian_fixes()} <= ids
    assert len(_debian_fixes()) == 10
    assert (fixed_tree / "third_party/pocketfft/pocketfft_hdronly.h").stat().st_size > 100_000
    assert (fixed_tree / "third_party/kineto/libkineto/include/ActivityType.h").is_file()
    header = "torch/csrc/jit/serialization/mobile_bytecode_generated.h"
    assert (fixed_tree / header).read_bytes() != (tree.root / header).read_bytes()
    deps = (fixed_tree / "cmake/Dependencies.cmake").read_text()
    assert "find_package(fmt REQUIRED)" in deps
    assert "add_subdirectory(${PROJECT_SOURCE_DIR}/third_party/fmt)" not in deps
    # the cached tree is pristine: fixes go to copies only
    assert "find_package(fmt REQUIRED)" not in (tree.root / "cmake/Dependencies.cmake").read_text()


@pytest.mark.slow
def test_fixed_tree_configures_with_system_libraries(fixed_tree: Path) -> None:
    require(Path("/usr/bin/python3").exists(), "Debian's python3", "apt-get install python3-dev")
    env = {**_env(), **CONFIGURE_ENV}
    for fix in _plan_fixes():
        env.update(fix.env)
    done = subprocess.run(
        ["/usr/bin/python3", "setup.py", "build", "--cmake-only"],
        cwd=fixed_tree, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Using pocketfft in directory" in done.stdout
    assert (fixed_tree / "build" / "build.ninja").is_file()
    cache = (fixed_tree / "build" / "CMakeCache.txt").read_text()
    assert "BUILD_CUSTOM_PROTOBUF:BOOL=0" in cache or "BUILD_CUSTOM_PROTOBUF:BOOL=OFF" in cache
    assert "USE_CCACHE:BOOL=0" in cache


def test_missing_build_dependencies_name_the_packages_and_the_command() -> None:
    with pytest.raises(HostError) as err:
        ensure_packages(
            ["cmake", "torchsmith-no-such-pkg"], _env(), runner=HOST, install=False, why="test"
        )
    assert "torchsmith-no-such-pkg" in err.value.message
    assert "cmake" not in err.value.message.split(":")[-1]
    assert "apt-get install -y --no-install-recommends torchsmith-no-such-pkg" in err.value.hint
    assert "--install-deps" in err.value.hint


def test_a_cache_directory_torchsmith_did_not_create_is_refused(tmp_path: Path) -> None:
    (tmp_path / "debian").mkdir()
    (tmp_path / "debian" / "user-file").write_text("mine")
    with pytest.raises(SourceError, match="did not create"):
        fetch_source(PLAN, tmp_path, _env(), runner=HOST)
    assert (tmp_path / "debian" / "user-file").read_text() == "mine"


def test_an_unknown_debian_version_is_a_clear_error(source_cache: Path) -> None:
    plan = PLAN.model_copy(update={"ref": "9.9.9-1"})
    with pytest.raises(SourceError, match=r"no source package pytorch=9\.9\.9-1"):
        fetch_debian(plan, source_cache, _env(), runner=HOST, check_deps=False)


@pytest.mark.slow  # unpacks the 134 MB tree again: about 10 s
def test_a_corrupt_cached_download_is_fetched_again(source_cache: Path, tmp_path: Path) -> None:
    fetch_debian(PLAN, source_cache, _env(), runner=HOST, check_deps=False)  # the cache is complete
    shutil.copytree(
        source_cache / "debian", tmp_path / "debian", ignore=shutil.ignore_patterns("tree", "extra")
    )
    dsc_file = tmp_path / "debian/pytorch_1.13.1+dfsg-4/download/pytorch_1.13.1+dfsg-4.dsc"
    good = dsc_file.read_bytes()
    dsc_file.write_bytes(good.replace(b"Maintainer", b"Maintainor"))
    lines: list[str] = []
    tree = fetch_debian(PLAN, tmp_path, _env(), runner=HOST, check_deps=False, on_line=lines.append)
    assert dsc_file.read_bytes() == good
    assert [line for line in lines if "downloading" in line] == [
        "debian: downloading pytorch_1.13.1+dfsg-4.dsc (3388 bytes)",
        f"debian: downloading {DEBIAN_TAR} (193756 bytes)",  # retried: still 404
    ]
    assert tree.details["sha256:pytorch_1.13.1+dfsg.orig.tar.xz"] == ORIG_SHA
