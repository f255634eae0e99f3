"""What the build pipeline carries out today, as data, and the plan-time refusal of everything
else. "Accepted means done": a backend, output, companion or linking mode the pipeline cannot
run is refused here, before anything is downloaded, with the way out — never dropped silently.

:data:`PIPELINE` is checked against the real registries by tests (the step registry of
:mod:`torchsmith.steps.pipeline`, the executors of :mod:`torchsmith.backends`), so a new step,
output or backend is one implementation plus one entry here. This module starts no process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from torchsmith.plan_model import StepName
from torchsmith.planner.context import Ctx
from torchsmith.spec import Backend, Output

ISSUES = {
    "companion": "torch and its companion libraries are not built in one run yet (the "
    "`companion` step builds companions against a finished torch: --against)",
    "container": "builds in a container (docker, podman, buildah, apptainer) are not carried "
    "out yet",
    "output": "only wheels, conda packages and installs are produced yet (images are a "
    "planned output of a later version)",
    "pip-deps": "pip-deps declares the official wheels' own nvidia-* pins, so it needs them "
    "recorded (kb/data/nvidia_wheels.toml), and covers every CUDA library at once "
    "(linking.cuda=pip-deps), as the official wheels do",
}


@dataclass(frozen=True)
class Capabilities:
    """The backends, outputs and steps one pipeline can carry out."""

    backends: frozenset[str]
    outputs: frozenset[str]
    steps: frozenset[str]
    companions: bool = False
    """torch and its companions built in one run."""
    companion_step: bool = False
    """Companions of a torch build are built by the pipeline's ``companion`` step (a container
    build builds them in its image instead)."""
    companions_against: bool = False
    companions_python: bool = False
    """Companions built against the torch an interpreter imports (``--against python:PATH``)."""
    """Companions built against a given torch wheel (``--against FILE.whl``)."""
    repair: bool = False
    """Wheels are repaired (auditwheel: $ORIGIN RPATHs, driver/CUDA sonames left external)."""
    pip_deps: bool = False
    """``pip-deps`` planned for any release and CUDA (knowledge only). Without it, pip-deps
    (Requires-Dist on nvidia-* wheels, RPATHs into them) is carried out where the knowledge base
    records the official wheels' pins, for all CUDA libraries at once (``linking.cuda``)."""


PIPELINE = Capabilities(
    backends=frozenset({"local"}),
    outputs=frozenset({"wheel", "conda", "install"}),
    steps=frozenset(get_args(StepName)),
    repair=True,
    companions=True,
    companion_step=True,
    companions_against=True,
    companions_python=True,
)
"""What ``torchsmith build`` runs today."""

KNOWLEDGE_ONLY = Capabilities(
    backends=frozenset(get_args(Backend)),
    outputs=frozenset(get_args(Output)),
    steps=frozenset(get_args(StepName)),
    companions=True,
    companions_against=True,
    companions_python=True,
    repair=True,
    pip_deps=True,
)
"""Everything the spec can express: for tests of the planner's knowledge (what a plan *would*
hold), never for a build."""


def refuse_unsupported(ctx: Ctx, can: Capabilities, linking_cuda: object) -> None:
    """Add a problem for every request ``can`` cannot carry out."""
    _backend(ctx, can)
    _container_keys(ctx)
    _outputs(ctx, can)
    _companions(ctx, can)
    _install(ctx)
    if not can.pip_deps:
        _pip_deps(ctx, linking_cuda)


def _pip_deps(ctx: Ctx, linking_cuda: object) -> None:
    asked = {"cuda": linking_cuda, "cudnn": ctx.spec.linking.cudnn, "nccl": ctx.spec.linking.nccl}
    if linking_cuda == "pip-deps" and _has_pins(ctx):
        return
    for lib, mode in asked.items():
        if mode == "pip-deps":
            ctx.problem(
                f"linking {lib}=pip-deps: {pins_known(ctx)}; {ISSUES['pip-deps']}",
                f"link {lib} dynamically against the toolkit (--link {lib}=dynamic) or "
                f"statically (--link {lib}=static)",
                f"linking.{lib}",
            )


def _has_pins(ctx: Ctx) -> bool:
    from torchsmith.kb.pipdeps import pins_for

    torch = ctx.release.torch if ctx.release else ctx.spec.torch
    return pins_for(torch, ctx.spec.accelerator) is not None


def pins_known(ctx: Ctx) -> str:
    """What the knowledge base knows of the official nvidia-* pins for this torch and CUDA."""
    from torchsmith.kb.pipdeps import known, pins_for

    torch = ctx.release.torch if ctx.release else ctx.spec.torch
    cuda = None if ctx.spec.accelerator == "cpu" else ctx.spec.accelerator
    pins = pins_for(torch, cuda)
    if pins is None:
        return (
            f"no official nvidia-* pins are recorded for torch {torch} + CUDA {cuda} "
            f"(recorded: {', '.join(known())})"
        )
    return f"the official pins for torch {torch} + CUDA {cuda} are recorded ({pins.source})"


