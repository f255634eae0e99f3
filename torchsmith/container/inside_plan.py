"""The plan of ``torchsmith build --backend docker`` (torchsmith runs the pipeline inside a
working container): the base image chosen from the knowledge base, then the very plan the
torchsmith inside will make — the spec with ``backend = "local"``, resolved against the
**image's** facts (its compiler, Python, glibc; CUDA at /usr/local/cuda in NVIDIA's images),
by the same planner and with the same refusals as a build on this machine. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from torchsmith.container.base import BaseChoice
from torchsmith.container.images import ImageKb, image_facts
from torchsmith.container.planning import base_and_plan
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec_sources import ResolvedSpec

CONTAINER_ONLY = {"backend": "local", "engine": "auto", "base_image": None, "images": ()}


@dataclass(frozen=True)
class InsidePlan:
    base: BaseChoice
    plan: BuildPlan
    engine: str


def local_spec(rs: ResolvedSpec) -> ResolvedSpec:
    """The spec the torchsmith inside gets: the same, on its own machine (backend local)."""
    spec = rs.spec.model_copy(update=CONTAINER_ONLY)
    origins = {k: v for k, v in rs.origins.items() if k not in CONTAINER_ONLY}
    return ResolvedSpec(spec=spec, origins=origins)


def _resolve(
    rs: ResolvedSpec, kb: KnowledgeBase, base: BaseChoice, machine: HostFacts
) -> BuildPlan:
    return resolve(local_spec(rs), kb, image_facts(base.os, rs.spec.cuda, machine))


def plan_inside(
    rs: ResolvedSpec, kb: KnowledgeBase, images: ImageKb, machine: HostFacts
) -> InsidePlan:
    """The base image and the plan inside it (:class:`PlanError` with every conflict)."""
    base, plan = base_and_plan(rs.spec, images, lambda b: _resolve(rs, kb, b, machine))
    return InsidePlan(base, plan, rs.spec.engine)
