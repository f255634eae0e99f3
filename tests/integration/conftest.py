"""Shared, expensive integration fixtures, made once per test session and cached on disk
between runs under ``$TORCHSMITH_TEST_CACHE`` (default ``<repo>/.cache/test``). Resources are
obtained here by the test command itself (pip, apt, torchsmith's toolkit providers), never
expected at a fixed path of one machine; what cannot be obtained goes through
:func:`tests.resources.require` (skipped locally, a failure under ``CI=true``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

from tests import canary
from tests.integration.disk_watch import DiskWatch, append, reserved
from tests.resources import require_tool
from torchsmith.host.model import HostFacts
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext
from torchsmith.toolchains.cuda.pypi import PypiProvider

REPO = Path(__file__).resolve().parents[2]
DEBIAN_SRC_LIST = (
    "deb-src http://deb.debian.org/debian bookworm main\n"
    "deb-src http://deb.debian.org/debian trixie main\n"
)


def test_cache() -> Path:
    root = Path(os.environ.get("TORCHSMITH_TEST_CACHE", REPO / ".cache" / "test"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """One test worker at a time makes the test-cache entry ``name`` (scripts/test runs this
    tier on several pytest-xdist workers that share the cache); the others wait, then find it
    made. Every fixture that fills the test cache takes it around its whole check-then-make."""
    locks = test_cache() / ".locks"
    locks.mkdir(exist_ok=True)
    with FileLock(str(locks / f"{re.sub(r'[^A-Za-z0-9_.+-]', '_', name)}.lock")):
        yield


def _apt_source(workdir: Path, package: str) -> None:
    lists = workdir / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    srclist = workdir / "sources.list"
    srclist.write_text(DEBIAN_SRC_LIST)
    opts = [
        f"-oDir::Etc::SourceList={srclist}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={lists}",
    ]
    subprocess.run(["apt-get", *opts, "-qq", "update"], check=True)
    # --download-only: 1.13.1's debian.tar.xz is 404 on the mirror; the .orig tarball is there.
    subprocess.run(
        ["apt-get", *opts, "source", "--download-only", package],
        cwd=workdir,
        check=False,
    )


@pytest.fixture(scope="session")
def debian_pytorch_1131_orig() -> Path:
    """The real ``pytorch_1.13.1+dfsg.orig.tar.xz`` from Debian's archive (18 MB, once)."""
    require_tool("apt-get", "a Debian/Ubuntu host")
    cache = test_cache() / "debian-pytorch-1.13.1"
    tarball = cache / "pytorch_1.13.1+dfsg.orig.tar.xz"
    with cache_lock("debian-pytorch-1.13.1"):
        if not tarball.exists():
            cache.mkdir(parents=True, exist_ok=True)
            _apt_source(cache, "pytorch=1.13.1+dfsg-4")
    if not tarball.exists():
        pytest.fail("could not download pytorch_1.13.1+dfsg.orig.tar.xz from deb.debian.org")
    return tarball


@pytest.fixture(scope="session")
def source_cache() -> Path:
    """A cache root for source providers, kept between runs (downloads happen once)."""
    root = test_cache() / "sources"
    root.mkdir(parents=True, exist_ok=True)
    return root


# Wheels for Python 3.11 on x86-64 Linux (the Debian 12 CI machine), whatever runs the tests;
# pip does not widen an explicit --platform to older manylinux tags, so they are listed.
PLATFORMS = (
    "manylinux_2_28_x86_64", "manylinux_2_18_x86_64", "manylinux_2_17_x86_64",
    "manylinux2014_x86_64", "manylinux1_x86_64",  # torch 2.6.0 is tagged manylinux1
)  # fmt: skip
WHEEL_TARGET = (
    "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
    *(arg for tag in PLATFORMS for arg in ("--platform", tag)),
)  # fmt: skip


def downloaded_wheel(requirement: str, pattern: str, *pip_args: str) -> Path:
    """The wheel ``pip download`` fetches for ``requirement`` (pip's own configuration: index,
    mirrors, proxy), once, into the test cache; ``pattern`` globs its file name."""
    dest = test_cache() / "wheels"
    with cache_lock(f"wheel-{pattern}"):
        found = sorted(dest.glob(pattern))
        if not found:
            pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
            argv = [*pip, "--only-binary=:all:", *WHEEL_TARGET, "-d", str(dest)]
            subprocess.run([*argv, *pip_args, requirement], check=True)
            found = sorted(dest.glob(pattern))
    assert len(found) == 1, f"pip download {requirement}: expected one {pattern} in {dest}"
    return found[0]


@pytest.fixture(scope="session")
def cpu_torch_wheel() -> Path:
    """torch 2.13.0+cpu (191 MB) from PyTorch's CPU index."""
    index = ("--extra-index-url", "https://download.pytorch.org/whl/cpu")
    return downloaded_wheel("torch==2.13.0+cpu", "torch-2.13.0+cpu-cp311-*.whl", *index)


@pytest.fixture(scope="session")
def cuda_torch_wheel() -> Path:
    """torch 2.14.1 for CUDA 13.0 (555 MB) from PyPI."""
    return downloaded_wheel("torch==2.14.1", "torch-2.14.1-cp311-*.whl")


