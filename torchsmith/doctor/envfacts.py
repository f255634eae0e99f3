"""The fact records the environment checks read (:mod:`torchsmith.doctor.envcheck`): a
machine's host facts plus its PATH, LD_LIBRARY_PATH, CUDA_HOME, build directory and the torch
installs of one Python (probed by :mod:`torchsmith.doctor.envprobe`, or built directly in tests),
and the problem record each check returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.host.model import HostFacts


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TorchInstall(_Frozen):
    """A torch package directory found on a Python's sys.path."""

    path: str
    version: str | None = None


class ImportedTorch(_Frozen):
    """What ``import torch`` gives in that Python."""

    path: str
    version: str
    cuda: str | None = None
    cxx11_abi: bool | None = None


class ExtensionImport(_Frozen):
    """Importing a companion library (torchvision, torchaudio) and its compiled ops."""

    name: str
    ok: bool
    error: str | None = Field(None, description="the exception or warning text when not ok")


class PythonFacts(_Frozen):
    executable: str
    installs: tuple[TorchInstall, ...] = ()
    imported: ImportedTorch | None = None
    import_error: str | None = None
    extensions: tuple[ExtensionImport, ...] = ()


class EnvFacts(_Frozen):
    host: HostFacts
    path: tuple[str, ...] = ()
    ld_library_path: tuple[str, ...] = ()
    cuda_home: str | None = None
    realpaths: dict[str, str] = Field(default_factory=dict, description="entry -> resolved path")
    max_jobs: int | None = None
    target_cuda: str | None = Field(None, description="the CUDA the build is meant to use")
    compiler: str | None = Field(
        None, description="the plan's host compiler ('gcc-11'); None: the default gcc"
    )
    disk_path_problem: str | None = Field(
        None, description="why the build directory cannot be used as given (missing, not writable)"
    )
    disk_path_creatable: bool = True
    python: PythonFacts | None = None


class EnvProblem(_Frozen):
    id: str
    severity: Literal["error", "warning"]
    what: str
    fix: str
    evidence: tuple[str, ...] = ()
    source: str = ""
