"""BuildPlan: the pure, immutable, JSON-serialisable result of planning. Every resolved value
carries where it came from and why (:class:`Decision`). Steps read the plan; nothing in it is
computed while building."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from torchsmith.plan_types import CachePlan, CompanionBuildPlan
from torchsmith.redact import redact_data
from torchsmith.spec import Backend, CacheKind, Linkage

PLAN_SCHEMA_VERSION = 1
DecisionOrigin = Literal["user", "default", "kb", "host", "fix"]
StepName = Literal[
    "fetch",
    "copy",
    "toolchain",
    "environment",
    "fixes",
    "configure",
    "compile",
    "package",
    "repair",
    "verify",
    "publish",
    "conda",
    "install",
    "attest",
]
"""The steps the pipeline carries out, in the order they may appear in a plan. Work that happens
inside a step (git submodules inside ``fetch``, ATen code generation inside ``configure`` and
``compile``) is not a step of its own. A companion's steps are the same kinds with a subject
(:attr:`PlanStep.subject`)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


T_co = TypeVar("T_co", covariant=True)  # frozen: a Decision[str] is a Decision[str | None]


class Decision(_Frozen, Generic[T_co]):
    """One resolved value (typed by the field that holds it), where it came from and why."""

    value: T_co
    origin: DecisionOrigin
    reason: str


class EnvSetting(_Frozen):
    """One environment variable the build sets, spelled the way this release reads it."""

    name: str
    value: str
    reason: str


class PlannedFix(_Frozen):
    id: str
    title: str
    action: Literal["env", "patch", "refuse", "command"]
    env: dict[str, str] = Field(default_factory=dict)
    edits: list[dict[str, str]] = Field(default_factory=list)
    command: list[str] = Field(default_factory=list)
    explanation: str
    source: str


class CompanionPlan(_Frozen):
    name: str
    version: str
    tag: str
    reason: str


class SourcePlan(_Frozen):
    kind: Literal["git", "debian", "path", "tarball", "bundle"]
    location: str = Field(description="URL, path or package name")
    ref: str = Field(description="git tag/commit, Debian version, or '' for a path")
    git_mirror: str | None = None
    in_place: bool = False
    system_python: bool = Field(
        False,
        description="Debian route with the suite's own python3: the build's venv is made over "
        "/usr/bin/python3 and sees the distribution's python3-* packages (numpy, yaml); false: "
        "the plan's Python with its build requirements from PyPI",
    )
    reason: str

    @model_validator(mode="before")
    @classmethod
    def _system_python_default(cls, data: Any) -> Any:
        """Plans written before the field: Debian's route always used the system python3."""
        if isinstance(data, dict) and "system_python" not in data:
            return {**data, "system_python": data.get("kind") == "debian"}
        return data


class PlanStep(_Frozen):
    name: StepName
    what: str
    subject: str | None = Field(
        None, description="the companion the step is for ('torchvision'); None: torch's own"
    )

    @model_serializer(mode="wrap")
    def _drop_absent_subject(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, object]:
        """A step of torch's own dumps as before the field existed."""
        data: dict[str, object] = handler(self)
        if data.get("subject", 0) is None:
            del data["subject"]
        return data

    @property
    def label(self) -> str:
        """``compile``, or ``torchvision-compile`` for a companion's (its stage and marker)."""
        return self.name if self.subject is None else f"{self.subject}-{self.name}"


HASH_EXCLUDES = frozenset(
    {
        "warnings",
        "output_dir",
        "outputs",
        "cache_dir",
        "cache_setup",
        "install_python",
        "steps",
        "readiness",
        "sign_key",
    }
)
"""Plan keys left out of :meth:`BuildPlan.plan_hash` (they do not change the build's result)."""