@pytest.fixture(scope="session")
def nccl_wheel() -> Path:
    """NVIDIA's NCCL 2.30.7 for CUDA 13 (216 MB) from PyPI."""
    return downloaded_wheel("nvidia-nccl-cu13==2.30.7", "nvidia_nccl_cu13-2.30.7-*x86_64.whl")


@pytest.fixture(scope="session")
def nvcc_13() -> Path:
    """nvcc of CUDA 13.0 from NVIDIA's PyPI wheels, provisioned by torchsmith's own ``pypi``
    toolkit provider into the test cache (100 MB once; shared with test_toolchain_pypi_cuda13)."""
    root = test_cache() / "toolchains"
    log = root / "pypi-13.0.log"
    ctx = ProvideContext(runner=HOST, cache_root=root, env=dict(os.environ), log_path=log)
    return Path(PypiProvider(sys.executable).provide("13.0", HostFacts(), ctx).nvcc)


# Disk: CI's machine has ~100 GB and the integration tier makes dozens of PyTorch workspaces,
# venvs with torch and container images (tens of GB). A passing test's tmp_path is removed when it
# ends (pyproject: tmp_path_retention_policy = "failed"); the directories a module's fixtures made
# with tmp_path_factory are removed when the module ends, unless one of its tests failed (kept
# for the post-mortem). CI once refused seed 004's build with 13.5 GiB left (stop 19), and ran
# out when the two CUDA 12.4 modules ran side by side (stop 33: MODULE_GROUPS below).
_FAILED_MODULES: set[str] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if getattr(report, "failed", False):
        _FAILED_MODULES.add(item.nodeid.split("::")[0])
    return report


# The recipe image's vfs store alone takes the free disk down by ~25 GB (39.0 -> 8.7 GB beside
# the 1.13.1 partial build in the rehearsal at 1cad121): it runs alone among the modules that
# take many GB each (the lowest free disk and the peaks: docs/testing.md); the others may share.
DISK_ALONE = frozenset({"test_recipe_image"})
DISK_BIG = frozenset({
    "test_companion_cuda", "test_container_build", "test_build_in_container",
    "test_companion_against", "test_build_debian_partial",
})  # fmt: skip  (not test_companion_git: its venv and compiler cache are the test cache's; it
# waited 190 s for the recipe image's lock in the rehearsal at 26fbea8)


@pytest.fixture(scope="module", autouse=True)
def _disk_reserved(request: pytest.FixtureRequest) -> Iterator[None]:
    module = _module_of(request.node.nodeid)
    if module not in DISK_ALONE | DISK_BIG:
        yield
        return
    (test_cache() / ".locks").mkdir(exist_ok=True)
    with reserved(test_cache() / ".locks" / "disk.lock", module in DISK_ALONE):
        yield


@pytest.fixture(scope="module", autouse=True)
def _disk_watched(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _disk_reserved: None,
) -> Iterator[None]:
    """The module's free disk, logged when scripts/test asks (tests/integration/disk_watch.py)."""
    log = os.environ.get("TORCHSMITH_TEST_DISK_LOG")
    if not log:
        yield
        return
    with DiskWatch(tmp_path_factory.getbasetemp()) as watch:
        yield
    append(log, watch.line(_module_of(request.node.nodeid)))


@pytest.fixture(scope="module", autouse=True)
def _module_dirs_removed(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _disk_watched: None,
) -> Iterator[None]:
    base = tmp_path_factory.getbasetemp()
    before = set(base.iterdir())
    yield
    if request.node.nodeid.split("::")[0] in _FAILED_MODULES:
        return
    for made in set(base.iterdir()) - before:
        shutil.rmtree(made, ignore_errors=True)


# Issue 27 (done-when): after every publish, compiler-cache and container test, a canary
# credential scan over command lines, the files the test wrote (logs, manifests, caches) and new
# temporary entries finds nothing. The canary sits in the environment under names credentials
# have in CI (tests/canary.ENV_NAMES) for the whole module, its fixtures included; a test's own
# credential (a publish token) is scanned by the test itself.
CANARY_MODULES = frozenset({
    "test_publish_pypi", "test_publish_oci", "test_publish_pypiserver_fallback",
    "test_conda_channel", "test_cache_cuda", "test_cache_s3", "test_cache_shared",
    "test_cache_socket", "test_build_in_container", "test_container_build",
    "test_container_env_file",
})  # fmt: skip


# Leaks the scan found that torchsmith cannot prevent, pinned by module so that any other still
# fails. None today: sccache-dist's build server puts every variable of the client's compile
# environment on its bwrap command line (`--setenv NAME VALUE`), so a build with a cluster
# compiles with an allow-listed environment (torchsmith/cache/dist.py FORWARDED_NAMES) and the
# canary never reaches it (test_cache_shared runs a build server on this machine).
KNOWN_CMDLINES: dict[str, tuple[str, ...]] = {}


def _module_name(request: pytest.FixtureRequest) -> str:
    return request.node.nodeid.split("::")[0].rsplit("/", 1)[-1][:-3]


