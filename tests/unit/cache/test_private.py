"""sccache's server socket and the sccache-dist client config live in a private 0700 directory
of the build, never at a name another local user can compute or in a shared cache directory
(security review f1b4bec, N5: a long cache path fell back to /tmp/torchsmith-sccache-<hash>.sock,
and whoever bound it first received every compile request with the build's environment)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from tests.unit.private_base import private_base_fixture  # noqa: F401 (the fixture)
from torchsmith.cache import CachePlan, cache_from_plan, with_cluster
from torchsmith.cache.private import PREFIX, make_private_dir, remove_private_dir

pytestmark = pytest.mark.usefixtures("private_base")

LONG = "a-shared-team-cache-directory-with-a-rather-long-name-for-compilers/sccache"
TOKEN = "canary-dist-token-5e1f"  # a canary, not a credential


def _cache(root: Path, env: dict[str, str] | None = None, **plan: object):  # type: ignore[no-untyped-def]
    setup = CachePlan(kind="sccache", **plan)  # type: ignore[arg-type]
    return cache_from_plan(setup, root, "/usr/bin/sccache", env or {})


def _private(path: Path) -> bool:
    info = path.lstat()
    return (
        stat.S_ISDIR(info.st_mode)
        and stat.S_IMODE(info.st_mode) == 0o700
        and (info.st_uid == os.geteuid())
    )


def test_a_long_cache_path_gets_no_computable_socket_in_tmp(tmp_path: Path) -> None:
    cache = _cache(tmp_path, local_dir=str(tmp_path / LONG))
    try:
        socket = cache.server_socket
        assert len(str(socket)) < 100 and _private(socket.parent)
        assert socket.parent.name.startswith(PREFIX) and socket.parent != Path("/tmp")
        assert not socket.is_relative_to(tmp_path)
        again = _cache(tmp_path, local_dir=str(tmp_path / LONG))
        assert again.server_socket != socket  # nobody can compute it from the cache dir
        again.release()
    finally:
        cache.release()
    assert not socket.parent.exists()


def test_a_shared_cache_directory_never_holds_the_socket(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    cache = _cache(tmp_path, local_dir=str(shared), shared_dir=True)
    assert not cache.server_socket.is_relative_to(shared)
    assert cache.env()["SCCACHE_SERVER_UDS"] == str(cache.server_socket)
    cache.release()


def test_the_cluster_config_goes_private_and_is_removed(tmp_path: Path) -> None:
    setup = CachePlan(kind="sccache", local_dir=str(tmp_path / "shared"),
                      cluster="https://sched.example:10600", cluster_token_env="T")  # fmt: skip
    cache = with_cluster(cache_from_plan(setup, tmp_path, "/usr/bin/sccache", {}), setup,
                         {"T": TOKEN})  # fmt: skip
    assert cache.dist_conf is not None and cache.private_dir is not None
    assert cache.dist_conf.parent == cache.private_dir and TOKEN in cache.dist_conf.read_text()
    assert not any(TOKEN in p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    cache.release()
    assert not cache.dist_conf.exists() and not cache.private_dir.exists()


def test_the_runtime_dir_is_used_only_when_private(private_base: Path) -> None:
    runtime = Path(tempfile.mkdtemp(dir=private_base))  # 0700, short enough for a socket
    made = make_private_dir({"XDG_RUNTIME_DIR": str(runtime)})
    assert made.parent == runtime and _private(made)
    remove_private_dir(made)
    runtime.chmod(0o755)  # others may enter it: the fallback instead
    made = make_private_dir({"XDG_RUNTIME_DIR": str(runtime)})
    assert made.parent == private_base and _private(made)
    remove_private_dir(made)
    assert not made.exists()
    long = private_base / ("x" * 80)
    long.mkdir(mode=0o700)
    assert make_private_dir({"XDG_RUNTIME_DIR": str(long)}).parent == private_base


def test_only_a_directory_it_made_is_removed(tmp_path: Path) -> None:
    other = tmp_path / "keep"
    other.mkdir()
    remove_private_dir(other)
    remove_private_dir(None)
    assert other.exists()


def test_ccache_needs_no_private_directory(tmp_path: Path) -> None:
    setup = CachePlan(kind="ccache")
    assert cache_from_plan(setup, tmp_path, "/usr/bin/ccache", {}).private_dir is None


def test_a_build_removes_its_private_directory_on_success_and_failure(
    tmp_path: Path, private_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pipeline releases the cache's private directory whatever happens after it is made."""
    from tests.unit.cache.test_dist import DistExecutor
    from tests.unit.steps.test_pipeline import _build, _plan
    from torchsmith.steps import compile as compile_step

    monkeypatch.setattr(
        "tests.unit.steps.test_pipeline.RecordingExecutor", lambda: DistExecutor("")
    )
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    plan = _plan(tmp_path / "ok", targets=("c10",), **{"cache.kind": "sccache"})
    result, _ = _build(tmp_path / "ok", plan)
    assert result.manifest["env"]["SCCACHE_SERVER_UDS"].startswith(str(private_base))
    assert list(private_base.iterdir()) == []

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("compile failed")

    monkeypatch.setattr(compile_step, "compile_targets", broken)
    with pytest.raises(RuntimeError):
        _build(tmp_path / "bad", _plan(tmp_path / "bad", targets=("c10",),
                                       **{"cache.kind": "sccache"}))  # fmt: skip
    assert list(private_base.iterdir()) == []
