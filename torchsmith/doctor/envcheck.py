"""Is this machine able to build and run what it was asked? Pure checks over small fact records.

Each ``check_*`` function takes facts (:class:`EnvFacts`, probed by
:mod:`torchsmith.doctor.envprobe` or built directly in tests) and returns the problems it sees.
:func:`check_all` runs them all. Thresholds that are torchsmith's own policy (disk, RAM per job)
are parameters with documented defaults, not claims about PyTorch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Literal

from packaging.version import InvalidVersion, Version

from torchsmith.doctor.envfacts import (
    EnvFacts,
    EnvProblem,
    ExtensionImport,
    ImportedTorch,
    PythonFacts,
    TorchInstall,
)
from torchsmith.errors import TorchsmithError
from torchsmith.host.model import CudaToolkit
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import CudaRelease

NOTES = "repo:docs/debian-source-builds.md"
CUDA_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/"
GIB_PER_JOB = 2.0  # notes: the largest compiler process of a torch 1.13 CPU build had 1.7 GB RSS
DISK_ERROR_GIB, DISK_WARN_GIB = 10.0, 30.0  # torchsmith policy
__all__ = [  # the fact records live in envfacts; importers of envcheck keep working
    "EnvFacts",
    "EnvProblem",
    "ExtensionImport",
    "ImportedTorch",
    "PythonFacts",
    "TorchInstall",
]


def _ver(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _major_minor(text: str) -> str:
    return ".".join(text.split(".")[:2])


# -- driver and CUDA runtime -------------------------------------------------------------------
def check_driver(facts: EnvFacts) -> list[EnvProblem]:
    """The driver must support the CUDA the build uses (else error 35 / error 804 at run time)."""
    host = facts.host
    wanted = facts.target_cuda or (host.cuda_toolkits[0].version if host.cuda_toolkits else None)
    driver, cuda = _ver(host.driver_cuda), _ver(wanted)
    if driver is None or cuda is None or cuda <= driver:
        return []
    evidence = (f"driver {host.driver_version} supports CUDA up to {host.driver_cuda}",)
    if cuda.major > driver.major:
        return [
            EnvProblem(
                id="driver-too-old",
                severity="error",
                what=f"the NVIDIA driver supports CUDA {host.driver_cuda}, the build uses {wanted}",
                fix=f"upgrade the driver to one for CUDA {wanted}, or build with CUDA "
                f"{_major_minor(str(driver))} or older",
                evidence=evidence,
                source=CUDA_COMPAT,
            )
        ]
    return [
        EnvProblem(
            id="driver-minor-version-compat",
            severity="warning",
            what=f"CUDA {wanted} is newer than the driver's {host.driver_cuda}: it runs only "
            "through minor-version compatibility (no PTX JIT for the newer toolkit)",
            fix="upgrade the driver, or keep real SASS for every GPU in TORCH_CUDA_ARCH_LIST",
            evidence=evidence,
            source=CUDA_COMPAT,
        )
    ]


# -- nvcc and the host compiler ----------------------------------------------------------------
UNKNOWN_CUDA = "cuda-not-in-kb"
_UNKNOWN_FIX = {
    "the host compiler": "check nvcc's host_config.h for the newest GCC it accepts",
    "the GPU architectures": "see `nvcc --list-gpu-arch` for the architectures it compiles for",
}


def _build_cuda(facts: EnvFacts) -> tuple[str, CudaToolkit | None] | None:
    """The CUDA the build uses — the target when given (with this host's toolkit of that
    version, if any), else the first toolkit found — as check_driver reads it."""
    toolkits = facts.host.cuda_toolkits
    if facts.target_cuda:
        want = _major_minor(facts.target_cuda)
        return facts.target_cuda, next(
            (t for t in toolkits if _major_minor(t.version) == want), None
        )
    return (toolkits[0].version, toolkits[0]) if toolkits else None


def _lookup(kb: KnowledgeBase, version: str) -> CudaRelease | TorchsmithError:
    try:
        return kb.cuda(_major_minor(version))
    except TorchsmithError as exc:
        return exc


def check_host_compiler(facts: EnvFacts, kb: KnowledgeBase) -> list[EnvProblem]:
    """nvcc refuses a GCC newer than its release supports ('unsupported GNU version'). With a
    plan, its compiler is the one checked (a missing one is plancheck's to say)."""
    gccs = [c for c in facts.host.compilers if c.family == "gcc"]
    if facts.compiler:
        gccs = [c for c in gccs if c.label == facts.compiler]
    cuda = _build_cuda(facts)
    if cuda is None or not gccs:
        return []
    (version, toolkit), gcc = cuda, gccs[0]
    release = _lookup(kb, version)
    if isinstance(release, TorchsmithError):
        return [_unknown_cuda(version, release, ("the host compiler",))]
    gcc_max = release.gcc_max
    if gcc.major <= gcc_max:
        return []
    fitting = [c for c in gccs if c.major <= gcc_max]
    fix = (
        f"use {fitting[0].label} ({fitting[0].cxx or fitting[0].cc}) as CC/CXX/CUDAHOSTCXX"
        if fitting
        else f"install gcc-{gcc_max} or older, or use a newer CUDA toolkit"
    )
    nvcc = f"nvcc {toolkit.nvcc}" if toolkit else f"target CUDA {version} (no nvcc of it here)"
    return [
        EnvProblem(
            id="nvcc-host-gcc-too-new",
            severity="error",
            what=f"CUDA {version} accepts GCC up to {gcc_max}; the "
            f"{'plan' if facts.compiler else 'default'} compiler is GCC {gcc.version} ({gcc.cc})",
            fix=fix,
            evidence=(nvcc, f"gcc {gcc.cc} {gcc.version}"),
            source=release.sources.get("gcc_max") or release.sources.get("*", ""),
        )
    ]


def check_gpu_archs(facts: EnvFacts, kb: KnowledgeBase) -> list[EnvProblem]:
    """The toolkit must be able to compile for every GPU here ('Unsupported gpu architecture'
    when it is too new for the toolkit, 'no kernel image' at run time when left out)."""
    cuda = _build_cuda(facts)
    if cuda is None or not facts.host.gpus:
        return []
    version = cuda[0]
    release = _lookup(kb, version)
    if isinstance(release, TorchsmithError):
        return [_unknown_cuda(version, release, ("the GPU architectures",))]
    missing = [g for g in facts.host.gpus if g.compute_capability not in release.archs]
    if not missing:
        return []
    return [
        EnvProblem(
            id="gpu-arch-not-in-toolkit",
            severity="error",
            what=f"CUDA {version} cannot compile for "
            + ", ".join(f"{g.name} (sm_{g.compute_capability.replace('.', '')})" for g in missing),
            fix="use a CUDA toolkit that lists these compute capabilities "
            "(`torchsmith kb cuda <ver>`), or leave these GPUs out of the build",
            evidence=(f"CUDA {release.version} archs: {', '.join(release.archs)}",),
            source=release.sources.get("archs") or release.sources.get("*", ""),
        )
    ]


def _unknown_cuda(version: str, exc: TorchsmithError, subjects: tuple[str, ...]) -> EnvProblem:
    return EnvProblem(
        id=UNKNOWN_CUDA,
        severity="warning",
        what=f"cannot check {' or '.join(subjects)} against CUDA {version}: {exc.message}",
        fix="; ".join(_UNKNOWN_FIX[s] for s in subjects),
    )


def check_kb(facts: EnvFacts, kb: KnowledgeBase) -> list[EnvProblem]:
    """The checks that need the knowledge base; a CUDA it does not know is said once."""
    found = check_host_compiler(facts, kb) + check_gpu_archs(facts, kb)
    cuda = _build_cuda(facts)
    if cuda is None or sum(p.id == UNKNOWN_CUDA for p in found) < 2:
        return found
    exc = _lookup(kb, cuda[0])
    if not isinstance(exc, TorchsmithError):  # pragma: no cover - both looked it up
        return found
    rest = [p for p in found if p.id != UNKNOWN_CUDA]
    return [_unknown_cuda(cuda[0], exc, tuple(_UNKNOWN_FIX)), *rest]


# -- resources ---------------------------------------------------------------------------------
def check_ram_per_job(facts: EnvFacts, gib_per_job: float = GIB_PER_JOB) -> list[EnvProblem]:
    """Too many parallel compile jobs for the RAM gets compilers OOM-killed."""
    host = facts.host
    jobs = facts.max_jobs or host.cores
    if host.ram_gib <= 0 or jobs <= 0 or host.ram_gib / jobs >= gib_per_job:
        return []
    safe = max(1, int(host.ram_gib // gib_per_job))
    return [
        EnvProblem(
            id="ram-per-job",
            severity="warning",
            what=f"{host.ram_gib:.1f} GiB RAM for {jobs} parallel jobs is "
            f"{host.ram_gib / jobs:.1f} GiB per job (want {gib_per_job:g})",
            fix=f"MAX_JOBS={safe}",
            evidence=(f"cores {host.cores}", f"MAX_JOBS {facts.max_jobs or 'unset'}"),
            source=NOTES,
        )
    ]


def check_disk(
    facts: EnvFacts, error_gib: float = DISK_ERROR_GIB, warn_gib: float = DISK_WARN_GIB
) -> list[EnvProblem]:
    """A build that runs out of disk fails hours in ('No space left on device')."""
    host = facts.host
    if host.disk_free_gib >= warn_gib or not facts.disk_path_creatable:
        return []  # a directory that cannot be made is check_disk_path's to say
    severity: Literal["error", "warning"] = "error" if host.disk_free_gib < error_gib else "warning"
    return [
        EnvProblem(
            id="disk-free",
            severity=severity,
            what=f"{host.disk_free_gib:.1f} GiB free at {host.disk_path}",
            fix=f"free space or build on a disk with at least {warn_gib:g} GiB free",
            source=NOTES,
        )
    ]


def check_disk_path(facts: EnvFacts) -> list[EnvProblem]:
    """A build directory that does not exist is measured at its nearest parent; say so, and
    make it an error when it cannot be made at all (/proc/..., a read-only parent)."""
    if facts.disk_path_problem is None:
        return []
    severity: Literal["error", "warning"] = "warning" if facts.disk_path_creatable else "error"
    return [
        EnvProblem(
            id="disk-path",
            severity=severity,
            what=f"{facts.host.disk_path}: {facts.disk_path_problem}",
            fix="give --disk (or --cache-root) a directory you can write, on a disk with room",
            source=NOTES,
        )
    ]


# -- several CUDA installs ---------------------------------------------------------------------
_CUDA_ROOT = re.compile(r"^(?P<root>.*/cuda(?:-[\d.]+)?)(?:/(?:bin|lib64|lib|targets/\S*))?/?$")


def cuda_roots(entries: Iterable[str], realpaths: dict[str, str]) -> list[str]:
    """The distinct CUDA install roots named by PATH or LD_LIBRARY_PATH entries, in order."""
    roots: list[str] = []
    for entry in entries:
        match = _CUDA_ROOT.match(realpaths.get(entry, entry))
        if match and match.group("root") not in roots:
            roots.append(match.group("root"))
    return roots


def check_cuda_paths(facts: EnvFacts) -> list[EnvProblem]:
    """PATH, LD_LIBRARY_PATH and CUDA_HOME should name one CUDA install, not several."""
    bins = cuda_roots(facts.path, facts.realpaths)
    libs = cuda_roots(facts.ld_library_path, facts.realpaths)
    home = cuda_roots([facts.cuda_home] if facts.cuda_home else [], facts.realpaths)
    roots = list(dict.fromkeys(bins + libs + home))
    if len(roots) <= 1:
        return []
    return [
        EnvProblem(
            id="several-cuda-installs",
            severity="warning",
            what=f"{len(roots)} CUDA installs are named: nvcc, headers and libraries may come "
            "from different versions",
            fix="keep one CUDA in PATH, LD_LIBRARY_PATH and CUDA_HOME (torchsmith sets them "
            "from the plan)",
            evidence=tuple(
                f"{name}: {', '.join(r)}"
                for name, r in (("PATH", bins), ("LD_LIBRARY_PATH", libs), ("CUDA_HOME", home))
                if r
            ),
            source="https://github.com/pytorch/functorch/issues/926",
        )
    ]


# -- the Python side ---------------------------------------------------------------------------
def check_torch_installs(facts: EnvFacts) -> list[EnvProblem]:
    """Several torch packages on sys.path: the first shadows the others."""
    py = facts.python
    if py is None or len(py.installs) <= 1:
        return []
    return [
        EnvProblem(
            id="torch-shadowed",
            severity="warning",
            what=f"{len(py.installs)} torch packages are on {py.executable}'s sys.path; only "
            f"the first ({py.installs[0].path}) is imported",
            fix="uninstall the others (pip uninstall torch, repeated) or use a fresh virtualenv",
            evidence=tuple(f"{i.path} ({i.version or 'version unknown'})" for i in py.installs),
        )
    ]


def check_extensions(facts: EnvFacts) -> list[EnvProblem]:
    """Companion libraries whose compiled ops were built against another torch or ABI."""
    py = facts.python
    if py is None:
        return []
    problems = []
    for ext in py.extensions:
        if ext.ok or not ext.error:
            continue
        foreign = "undefined symbol" in ext.error
        problems.append(
            EnvProblem(
                id=f"{ext.name}-mismatch" if foreign else f"{ext.name}-import",
                severity="error" if foreign else "warning",
                what=f"{ext.name} was built against another torch or C++ ABI"
                if foreign
                else f"{ext.name} does not import cleanly",
                fix=f"rebuild {ext.name} from source against the installed torch"
                if foreign
                else f"see the error; reinstall {ext.name} to match torch",
                evidence=(ext.error[:300],),
                source="https://github.com/GOATmessi8/ASFF/issues/52" if foreign else "",
            )
        )
    return problems


Check = Callable[[EnvFacts], list[EnvProblem]]


def check_all(
    facts: EnvFacts, kb: KnowledgeBase | None, in_container: bool = False
) -> list[EnvProblem]:
    """Every check, errors first; ``in_container``: the build's compiler is the image's, not
    this machine's (its GPUs and driver still count)."""
    checks: list[Check] = [
        check_driver,
        check_ram_per_job,
        check_disk,
        check_disk_path,
        check_cuda_paths,
        check_torch_installs,
        check_extensions,
    ]
    problems = [p for check in checks for p in check(facts)]
    if kb is not None:
        problems += check_gpu_archs(facts, kb) if in_container else check_kb(facts, kb)
    return sorted(problems, key=lambda p: p.severity != "error")
