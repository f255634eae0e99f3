"""The two routes that run the one container plan (:mod:`torchsmith.container.planning`), and
what each refuses before anything is written or started:

* ``build --backend docker``: torchsmith runs ``torchsmith build`` in a working container
  (buildah), the image's own python3 running it (:mod:`torchsmith.container.inside`);
* ``image`` (the generated Dockerfile): its build stage runs the same ``torchsmith build``
  (:mod:`torchsmith.container.dockerfile`), the spec written into the Dockerfile as the
  ``TORCHSMITH_*`` variables the torchsmith inside reads — so nothing secret may be in it.

``plan --backend docker`` takes the route the spec asks for: ``image`` when it asks for images.
Pure."""

from __future__ import annotations

from torchsmith.container import inside
from torchsmith.container.images import ImageKb
from torchsmith.container.planning import (
    IMAGE_OUTPUTS,
    ContainerPlan,
    local_spec,
    plan_container,
)
from torchsmith.errors import NotReadyError, PlanError, Problem, UnknownEntryError
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.redact import redact_url
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import ResolvedSpec, env_name

NOTHING_BUILT = "change the request as suggested; nothing was built"


def wants_images(spec: BuildSpec) -> bool:
    """The spec asks for images (``[[images]]``, docker-image, install): ``torchsmith image``."""
    return bool(spec.images) or bool(IMAGE_OUTPUTS & set(spec.outputs))


def _secrets(rs: ResolvedSpec) -> list[Problem]:
    """Spec values the Dockerfile would carry with a credential in them (URL user-info, a
    token in a query)."""
    env = inside.spec_env(local_spec(rs))
    given = {k: env[env_name(k)] for k in sorted(rs.origins) if env_name(k) in env}
    return [
        Problem(
            f"{key} carries credentials: they would be written into the Dockerfile",
            "use one that needs none (or a credential helper of the engine's build), or build "
            "with `torchsmith build --backend docker`",
            key,
        )
        for key, value in given.items()
        if redact_url(value) != value
    ]


def dockerfile_refusals(rs: ResolvedSpec) -> list[Problem]:
    """What the generated Dockerfile cannot carry out (refused, never dropped)."""
    spec = rs.spec
    fields = {"source", "against", "sign_key"}
    problems = [p for p in inside.refusals(spec, None) if p.field in fields]
    if spec.targets:
        problems.append(
            Problem(
                "targets: a partial build makes no wheel for an image",
                "drop --target, or build on this machine (--backend local)",
                "targets",
            )
        )
    return [*problems, *_secrets(rs)]


def _check(problems: list[Problem]) -> None:
    if problems:
        raise PlanError(problems, NOTHING_BUILT)


def for_dockerfile(
    rs: ResolvedSpec,
    kb: KnowledgeBase,
    images_kb: ImageKb,
    machine: HostFacts,
    caller_ids: tuple[int, int],
) -> ContainerPlan:
    """The plan ``torchsmith image`` writes a Dockerfile for."""
    _check(dockerfile_refusals(rs))
    return plan_container(rs, kb, images_kb, machine, caller_ids, recipes=True)


def _python_problems(cp: ContainerPlan) -> list[Problem]:
    base = cp.base
    found = inside.python_problem(base.os.python, base.image)
    if base.python_from != "os":
        found = found or Problem(
            f"Python {base.python}: {base.image}'s python3 is {base.os.python}, and a build "
            "in a working container builds with the image's own python3",
            f"use `torchsmith image` (its Dockerfile installs Python {base.python} with uv), "
            f"or drop --python to build for {base.os.python}",
            "python",
        )
    return [found] if found else []


def _recipe_refusals(spec: BuildSpec) -> list[Problem]:
    """A base-image recipe is a stage of `torchsmith image`'s Dockerfile, not an image buildah
    can start a working container of."""
    if spec.base_recipe in {"auto", "image"} and spec.apt_mirror is None:
        return []
    return [
        Problem(
            "a base-image recipe (--base-recipe, --apt-mirror) is a stage of the Dockerfile "
            "`torchsmith image` writes; `build --backend docker` starts from an existing image",
            "use `torchsmith image`, or build its `cuda` stage (docker build --target cuda -t "
            "NAME) and pass --base-image NAME",
            "base_recipe",
        )
    ]


def for_working_container(
    rs: ResolvedSpec, kb: KnowledgeBase, images_kb: ImageKb, machine: HostFacts
) -> ContainerPlan:
    """The plan ``build --backend docker`` runs inside a working container of the image; one
    list of every conflict (``plan`` and ``build`` both come here): what the route refuses,
    then the planner's conflicts on other fields or, when it has none, the image's Python."""
    refused = [*inside.refusals(rs.spec, None), *_recipe_refusals(rs.spec)]
    try:
        cp = plan_container(rs, kb, images_kb, machine)
    except UnknownEntryError:  # no image of that CUDA: the route's refusals say why first
        if not refused:
            raise
        raise PlanError(refused, NOTHING_BUILT) from None
    except PlanError as exc:
        if not refused or isinstance(exc, NotReadyError):
            raise
        fields = {p.field for p in refused}  # the route's word on a field comes first
        rest = [p for p in exc.problems if p.field not in fields]
        raise PlanError([*refused, *rest], exc.hint or NOTHING_BUILT) from exc
    _check([*refused, *_python_problems(cp)])
    return cp


def for_spec(
    rs: ResolvedSpec,
    kb: KnowledgeBase,
    images_kb: ImageKb,
    machine: HostFacts,
    caller_ids: tuple[int, int],
) -> ContainerPlan:
    """``plan --backend docker``: the route the spec asks for (images: ``torchsmith image``)."""
    if wants_images(rs.spec):
        return for_dockerfile(rs, kb, images_kb, machine, caller_ids)
    return for_working_container(rs, kb, images_kb, machine)
