"""Parallel jobs from RAM and cores, and the disk a build needs.

Upstream's default is one job per core, which runs out of memory on small machines: C++ jobs of
torch_cpu peak at about 1.7 GB RSS (measured: docs/debian-source-builds.md §1.6), nvcc jobs of
ATen CUDA kernels at several GB. We budget 2 GiB per C++ job and 4 GiB per nvcc job.
"""

from __future__ import annotations

from torchsmith.plan_model import Decision
from torchsmith.planner.context import Ctx, decide

GIB_PER_CXX_JOB = 2.0
GIB_PER_NVCC_JOB = 4.0
# Build-tree sizes. CPU: 1.13.1 Debian build/ = 0.59 GB (measured,
# docs/debian-source-builds.md §1.7); a full git checkout with submodules and its build is
# ~10 GB. CUDA: + ~1.5 GB of objects per arch.
DISK_SOURCE_GIT_GB = 3.0
DISK_BUILD_CPU_GB = 8.0
DISK_PER_ARCH_GB = 1.5
DISK_CUDA_BASE_GB = 12.0


def _jobs(ctx: Ctx, per_job: float, what: str) -> Decision[int]:
    if ctx.spec.max_jobs is not None:
        return ctx.user("max_jobs", ctx.spec.max_jobs)
    cores = max(1, ctx.host.cores)
    by_ram = int(ctx.host.ram_gib // per_job) if ctx.host.ram_gib else cores
    jobs = max(1, min(cores, by_ram))
    limit = "RAM" if by_ram < cores else "cores"
    return decide(
        jobs,
        "host",
        f"{cores} cores, {ctx.host.ram_gib:.0f} GiB RAM at {per_job:g} GiB per {what} job: "
        f"limited by {limit}",
    )


def resolve_jobs(ctx: Ctx, cuda: str | None) -> tuple[Decision[int], Decision[int]]:
    cxx = _jobs(ctx, GIB_PER_CXX_JOB, "C++")
    if cuda is None:
        return cxx, decide(0, "default", "CPU build: no nvcc jobs")
    return cxx, _jobs(ctx, GIB_PER_NVCC_JOB, "nvcc")


# A partial build (--target): the unpacked tree, its configure and code generation, a few
# objects; for CUDA the toolkit in the cache root. Measured 2026-11-25, seed 004's partial build
# (Debian's 1.13.1, c10_cuda + one ATen kernel for sm_86 + sm_90, CUDA 11.8 from Debian, pruned):
# workspace 0.29 GB, sources 0.19 GB, toolkit 0.39 GB. The estimate leaves room for larger target
# sets and for toolkits that are not pruned (a runfile install is several GB).
DISK_PARTIAL_GB = 3.0
DISK_PARTIAL_CUDA_GB = 5.0


def _whole_build_gb(ctx: Ctx, cuda: str | None, n_archs: int) -> float:
    need = DISK_BUILD_CPU_GB + (0 if ctx.spec.source == "debian" else DISK_SOURCE_GIT_GB)
    if cuda is not None:
        need += DISK_CUDA_BASE_GB + DISK_PER_ARCH_GB * max(1, n_archs)
    return need


def _partial_build_gb(ctx: Ctx, cuda: str | None) -> float:
    need = DISK_PARTIAL_GB + (0 if ctx.spec.source == "debian" else DISK_SOURCE_GIT_GB)
    return need + (DISK_PARTIAL_CUDA_GB if cuda is not None else 0.0)


def resolve_disk(ctx: Ctx, cuda: str | None, n_archs: int) -> Decision[float]:
    partial = bool(ctx.spec.targets)
    need = _partial_build_gb(ctx, cuda) if partial else _whole_build_gb(ctx, cuda, n_archs)
    reason = (
        f"estimate for a {'partial ' if partial else ''}{'CUDA' if cuda else 'CPU'} build"
        f"{' (only the --target CMake targets)' if partial else ''}"
    )
    if ctx.host.disk_free_gib and ctx.host.disk_free_gib < need:
        ctx.warnings.append(
            f"the build needs about {need:.0f} GB; {ctx.host.disk_free_gib:.0f} GB free at "
            f"{ctx.host.disk_path}: free space or use another --cache-root"
        )
    return decide(round(need, 1), "kb", reason)


# Companions built --against a torch (measured 2026-11-25, torch 2.6.0+cu124 cp311: the build
# env and the smoke venv with torch and its nvidia-* wheels 11 GB together; CUDA 12.4 from
# Debian, unpacked and pruned, 1.8 GB; a companion's source and build 0.1-0.5 GB).
DISK_VENV_CUDA_TORCH_GB = 5.5
DISK_VENV_CPU_TORCH_GB = 1.5
DISK_COMPANION_TOOLKIT_GB = 2.5
DISK_PER_COMPANION_GB = 1.0


def resolve_companion_disk(
    ctx: Ctx, torch_cuda: str | None, kind: str, cuda: str | None, companions: int
) -> Decision[float]:
    """The disk companions built against a given torch need: two venvs holding that torch (none
    for an interpreter's torch, seen through a .pth), the toolkit, each companion's tree."""
    venvs = 0 if kind == "python" else 2
    need = venvs * (DISK_VENV_CUDA_TORCH_GB if torch_cuda else DISK_VENV_CPU_TORCH_GB)
    need += (DISK_COMPANION_TOOLKIT_GB if cuda else 0.0) + DISK_PER_COMPANION_GB * companions
    reason = (
        f"estimate for {companions} companion(s): {venvs} venvs with the torch"
        f"{' and its nvidia-* wheels' if torch_cuda else ''}"
        f"{', the CUDA toolkit' if cuda else ''}, sources and builds"
    )
    if ctx.host.disk_free_gib and ctx.host.disk_free_gib < need:
        ctx.warnings.append(
            f"the companions need about {need:.0f} GB; {ctx.host.disk_free_gib:.0f} GB free at "
            f"{ctx.host.disk_path}: free space or use another --cache-root"
        )
    return decide(round(need, 1), "kb", reason)


def jobs_after_oom(failed_jobs: int) -> int:
    """The parallel jobs to retry with after a compiler was killed for memory at
    ``failed_jobs``: the memory left could not carry that many jobs of this size, so half as
    many (each job's need does not shrink; the fewer jobs, the more each may take)."""
    return max(1, failed_jobs // 2)