def _canary_module(request: pytest.FixtureRequest) -> bool:
    return _module_name(request) in CANARY_MODULES


def _unknown(request: pytest.FixtureRequest, cmdlines: list[str]) -> list[str]:
    known = KNOWN_CMDLINES.get(_module_name(request), ())
    return [c for c in cmdlines if not (known and c.startswith(known))]


@pytest.fixture(scope="module", autouse=True)
def _canary_env(
    request: pytest.FixtureRequest, _module_dirs_removed: None
) -> Iterator[canary.CmdlineWatch | None]:
    """The module runs with the canary in the environment, its command lines watched."""
    if not _canary_module(request):
        yield None
        return
    value = canary.unique()
    with pytest.MonkeyPatch.context() as m, canary.CmdlineWatch(value, 0.02) as watch:
        for name in canary.ENV_NAMES:
            m.setenv(name, value)
        yield watch
    seen = _unknown(request, watch.seen)
    assert not seen, f"canary credential on a command line: {seen}"


@pytest.fixture(autouse=True)
def _canary_scan(
    request: pytest.FixtureRequest,
    _canary_env: canary.CmdlineWatch | None,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """After each test of a canary module: the files it wrote, new temporary entries and the
    command lines seen hold no canary (before its tmp_path is removed)."""
    if _canary_env is None:
        yield
        return
    before = len(_canary_env.seen)
    with canary.Sweep(_canary_env.canary, [tmp_path_factory.getbasetemp()], None) as sweep:
        yield
    seen = _unknown(request, _canary_env.seen[before:])
    leaks = sweep.leaks() + [f"cmdline: {c}" for c in dict.fromkeys(seen)]
    assert not leaks, f"canary credential found: {leaks}"
    del tmp_path  # requested so that it is removed after this scan


# Parallel runs (issue 23): scripts/test runs this tier on pytest-xdist workers. Each module is
# one unit of work (its module-scoped fixtures are made once, on one worker) unless MODULE_GROUPS
# puts it in a shared unit (modules whose second reuses what the first made, in file order).
# Units are handed out heaviest first, so the workers end together: the weights are each module's
# wall seconds in the clean-clone rehearsal at 479278f (docs/testing.md; test_companion_git since
# then builds from the against test's compiler cache: ~50 s; test_companion_cuda without RNN-T
# and RIR: 253-260 s alone vs 347 s with them, so 323 x 253/347); unlisted modules follow in file
# order. (xdist's own `--dist loadgroup` does not group under pytest 9, whose nodes no longer
# read the `_nodeid` it rewrites; the scheduler below groups by these names instead.)
MODULE_SECONDS = {
    "test_build_in_container": 390, "test_container_build": 330, "test_companion_cuda": 235,
    "test_companion_against": 271, "test_companion_git": 50, "test_cache_shared": 197,
    "test_recipe_image": 193, "test_build_debian_partial": 177, "test_toolchain_pypi_cuda13": 64,
    "test_conda_channel": 50, "test_reliability_kill": 43, "test_readme_fresh_debian": 25,
    "test_repair_install": 25, "test_reliability_corrupt": 21, "test_inspect_wheels": 20,
}  # fmt: skip
MODULE_GROUPS = {
    # the git-tag build compiles from the against build's compiler cache
    "test_companion_against": "torchvision-ccache", "test_companion_git": "torchvision-ccache",
    # the modules that take the most disk at their peak run one after the other: the two CUDA
    # 12.4 modules (torch cu124 and its nvidia-* wheels in two venvs; the toolkit's packages in
    # a vfs store, a full copy per layer) filled CI's disk side by side (stop 33), and the
    # training images' vfs store took the free disk from 23.3 to 9.2 GB beside the recipe image
    # in the rehearsal at ae34341 (scripts/test prints each module's lowest free disk)
    "test_companion_cuda": "disk-heavy", "test_recipe_image": "disk-heavy",
    "test_container_build": "disk-heavy",
}  # fmt: skip


def _module_of(nodeid: str) -> str:
    return nodeid.split("::", maxsplit=1)[0].rsplit("/", 1)[-1].removesuffix(".py")


def unit_of(nodeid: str) -> str:
    """The unit of work (module, or its shared group) of a test id."""
    return MODULE_GROUPS.get(_module_of(nodeid), _module_of(nodeid))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heaviest unit first, the order within a unit and among equals kept."""
    modules: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    for n, item in enumerate(items):
        modules.setdefault(unit_of(item.nodeid), set()).add(_module_of(item.nodeid))
        first.setdefault(unit_of(item.nodeid), n)
    weight = {u: sum(MODULE_SECONDS.get(m, 0) for m in ms) for u, ms in modules.items()}
    rank = {item.nodeid: n for n, item in enumerate(items)}
    items.sort(key=lambda i: (-weight[unit_of(i.nodeid)], first[unit_of(i.nodeid)], rank[i.nodeid]))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's scope scheduler (a unit runs whole on one worker, units in collection order with
    `--no-loadscope-reorder`), its scope being :func:`unit_of`."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return UnitScheduling(config, log)
