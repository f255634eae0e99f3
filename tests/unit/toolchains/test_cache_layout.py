"""Toolkit cache safety, toolkit-root layout helpers and the pipeline glue (no processes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchsmith.errors import HostError, PlanError
from torchsmith.host.model import HostFacts
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext, ToolkitRecord
from torchsmith.toolchains.cuda.cache import (
    INFO_FILE,
    building,
    entry_dir,
    load_record,
    save_record,
)
from torchsmith.toolchains.cuda.debian_layout import MULTIARCH, prune_static
from torchsmith.toolchains.cuda.layout import ensure_lib64, link_unversioned, missing_parts
from torchsmith.toolchains.provision import provider_named, provision_toolkit, toolkit_build_env


def _record(root: Path) -> ToolkitRecord:
    return ToolkitRecord(
        provider="pypi",
        cuda="13.0",
        version="13.0.88",
        root=str(root),
        nvcc=str(root / "bin" / "nvcc"),
        origin="test",
    )


def test_cache_entry_is_made_atomically_and_reused(tmp_path: Path) -> None:
    entry = entry_dir(tmp_path, "pypi", "13.0")
    with building(entry) as staging:
        _toolkit_root(staging / "root")
        save_record(staging, _record(entry / "root"))
        assert not entry.exists()
    assert load_record(entry) == _record(entry / "root")
    assert not list(tmp_path.glob("cuda/*.partial-*"))


def _toolkit_root(root: Path) -> None:
    for part in ("bin/nvcc", "include/cuda_runtime.h", "nvvm/libdevice/libdevice.10.bc"):
        (root / part).parent.mkdir(parents=True, exist_ok=True)
        (root / part).write_text("")


def test_an_entry_whose_links_do_not_resolve_here_is_a_miss(tmp_path: Path) -> None:
    """The apt provider's install route inside a container links include/ into that
    container's /usr: on another machine nvcc is there but the headers are not."""
    entry = entry_dir(tmp_path, "apt", "11.8")
    _toolkit_root(entry / "root")
    save_record(entry, _record(entry / "root"))
    assert load_record(entry) is not None
    (entry / "root" / "include" / "cuda_runtime.h").unlink()
    (entry / "root" / "include").rmdir()
    (entry / "root" / "include").symlink_to(tmp_path / "container-usr-include")
    assert load_record(entry) is None


def test_cache_never_replaces_a_directory_it_did_not_make(tmp_path: Path) -> None:
    entry = entry_dir(tmp_path, "apt", "11.8")
    entry.mkdir(parents=True)
    (entry / "precious").write_text("x")
    with pytest.raises(HostError, match="not made by torchsmith"), building(entry):
        pass
    assert (entry / "precious").is_file()


def test_broken_or_stale_info_is_a_miss(tmp_path: Path) -> None:
    entry = tmp_path / "e"
    entry.mkdir()
    (entry / INFO_FILE).write_text("{not json")
    assert load_record(entry) is None
    save_record(entry, _record(tmp_path / "gone"))  # its nvcc does not exist
    assert load_record(entry) is None


def test_failed_build_leaves_nothing(tmp_path: Path) -> None:
    entry = entry_dir(tmp_path, "pypi", "13.0")
    with pytest.raises(RuntimeError), building(entry):
        raise RuntimeError("download failed")
    assert [p.name for p in entry.parent.iterdir()] == [".lock"]  # the lock file only


def test_staging_of_a_live_run_survives_and_of_a_dead_one_goes(tmp_path: Path) -> None:
    entry = entry_dir(tmp_path, "pypi", "13.0")
    entry.parent.mkdir(parents=True)
    live = entry.with_name(f".{entry.name}.partial-{os.getppid()}-abc")
    dead = entry.with_name(f".{entry.name}.partial-{2**22 + 7}-abc")
    user = entry.with_name(f"{entry.name}.partial-mine")
    for path in (live, dead, user):
        path.mkdir()
    with building(entry) as staging:
        assert staging.name.startswith(f".{entry.name}.partial-{os.getpid()}-")
        (staging / "bin").mkdir()
    assert live.is_dir() and user.is_dir() and not dead.exists()
    assert (entry / "bin").is_dir()


