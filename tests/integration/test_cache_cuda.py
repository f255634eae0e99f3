"""CUDA objects go through the shared compiler cache too: nvcc under the launcher, with the
environment torchsmith's cache section gives the build (CMAKE_CUDA_COMPILER_LAUNCHER, ccache
with a Redis remote), from two separate local caches. The toolkit is Debian's CUDA 11.8
(provisioned once into the test cache; shared with test_toolchain_apt_cuda118), its host
compiler gcc-11. The second compile is a remote hit and gives the same object, byte for byte.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import test_cache as cache_dir
from tests.integration.test_cache_shared import PASSWORD, Server, free_port, start, stop
from tests.resources import require_tool
from torchsmith.cache import CachePlan, CacheStats, CompilerCache, cache_from_plan
from torchsmith.host.model import HostFacts, Tool
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext, ToolkitRecord
from torchsmith.toolchains.cuda.apt import AptProvider

pytestmark = [pytest.mark.slow, pytest.mark.network]
KERNEL = "__global__ void add_one(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1; }\n"
TOOLS = {n: Tool(name=n, path=f"/usr/bin/{n}") for n in ("apt-get", "dpkg")}


@pytest.fixture(scope="module")
def toolkit() -> ToolkitRecord:
    root = cache_dir() / "toolchains"
    log = root / "apt-11.8.log"
    ctx = ProvideContext(runner=HOST, cache_root=root, env=dict(os.environ), log_path=log)
    return AptProvider().provide("11.8", HostFacts(tools=TOOLS), ctx)


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    exe = require_tool("redis-server", "scripts/setup-system-deps (Debian's redis-server)")
    port, root = free_port(), tmp_path_factory.mktemp("redis-cuda")
    conf = root / "redis.conf"
    conf.write_text(f'port {port}\nbind 127.0.0.1\nsave ""\nappendonly no\ndir {root}\n'
                    f"requirepass {PASSWORD}\n")  # fmt: skip
    conf.chmod(0o600)
    server = start([exe, str(conf)], port, f"redis://127.0.0.1:{port}", "redis", root / "log")
    yield server
    stop(server)


def _compile(cache: CompilerCache, nvcc: str, src: Path, out: Path) -> None:
    env = {**os.environ, **cache.env(), **cache.secret_env()}
    argv = [env["CMAKE_CUDA_COMPILER_LAUNCHER"], nvcc, "-ccbin", "g++-11"]
    argv += ["-gencode=arch=compute_86,code=sm_86", "-c", str(src), "-o", str(out)]
    subprocess.run(argv, env=env, check=True, cwd=src.parent)


def _stats(cache: CompilerCache) -> CacheStats:
    command = cache.stats_command()
    assert command is not None
    done = subprocess.run(command, env={**os.environ, **cache.env()}, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return cache.parse_stats(done.stdout)


def test_a_cuda_object_is_a_remote_hit_in_a_second_workspace(
    toolkit: ToolkitRecord, redis: Server, tmp_path: Path
) -> None:
    ccache = require_tool("ccache")
    require_tool("g++-11", "scripts/setup-system-deps (g++-11: CUDA 11.8 takes gcc <= 11)")
    setup = CachePlan(kind="ccache", remote=redis.url, remote_kind="redis",
                      credentials_env="REDIS_PW")  # fmt: skip
    objects = []
    for name in ("a", "b"):
        root = tmp_path / name
        (root / "src").mkdir(parents=True)
        src = root / "src" / "k.cu"
        src.write_text(KERNEL)
        cache = cache_from_plan(setup, root, ccache, {"REDIS_PW": PASSWORD})
        assert cache.env()["CMAKE_CUDA_COMPILER_LAUNCHER"] == ccache
        _compile(cache, toolkit.nvcc, src, root / "k.o")
        objects.append((root / "k.o").read_bytes())
        stats = _stats(cache)
    assert objects[0] == objects[1]
    assert stats.remote_hits == 1 and stats.misses == 0, stats
