"""``probe_host``: every probe at once, in threads, gathered into one :class:`HostFacts`.
A probe that fails in a way nobody foresaw becomes a warning too: probing never crashes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from torchsmith.host import libs
from torchsmith.host.compilers import probe_compilers
from torchsmith.host.cuda import probe_toolkits, site_packages_dirs
from torchsmith.host.gpus import probe_gpu_report, to_gpu_infos
from torchsmith.host.model import CudaToolkit, HostFacts
from torchsmith.host.parse_gpu import GpuReport
from torchsmith.host.pythons import probe_pythons
from torchsmith.host.system import SystemFacts, probe_system
from torchsmith.host.tools import probe_tools
from torchsmith.host.version_cache import CachingRunner, VersionCache
from torchsmith.runner import Runner

T = TypeVar("T")


class _Gather:
    """Runs probes in a thread pool; a probe's unexpected exception becomes a warning."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.warnings: list[str] = []

    def submit(self, func: Callable[..., T], *args: Any) -> Future[T]:
        return self.pool.submit(func, *args)

    def get(self, name: str, future: Future[T], default: T) -> T:
        try:
            return future.result()
        except Exception as exc:  # a probe must never take the others down
            self.warnings.append(f"{name} probe failed: {type(exc).__name__}: {exc}")
            return default


def _libraries(
    env: Mapping[str, str], toolkits: list[CudaToolkit], ldconfig: str
) -> tuple[list[str], list[str]]:
    roots = [Path(t.root) for t in toolkits]
    sites = site_packages_dirs(env)
    cudnn = libs.probe_library(libs.CUDNN, env, roots, sites, ldconfig)
    return cudnn, libs.probe_library(libs.NCCL, env, roots, sites, ldconfig)


def probe_host(
    env: Mapping[str, str], disk_path: Path, runner: Runner, versions: Path | None = None
) -> HostFacts:
    """What this machine has. ``env`` is the environment the build would run with; every
    query command runs through ``runner``. ``versions``: a version cache file
    (:mod:`torchsmith.host.version_cache`) for a runner on this machine: an executable asked
    before, and the same file since, is not started again."""
    if versions is None:
        return _probe(env, disk_path, runner)
    cache = VersionCache.read(versions)
    facts = _probe(env, disk_path, CachingRunner(runner, cache))
    cache.save()
    return facts


def _probe(env: Mapping[str, str], disk_path: Path, runner: Runner) -> HostFacts:
    with ThreadPoolExecutor(max_workers=8) as pool:
        g = _Gather(pool)
        f_system = g.submit(probe_system, env, disk_path, runner)
        f_cc = g.submit(probe_compilers, env, runner)
        f_cuda = g.submit(probe_toolkits, env, runner)
        f_gpus = g.submit(probe_gpu_report, env, runner)
        f_py = g.submit(probe_pythons, env, runner)
        f_tools = g.submit(probe_tools, env, runner)
        f_ld = g.submit(libs.ldconfig_text, env, runner)
        system = g.get("system", f_system, SystemFacts())
        compilers, w_cc = g.get("compilers", f_cc, ([], []))
        toolkits, w_cuda = g.get("cuda", f_cuda, ([], []))
        report = g.get("gpus", f_gpus, GpuReport())
        pythons, w_py = g.get("pythons", f_py, ([], []))
        tools, w_tools = g.get("tools", f_tools, ({}, []))
        ldconfig, w_ld = g.get("ldconfig", f_ld, ("", []))
    cudnn, nccl = g.get("cudnn/nccl", _settled(_libraries, env, toolkits, ldconfig), ([], []))
    gpus, w_gpu = g.get("gpus", _settled(to_gpu_infos, report), ([], []))
    return HostFacts(
        os_id=system.os_id,
        os_version=system.os_version,
        os_codename=system.os_codename,
        machine=system.machine or "unknown",
        glibc=system.glibc,
        cores=system.cores,
        ram_gib=system.ram_gib,
        disk_free_gib=system.disk_free_gib,
        disk_path=str(disk_path.absolute()),
        compilers=compilers,
        cuda_toolkits=toolkits,
        cudnn_versions=cudnn,
        nccl_versions=nccl,
        gpus=gpus,
        driver_version=report.driver_version,
        driver_cuda=report.driver_cuda,
        pythons=pythons,
        tools=tools,
        warnings=[*system.warnings, *w_cc, *w_cuda, *w_gpu, *w_py, *w_tools, *w_ld, *g.warnings],
    )


def _settled(func: Callable[..., T], *args: Any) -> Future[T]:
    """Run ``func`` now and wrap its outcome in a finished future (for :meth:`_Gather.get`)."""
    future: Future[T] = Future()
    try:
        future.set_result(func(*args))
    except Exception as exc:
        future.set_exception(exc)
    return future