def _backend(ctx: Ctx, can: Capabilities) -> None:
    backend = ctx.spec.backend
    if backend in can.backends:
        if ctx.spec.toolkit == "container":
            ctx.problem(
                "toolkit 'container': a container build's toolkit is its image's, and this "
                f"build runs on this machine (backend {backend!r})",
                "take the toolkit from this machine (toolkit auto, system, pypi or apt), or "
                "build in a container: `torchsmith image` (backend 'docker')",
                "toolkit",
            )
        return
    image = ""
    if backend == "docker":
        image = "`torchsmith image` runs the build in a container (same flags or --spec; "
        image += "--output wheel exports the wheels), or "
    ctx.problem(
        f"backend {backend!r}: "
        + ("`torchsmith build` runs on this machine" if image else ISSUES["container"]),
        f"{image}build on this machine (--backend {' / '.join(sorted(can.backends))}); "
        "`torchsmith plan --backend local` shows what this host can build",
        "backend",
    )


_CONTAINER_KEYS = {
    "engine": "--engine",
    "base_image": "--base-image",
    "base_recipe": "--base-recipe",
    "apt_mirror": "--apt-mirror",
    "images": "[[images]]",
}


def _container_keys(ctx: Ctx) -> None:
    """engine, base_image and [[images]] shape a container build: refused without one."""
    spec = ctx.spec
    if spec.backend != "local":
        return
    given = {"engine": spec.engine != "auto", "base_image": bool(spec.base_image)}
    given["images"] = bool(spec.images)
    given |= {"base_recipe": spec.base_recipe != "auto", "apt_mirror": bool(spec.apt_mirror)}
    for key in (k for k, on in given.items() if on):
        ctx.problem(
            f"{key} ({_CONTAINER_KEYS[key]}) applies to container builds, and this one runs on "
            "this machine (backend 'local'): it would be ignored",
            "drop it, or build in a container: `torchsmith image` (backend 'docker')",
            key,
        )


def _outputs(ctx: Ctx, can: Capabilities) -> None:
    missing = [o for o in ctx.spec.outputs if o not in can.outputs]
    if missing:
        ctx.problem(
            f"outputs {', '.join(missing)}: {ISSUES['output']}",
            f"ask for {' / '.join(sorted(can.outputs))} (--output wheel)",
            "outputs",
        )


def _install(ctx: Ctx) -> None:
    spec = ctx.spec
    if "install" not in spec.outputs:
        return
    if spec.install_python is None and spec.backend == "local":  # an image has its own
        ctx.problem(
            "output install: no interpreter to install into was given",
            "name it: --install-python /path/to/venv/bin/python (spec key install_python); "
            "torchsmith never installs into its own build environment",
            "install_python",
        )
    if spec.targets:
        ctx.problem(
            "output install with --target: a partial build makes no wheel to install",
            "drop --target, or drop --output install",
            "outputs",
        )


def _unasked_sources(ctx: Ctx) -> None:
    """A companion source (or a part left out, ``companion_without``) given for a companion
    the build does not ask for is refused, not dropped (``--with auto`` asks for them all)."""
    asked = {c.split("=")[0] for c in ctx.spec.companions}
    given = [
        n for n in type(ctx.spec.companion_source).model_fields if ctx.spec.companion_source.of(n)
    ]
    unasked = [n for n in given if "auto" not in asked and n not in asked]
    if unasked:
        ctx.problem(
            f"--companion-source for {', '.join(unasked)}, which this build does not build",
            f"add --with {','.join(unasked)}, or drop its --companion-source",
            "companion_source",
        )
    without = ctx.spec.companion_without
    left_out = [n for n in type(without).model_fields if without.of(n)]
    for name in [n for n in left_out if "auto" not in asked and n not in asked]:
        ctx.problem(  # accepted would mean done: nothing of an unbuilt companion is left out
            f"companion_without.{name} = {','.join(without.of(name))}, but this build does "
            f"not build {name}",
            f"add --with {name}, or drop --companion-without {name}=… (companion_without.{name})",
            f"companion_without.{name}",
        )


def _companions(ctx: Ctx, can: Capabilities) -> None:
    _unasked_sources(ctx)
    against = ctx.spec.against
    if not ctx.spec.companions or (can.companions and against is None):
        return
    if against is None:
        ctx.problem(
            f"companions {', '.join(ctx.spec.companions)}: {ISSUES['companion']}",
            "build torch alone now (drop --with), then the companions against its wheel: "
            "--with torchvision --against dist/torch-….whl (`torchsmith kb release VERSION` "
            "names the companion versions that match it)",
            "companions",
        )
    elif not can.companions_against:
        ctx.problem(
            f"--against {against}: companions built against a given torch are not carried "
            "out by this pipeline",
            "build on this machine (--backend local)",
            "against",
        )
    elif against.startswith("python:") and not can.companions_python:
        ctx.problem(
            f"--against {against}: builds against an interpreter's torch are planned but not "
            "carried out yet (the build needs the exact torch wheel file to install)",
            "give that torch's wheel file: --against path/to/torch-….whl",
            "against",
        )


def unsupported_backend_names(can: Capabilities) -> list[str]:
    """The spec's backends this pipeline refuses (for help texts and docs)."""
    return [b for b in get_args(Backend) if b not in can.backends]
