"""The one plan of a container build, for ``plan``, ``build`` and ``image`` alike: the base image
chosen from the knowledge base, then the very plan the torchsmith inside the container makes —
the spec with ``backend = "local"``, resolved against the **image's** facts (its compiler,
Python, glibc; CUDA at /usr/local/cuda in NVIDIA's images; never the host's) by the same planner,
with the same refusals and the same steps as a build on this machine. Both routes run that plan
with ``torchsmith build`` inside: a working container (``build --backend docker``) or the
generated Dockerfile's build stage (``image``). Pure: no process, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torchsmith.container.base import BaseChoice, choose_base
from torchsmith.container.images import ImageKb, image_facts
from torchsmith.container.inside import spec_env
from torchsmith.container.recipes import RecipeMode, library_problems, library_warnings
from torchsmith.container.training import ResolvedImage, resolve_image
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.kb import KnowledgeBase
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec import BuildSpec, TrainingImage
from torchsmith.spec_sources import ResolvedSpec

CONTAINER_ONLY = {
    "backend": "local",
    "engine": "auto",
    "base_image": None,
    "base_recipe": "auto",
    "apt_mirror": None,
    "images": (),
    "sign_key": None,  # refused for a container build (inside.refusals): never passed in
}
"""What the torchsmith inside is not told: it builds on its own machine, the container."""
IMAGE_OUTPUTS = frozenset({"docker-image", "install"})
"""Outputs the generated Dockerfile's training stages make from the pipeline's wheels."""
UV_VENV = "/opt/venv"
"""Where the generated Dockerfile puts a Python the image's OS does not ship (uv)."""
PROVISIONED = frozenset({"apt", "pypi"})
"""Toolkit providers torchsmith runs itself inside the container: the toolkit is not the image's."""


def image_cuda(spec: BuildSpec) -> str | None:
    """The CUDA the base image must carry: none when a working container's build provisions its
    own toolkit (``--toolkit apt|pypi``), so the base is the OS image (a Debian suite), not
    NVIDIA's — whose Ubuntu facts (Python, compiler) would not be those of the image used."""
    image_route = bool(spec.images) or bool(IMAGE_OUTPUTS & set(spec.outputs))
    return None if spec.toolkit in PROVISIONED and not image_route else spec.cuda


@dataclass(frozen=True)
class ContainerPlan:
    """The base image, the plan run inside it, and (``image``) the training images."""

    base: BaseChoice
    plan: BuildPlan
    images: tuple[ResolvedImage, ...] = ()
    engine: str = "auto"
    outputs: tuple[str, ...] = ("wheel",)
    """What was asked, image outputs included (the plan's are the pipeline's)."""
    inside_env: tuple[tuple[str, str], ...] = ()
    """The spec as the ``TORCHSMITH_*`` variables the torchsmith inside reads."""


def local_spec(rs: ResolvedSpec) -> ResolvedSpec:
    """The spec the torchsmith inside gets: the same, on its own machine (backend local), less
    the image outputs its training stages make (then the wheels)."""
    outputs = tuple(o for o in rs.spec.outputs if o not in IMAGE_OUTPUTS) or ("wheel",)
    spec = rs.spec.model_copy(update={**CONTAINER_ONLY, "outputs": outputs})
    origins = {k: v for k, v in rs.origins.items() if k not in CONTAINER_ONLY}
    return ResolvedSpec(spec=spec, origins=origins)


def facts_in(base: BaseChoice, cuda: str | None, machine: HostFacts) -> HostFacts:
    """What the torchsmith inside finds: the image's OS, and the Python uv puts at /opt/venv
    when the OS has not the one asked for (the generated Dockerfile's python layer)."""
    root = base.recipe.root if base.recipe is not None else None
    facts = image_facts(base.os, cuda, machine, root)
    if base.python_from == "os":
        return facts
    venv = PythonInfo(path=f"{UV_VENV}/bin/python", version=base.python)
    return facts.model_copy(update={"pythons": [venv]})


def base_and_plan(
    spec: BuildSpec,
    images_kb: ImageKb,
    resolve_in: Callable[[BaseChoice], BuildPlan],
    recipes: bool = False,
) -> tuple[BaseChoice, BuildPlan]:
    """The base image for the spec's CUDA and Python, and the plan resolved in it; when the
    plan picks another Python (the release's newest), the base image for that one. With
    ``recipes`` (the Dockerfile route) a base-image recipe may make the base stage."""
    cuda = image_cuda(spec)
    recipe: tuple[RecipeMode, str | None] = (spec.base_recipe, spec.apt_mirror)
    if not recipes:
        recipe = ("image", None)
    base = choose_base(images_kb, cuda, spec.python, spec.base_image, recipe)
    plan = resolve_in(base)
    if plan.python.value and plan.python.value != base.python:
        base = choose_base(images_kb, cuda, plan.python.value, spec.base_image, recipe)
        plan = resolve_in(base)
    if base.recipe is not None and (problems := library_problems(base.recipe, plan)):
        raise PlanError(problems, "change the request as suggested; nothing was built")
    return base, plan


def _images(spec: BuildSpec) -> tuple[TrainingImage, ...]:
    """The training images asked for; one named ``torch`` when only an image output is."""
    if spec.images or not IMAGE_OUTPUTS & set(spec.outputs):
        return spec.images
    return (TrainingImage(name="torch"),)


def _tool_warnings(images_kb: ImageKb, base: BaseChoice) -> list[str]:
    """The Dockerfile copies uv from its tool image when the base's Python is not the OS's."""
    warning = images_kb.tool_warning("uv") if base.python_from == "uv" else None
    return [warning] if warning else []


def plan_container(
    rs: ResolvedSpec,
    kb: KnowledgeBase,
    images_kb: ImageKb,
    machine: HostFacts,
    caller_ids: tuple[int, int] = (0, 0),
    *,
    recipes: bool = False,
) -> ContainerPlan:
    """The base image and the plan inside it (:class:`PlanError` with every conflict);
    ``recipes``: the Dockerfile route, which can generate the base stage (:mod:`.recipes`)."""
    inner = local_spec(rs)

    def resolve_in(base: BaseChoice) -> BuildPlan:
        return resolve(inner, kb, facts_in(base, image_cuda(rs.spec), machine))

    base, plan = base_and_plan(rs.spec, images_kb, resolve_in, recipes)
    lacking = library_warnings(base.recipe, plan) if base.recipe is not None else []
    lacking += _tool_warnings(images_kb, base) if recipes else []
    plan = plan.model_copy(update={"warnings": [*plan.warnings, *base.warnings, *lacking]})
    images = tuple(resolve_image(i, *caller_ids) for i in _images(rs.spec))
    env = tuple(sorted(spec_env(inner).items()))
    return ContainerPlan(base, plan, images, rs.spec.engine, rs.spec.outputs, env)