def test_lib64_and_unversioned_links(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in (
        "libcudart.so.13",
        "libnvvm.so.4",
        "libcublas.so.13.1.1",
        "libcublas.so.13",
        "libfoo.a",
    ):
        (lib / name).write_text("")
    ensure_lib64(tmp_path)
    lib64 = tmp_path / "lib64"
    assert lib64.is_symlink()
    assert (lib64 / "libcudart.so").resolve() == (lib / "libcudart.so.13").resolve()
    assert (lib64 / "libcublas.so").is_symlink()
    assert link_unversioned(lib64) == []  # idempotent
    assert missing_parts(tmp_path) == ["bin/nvcc", "include/cuda_runtime.h", "nvvm/libdevice"]


def test_pipeline_glue(tmp_path: Path) -> None:
    ctx = ProvideContext(cache_root=tmp_path, env={}, runner=HOST)
    assert provision_toolkit(None, None, HostFacts(), ctx) is None
    with pytest.raises(PlanError, match="container backend"):
        provider_named("container")
    env = toolkit_build_env(_record(tmp_path / "r"), {"PATH": "/usr/bin", "HOME": "/h"})
    assert env["PATH"] == f"{tmp_path / 'r' / 'bin'}:/usr/bin"
    assert env["CUDA_HOME"] == env["CUDA_TOOLKIT_ROOT_DIR"] == str(tmp_path / "r")
    assert env["CUDACXX"] == str(tmp_path / "r" / "bin" / "nvcc")
    assert env["HOME"] == "/h"
    assert toolkit_build_env(None, {"A": "1"}) == {"A": "1"}


def test_recorded_toolkit_records_still_parse() -> None:
    fixtures = Path(__file__).parents[2] / "fixtures" / "toolchains"
    pypi = ToolkitRecord.model_validate_json(
        (fixtures / "pypi-13.0-torchsmith-toolkit.json").read_text()
    )
    assert (pypi.provider, pypi.version) == ("pypi", "13.0.88")
    assert {p.name: p.version for p in pypi.packages}["nvidia-cuda-nvcc"] == "13.0.88"
    apt = ToolkitRecord.model_validate_json(
        (fixtures / "seed004" / "apt-11.8-torchsmith-toolkit.json").read_text()
    )
    assert (apt.provider, apt.version, len(apt.packages)) == ("apt", "11.8.89", 22)
    assert all(len(p.sha256) == 64 for p in apt.packages)


def test_static_archives_pruned_but_runtime_kept(tmp_path: Path) -> None:
    libdir = tmp_path / MULTIARCH
    libdir.mkdir(parents=True)
    for name in (
        "libcublas_static.a",
        "libcufft_static_nocallback.a",
        "libcudart_static.a",
        "libcudadevrt.a",
        "libculibos.a",
        "libcublas.so.11",
    ):
        (libdir / name).write_bytes(b"x" * 10)
    assert prune_static(tmp_path) == 20
    assert sorted(p.name for p in libdir.iterdir()) == [
        "libcublas.so.11",
        "libcudadevrt.a",
        "libcudart_static.a",
        "libculibos.a",
    ]


def test_a_run_that_waited_for_the_lock_uses_the_toolkit_the_holder_made(tmp_path: Path) -> None:
    """Two builds (or two test workers) provisioning one toolkit: the second waits for the
    cache's lock, then finds the first one's entry and makes nothing (issue 23)."""
    import threading

    from torchsmith import lock
    from torchsmith.toolchains.cuda.cache import LOCK_WHAT, provide_cached

    entry = entry_dir(tmp_path, "pypi", "13.0")
    made: list[Path] = []

    def make(staging: Path) -> ToolkitRecord:
        made.append(staging)
        _toolkit_root(staging / "root")
        return _record(entry / "root")

    found: list[ToolkitRecord] = []
    with lock.acquire(entry.parent, LOCK_WHAT, 1.0):  # the first run, provisioning
        waiter = threading.Thread(target=lambda: found.append(provide_cached(entry, make)))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive()  # waiting for the lock, not failing
        _toolkit_root(entry / "root")
        save_record(entry, _record(entry / "root"))
    waiter.join(10)
    assert found == [_record(entry / "root")] and made == []
    assert provide_cached(entry_dir(tmp_path, "pypi", "12.9"), make) is not None and made
