"""``probe_host``: every probe at once, in threads, gathered into one :class:`HostFacts`.
A probe that fails in a way nobody foresaw becomes a warning too: probing never crashes.
``sections`` (:mod:`torchsmith.host.scope`) leaves out what the asking command does not read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from torchsmith.host._run import Task
from torchsmith.host.compilers import probe_compilers
from torchsmith.host.cuda import probe_toolkits, site_packages_dirs
from torchsmith.host.gpus import probe_gpu_report, to_gpu_infos
from torchsmith.host.model import CudaToolkit, HostFacts, Tool
from torchsmith.host.parse_gpu import GpuReport
from torchsmith.host.pythons import probe_pythons
from torchsmith.host.scope import EVERYTHING, Section, left_out
from torchsmith.host.system import SystemFacts, probe_system
from torchsmith.host.version_cache import CachingRunner, VersionCache
from torchsmith.runner import Runner

T = TypeVar("T")


class _Gather:
    """Runs probes in threads; a probe's unexpected exception becomes a warning."""

    def __init__(self, sections: frozenset[Section]) -> None:
        self.sections = sections
        self.warnings: list[str] = []

    def start(self, section: Section, func: Callable[..., T], *args: Any) -> Task[T] | None:
        """``func(*args)`` in a thread when ``section`` is probed; None (nothing runs) if not."""
        return Task(func, *args) if section in self.sections else None

    def get(self, name: str, task: Task[T] | None, default: T) -> T:
        """The probe's result; ``default`` for a probe not started or one that failed."""
        if task is None:
            return default
        try:
            return task.result()
        except Exception as exc:  # a probe must never take the others down
            self.warnings.append(f"{name} probe failed: {type(exc).__name__}: {exc}")
            return default


def _tools(env: Mapping[str, str], runner: Runner) -> tuple[dict[str, Tool], list[str]]:
    from torchsmith.host.tools import probe_tools  # only where the command reads the tools

    return probe_tools(env, runner)


def _ldconfig(env: Mapping[str, str], runner: Runner) -> tuple[str, list[str]]:
    from torchsmith.host import libs  # only where the command reads cuDNN/NCCL

    return libs.ldconfig_text(env, runner)


def _libraries(
    env: Mapping[str, str], toolkits: list[CudaToolkit], ldconfig: str
) -> tuple[list[str], list[str]]:
    from torchsmith.host import libs

    roots = [Path(t.root) for t in toolkits]
    sites = site_packages_dirs(env)
    cudnn = libs.probe_library(libs.CUDNN, env, roots, sites, ldconfig)
    return cudnn, libs.probe_library(libs.NCCL, env, roots, sites, ldconfig)


def probe_host(
    env: Mapping[str, str],
    disk_path: Path,
    runner: Runner,
    versions: Path | None = None,
    *,
    sections: frozenset[Section] = EVERYTHING,
) -> HostFacts:
    """What this machine has. ``env`` is the environment the build would run with; every
    query command runs through ``runner``. ``versions``: a version cache file
    (:mod:`torchsmith.host.version_cache`) for a runner on this machine: an executable asked
    before, and the same file since, is not started again. ``sections``: the parts probed
    besides the system's (:mod:`torchsmith.host.scope`); the others stay empty, and the
    facts' warnings name them. ``libraries`` looks in the toolkits ``cuda`` finds."""
    if versions is None:
        return _probe(env, disk_path, runner, sections)
    cache = VersionCache.read(versions)
    facts = _probe(env, disk_path, CachingRunner(runner, cache), sections)
    cache.save()
    return facts


def _probe(
    env: Mapping[str, str], disk_path: Path, runner: Runner, sections: frozenset[Section]
) -> HostFacts:
    g = _Gather(sections)
    f_system = Task(probe_system, env, disk_path, runner)
    f_cc = g.start("compilers", probe_compilers, env, runner)
    f_cuda = g.start("cuda", probe_toolkits, env, runner)
    f_gpus = g.start("gpus", probe_gpu_report, env, runner)
    f_py = g.start("pythons", probe_pythons, env, runner)
    f_tools = g.start("tools", _tools, env, runner)
    f_ld = g.start("libraries", _ldconfig, env, runner)
    system = g.get("system", f_system, SystemFacts())
    compilers, w_cc = g.get("compilers", f_cc, ([], []))
    toolkits, w_cuda = g.get("cuda", f_cuda, ([], []))
    report = g.get("gpus", f_gpus, GpuReport())
    pythons, w_py = g.get("pythons", f_py, ([], []))
    tools, w_tools = g.get("tools", f_tools, ({}, []))
    ldconfig, w_ld = g.get("ldconfig", f_ld, ("", []))
    libraries = None
    if "libraries" in sections:
        libraries = Task(_libraries, env, toolkits, ldconfig, now=True)
    cudnn, nccl = g.get("cudnn/nccl", libraries, ([], []))
    gpus, w_gpu = g.get("gpus", Task(to_gpu_infos, report, now=True), ([], []))
    warned = [*system.warnings, *w_cc, *w_cuda, *w_gpu, *w_py, *w_tools, *w_ld, *g.warnings]
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
        warnings=[*warned, *left_out(sections)],
    )
