"""Issue 24, for real: torchvision from a git tag. A git repository is made from a real
companion source tree — Debian trixie's orig of torchvision 0.21.0, checked against the signed
Sources index (the tree tests/integration/test_companion_against.py builds; torchvision has no
git submodules) — tagged v0.21.0 and published as a bare repository under a local mirror
(``mirror/pytorch/vision.git``). Then:

1. ``torchsmith plan`` through ``--git-mirror`` plans pytorch/vision at the tag through the
   mirror and warns that an unpinned tag is refused there; pinned by its commit
   (``--companion-source torchvision=git#SHA``) the fetch step names the commit;
2. ``torchsmith build --with torchvision --against python:`` the user environment with PyPI's
   torch 2.6.0 that test_companion_against.py builds against (tests/integration/torch260_env.py:
   one venv per test cache), CPU ops (``--cpu``), from the repository's tag
   (``--companion-source torchvision=git:file://…``): the fetch is the git provider's (the tag's
   commit, recorded, with the loud unpinned warning), the wheel pins torch==2.6.0, the venv is
   never written to. The compiler cache is the against test's (``ccache-torchvision-0.21.0`` in
   the test cache): torch's headers are at the same absolute path for both builds, so after that
   test (CI's order: one xdist group, collected first) >= 90 % of the compilations are hits,
   asserted; alone on an empty cache this build compiles cold and fills it. The wheel route
   (``--against FILE.whl``) is test_companion_cuda.py's.

Time on the 2-core development machine (shared, load ~8-9, 2026-11-27): the plan test 18 s
(Debian's orig cached), the build 63 s from the cache; cold by the wheel route (before issue
23's cut) it was 1176 s at that load, 228 s in an idle clean-clone run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.integration import conftest, torch260_env
from tests.integration.conftest import downloaded_wheel
from tests.resources import require_tool
from torchsmith import kb
from torchsmith.proc import HOST
from torchsmith.sources.debian_orig import OrigJob, fetch_orig

pytestmark = [pytest.mark.slow, pytest.mark.network]
# One unit of work with test_companion_against.py (MODULE_GROUPS in tests/integration/conftest.py:
# one worker, after it), whose build fills the compiler cache this module's build hits
# (tests/integration/torch260_env.py).


@pytest.fixture(scope="module")
def torch_260() -> Path:
    """PyPI's torch 2.6.0 for cp311 (767 MB, once per test cache; the wheel
    test_companion_against.py uses): companions get CPU ops (--cpu)."""
    return downloaded_wheel("torch==2.6.0", "torch-2.6.0-cp311-*.whl")


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def git_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }  # fmt: skip


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the mirror directory, the commit of v0.21.0): Debian's orig of torchvision 0.21.0 as
    a git repository tagged v0.21.0, published bare at ``mirror/pytorch/vision.git``."""
    require_tool("apt-get", "a Debian/Ubuntu host")
    pkg = kb.load().debian_package("pytorch-vision", "0.21.0")
    job = OrigJob(pkg.package, pkg.version, "0.21.0", pkg.dsc_sha256)
    tree = fetch_orig(job, conftest.test_cache() / "sources", dict(os.environ), runner=HOST)
    root = tmp_path_factory.mktemp("vision-git")
    work, env = root / "work", git_env(root / "home")
    shutil.copytree(tree.root, work, symlinks=True)
    git(env, work, "init", "-q", "-b", "main")
    git(env, work, "add", "-A")
    git(env, work, "commit", "-q", "-m", "torchvision 0.21.0 (Debian orig)")
    git(env, work, "tag", "v0.21.0")
    bare = root / "mirror" / "pytorch" / "vision.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], env=env, check=True)
    return root / "mirror", git(env, work, "rev-parse", "v0.21.0")


def torchsmith(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "torchsmith", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def test_plan_through_the_mirror_names_the_tag_and_the_pin(
    mirror: tuple[Path, str], torch_260: Path
) -> None:
    where, commit = mirror
    base = ["plan", "--with", "torchvision", "--against", str(torch_260), "--cpu"]
    through = [*base, "--git-mirror", f"file://{where}"]
    unpinned = torchsmith(*through)
    said = unpinned.stdout + unpinned.stderr
    assert unpinned.returncode == 0, said[-3000:]
    assert f"git https://github.com/pytorch/vision.git v0.21.0, through mirror file://{where}" in (
        said
    )
    assert "through --git-mirror will refuse it" in said
    pinned = torchsmith(*through, "--companion-source", f"torchvision=git#{commit}", "--json")
    assert pinned.returncode == 0, pinned.stderr[-3000:]
    [vision] = json.loads(pinned.stdout)["companion_build"]["builds"]
    assert vision["source"] == {
        "kind": "git",
        "location": "https://github.com/pytorch/vision.git",
        "ref": commit,
        "git_mirror": f"file://{where}",
        "commit": commit,
    }
    [fetch] = [s for s in json.loads(pinned.stdout)["steps"] if s.get("subject") == "torchvision"
               and s["name"] == "fetch"]  # fmt: skip
    assert f"must be commit {commit}" in fetch["what"]


def test_torchvision_from_a_git_tag_against_the_users_torch_260(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    require_tool("ccache")
    where, commit = mirror
    repo = f"file://{where}/pytorch/vision.git"
    dist = tmp_path / "dist"
    user = torch260_env.user_python()
    args = ["build", "--with", "torchvision", "--against", f"python:{user}", "--cpu"]
    args += ["--companion-source", f"torchvision=git:{repo}"]
    args += ["--cache-root", str(tmp_path / "root"), "--output-dir", str(dist), "--no-verify"]
    ccache = torch260_env.torchvision_ccache()
    filled = torch260_env.ccache_filled()
    args += ["--cache", "ccache", "--cache-dir", str(ccache)]
    done = torchsmith(*args)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-4000:]
    assert "WARNING: v0.21.0 is not pinned" in said and commit in said  # loud, as torch's
    [path] = sorted(dist.glob("companions-*.manifest.json"))
    [vision] = json.loads(path.read_text())["companions"]
    source = vision["source"]
    assert (source["kind"], source["url"], source["ref"]) == ("git", repo, "v0.21.0")
    assert source["commit"] == commit and source["pinned_by"] == "nothing"
    [wheel] = sorted(dist.glob("torchvision-0.21.0-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        [meta] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        assert "Requires-Dist: torch==2.6.0" in zf.read(meta).decode()
    cache = vision["compiler_cache"]
    print(f"torchvision from git: compiler cache {cache} (filled before: {filled})")
    assert cache["hits"] + cache["misses"] > 20, cache
    if filled:  # test_companion_against.py ran first (CI's order), or an earlier run did
        assert cache["hit_rate"] >= 0.9, cache
    torch260_env.record_filled("test_companion_git")
    torch260_env.assert_untouched(user)
