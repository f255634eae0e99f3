"""The plan of a container build: the base image chosen from the knowledge base, the build plan
resolved against that **image's** facts (its compiler, Python, glibc, CUDA — never the host's),
the container's steps and the training images. Pure: no process, no I/O."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from torchsmith.container.base import BaseChoice, choose_base
from torchsmith.container.images import ImageKb, image_facts
from torchsmith.container.training import ResolvedImage, resolve_image
from torchsmith.errors import PlanError, Problem
from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.kb import KnowledgeBase
from torchsmith.plan_model import BuildPlan, PlanStep, StepName
from torchsmith.planner import resolve
from torchsmith.planner.support import Capabilities
from torchsmith.spec import BuildSpec, TrainingImage
from torchsmith.spec_sources import ResolvedSpec

CONTAINER = Capabilities(
    backends=frozenset({"docker"}),
    outputs=frozenset({"wheel", "docker-image", "install"}),
    steps=frozenset(get_args(StepName)),
    companions=True,
)
"""What ``torchsmith image`` carries out: the generated Dockerfile builds torch and its
companions in the image and exports the wheels (no auditwheel repair in the image). Every
other backend, output or source stays refused at plan time."""
CONTAINER_BACKENDS = CONTAINER.backends
_CREDENTIALS = re.compile(r"://[^/@\s]+@")


@dataclass(frozen=True)
class ImagePlan:
    plan: BuildPlan
    base: BaseChoice
    images: tuple[ResolvedImage, ...]
    engine: str = "auto"


def _refusals(rs: ResolvedSpec) -> list[Problem]:
    spec = rs.spec
    problems = []
    if not spec.source.startswith("git"):
        problems.append(
            Problem(
                f"source {spec.source!r}: the generated Dockerfile clones the release with git "
                "only yet",
                "use --source git (the default); `torchsmith build --backend docker` fetches "
                "Debian sources inside the container (torchsmith runs there); or build on this "
                "machine (--backend local)",
                "source",
            )
        )
    if spec.git_mirror and _CREDENTIALS.search(spec.git_mirror):
        problems.append(
            Problem(
                "git_mirror carries credentials: they would be written into the Dockerfile",
                "use a mirror that needs none (or a credential helper of the engine's build)",
                "git_mirror",
            )
        )
    if "conda" in spec.outputs:
        problems.append(
            Problem(
                "outputs conda: conda packages are not made in a container build yet",
                "build the conda package on this machine (--backend local --output conda), "
                "or ask the container build for wheels (--output wheel)",
                "outputs",
            )
        )
    if spec.targets:
        problems.append(
            Problem(
                "targets: a partial build makes no wheel for an image",
                "drop --target, or build on this machine (--backend local)",
                "targets",
            )
        )
    return problems


def _facts(base: BaseChoice, cuda: str | None, machine: HostFacts) -> HostFacts:
    facts = image_facts(base.os, cuda, machine)
    if base.python_from == "os":
        return facts
    venv = PythonInfo(path="/opt/venv/bin/python", version=base.python)
    return facts.model_copy(update={"pythons": [venv]})


def container_steps(plan: BuildPlan, base: BaseChoice) -> list[PlanStep]:
    """What the generated Dockerfile does, stage by stage (the build, in the image)."""
    fixes = ", ".join(f.id for f in plan.fixes) or "none"
    return [
        PlanStep(
            name="toolchain", what=f"{base.image}: apt build tools, Python {base.python} venv"
        ),
        PlanStep(name="fetch", what=f"git clone {plan.source.location} {plan.tag} (submodules)"),
        PlanStep(name="environment", what="the tree's requirements.txt, cmake and ninja (pip)"),
        PlanStep(name="fixes", what=fixes),
        PlanStep(name="compile", what=f"{plan.frontend.value}: configure + compile (ccache mount)"),
        PlanStep(
            name="package", what="torch wheel" + "".join(f", {c.name}" for c in plan.companions)
        ),
        PlanStep(name="verify", what="import torch in the image; version and CUDA checked"),
        PlanStep(
            name="publish", what=f"export stage: wheels + manifest ({', '.join(plan.outputs)})"
        ),
    ]


def _resolve(
    rs: ResolvedSpec, kb: KnowledgeBase, base: BaseChoice, machine: HostFacts
) -> BuildPlan:
    return resolve(rs, kb, _facts(base, rs.spec.cuda, machine), can=CONTAINER)


def _images(spec: BuildSpec) -> tuple[TrainingImage, ...]:
    """The training images asked for; one named ``torch`` when only an image output is."""
    if spec.images or not {"docker-image", "install"} & set(spec.outputs):
        return spec.images
    return (TrainingImage(name="torch"),)


def base_and_plan(
    spec: BuildSpec, images_kb: ImageKb, resolve_in: Callable[[BaseChoice], BuildPlan]
) -> tuple[BaseChoice, BuildPlan]:
    """The base image for the spec's CUDA and Python, and the plan resolved in it; when the
    plan picks another Python (the release's newest), the base image for that one."""
    base = choose_base(images_kb, spec.cuda, spec.python, spec.base_image)
    plan = resolve_in(base)
    if plan.python.value and plan.python.value != base.python:
        base = choose_base(images_kb, spec.cuda, plan.python.value, spec.base_image)
        plan = resolve_in(base)
    return base, plan


def plan_container(
    rs: ResolvedSpec,
    kb: KnowledgeBase,
    images_kb: ImageKb,
    machine: HostFacts,
    caller_ids: tuple[int, int],
) -> ImagePlan:
    """Plan a build in an image, or raise :class:`PlanError` with every conflict."""
    problems = _refusals(rs)
    if problems:
        raise PlanError(problems, "change the request as suggested; nothing was built")
    spec = rs.spec
    base, plan = base_and_plan(spec, images_kb, lambda b: _resolve(rs, kb, b, machine))
    plan = plan.model_copy(
        update={
            "steps": container_steps(plan, base),
            "warnings": [*plan.warnings, *base.warnings],
        }
    )
    images = tuple(resolve_image(i, *caller_ids) for i in _images(spec))
    return ImagePlan(plan, base, images, spec.engine)