def hash_plan_data(data: dict[str, Any]) -> str:
    """The plan hash of plan JSON as written (``HASH_EXCLUDES`` left out, credentials masked):
    the same value :meth:`BuildPlan.plan_hash` gives when ``data`` is a plan's dump — and, for
    a file an older torchsmith wrote, the value it wrote, whatever fields were added since."""
    kept = {k: v for k, v in data.items() if k not in HASH_EXCLUDES}
    text = json.dumps(redact_data(kept), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ReadinessItem(_Frozen):
    """One tool the build needs on the machine it is planned for: the machine's answer, kept
    apart from the combination's (a missing tool is a row here, never a conflict)."""

    tool: str = Field(description="e.g. 'CUDA toolkit (nvcc)', 'host compiler'")
    needed: str = Field(description="what the combination needs, e.g. 'CUDA 12.8'")
    found: str = Field(description="what the machine has")
    provider: str = Field(description="how torchsmith or the user provides it")
    ready: bool = Field(description="usable now, or supplied by torchsmith during the build")
    provisionable: bool = Field(
        True, description="`torchsmith build` can go on (it supplies or checks it itself)"
    )


class BuildPlan(_Frozen):
    schema_version: int = PLAN_SCHEMA_VERSION
    torch: Decision[str]
    tag: str
    source: SourcePlan
    companions: list[CompanionPlan]
    python: Decision[str | None]
    cuda: Decision[str | None] = Field(description="CUDA version, or None for a CPU build")
    toolkit: Decision[str | None] = Field(description="CUDA toolkit provider, None for CPU")
    compiler: Decision[str | None] = Field(description="host compiler, e.g. 'gcc-11'")
    archs: Decision[list[str]] = Field(description="list of arch entries like '8.6', '9.0+PTX'")
    arch_list: str = Field(description="the TORCH_CUDA_ARCH_LIST value, '' for CPU")
    features: dict[str, Decision[bool | None]]
    linking: dict[str, Decision[Linkage | None]]
    frontend: Decision[str]
    env: list[EnvSetting]
    cmake_args: list[str]
    max_jobs: Decision[int]
    max_jobs_cuda: Decision[int]
    disk_gb: Decision[float]
    cache: Decision[CacheKind]
    fixes: list[PlannedFix]
    targets: list[str]
    outputs: list[str]
    output_dir: str
    install_python: str | None = Field(
        None, description="the interpreter the 'install' output installs the wheel into"
    )
    backend: Backend
    cache_dir: str | None = Field(
        None, description="compiler cache directory; None: <cache root>/<cache kind>"
    )
    cache_setup: CachePlan | None = Field(
        None, description="the compiler cache's levels (local, shared, remote) and why"
    )
    steps: list[PlanStep]
    warnings: list[str] = Field(default_factory=list)
    readiness: list[ReadinessItem] = Field(
        default_factory=list,
        description="the machine's answer: what it has of what the build needs (not hashed)",
    )
    companion_build: CompanionBuildPlan | None = Field(
        None,
        description="companions built against a given torch (--against); absent otherwise",
    )
    sign_key: str | None = Field(
        None, description="the key the attest step signs provenance with; absent: unsigned"
    )

    @model_serializer(mode="wrap")
    def _drop_absent_companion_build(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, object]:
        """A plan without ``--against`` dumps (and hashes) as before the field existed."""
        data: dict[str, object] = handler(self)
        for key in ("companion_build", "sign_key"):  # absent: dumped as before the fields
            if data.get(key, 0) is None:
                del data[key]
        return data

    @property
    def ready(self) -> bool:
        """The machine this plan was made for can run it now (or torchsmith supplies the rest)."""
        return all(item.ready for item in self.readiness)

    def env_dict(self) -> dict[str, str]:
        """The environment variables of the build (fix-provided ones included)."""
        return {e.name: e.value for e in self.env}

    def plan_hash(self) -> str:
        """A stable hash of everything that changes the build's result (URL credentials and
        signatures masked: rotating a token does not force a rebuild). The outputs, where they
        go and the step list (which follows from the hashed decisions and the outputs) are left
        out: asking for ``--output install`` as well reuses the same build."""
        return hash_plan_data(self.model_dump(mode="json", exclude=set(HASH_EXCLUDES)))
