"""`torchsmith plan`: turn what the user wants into a checked, explained build plan."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchsmith import kb as kbmod
from torchsmith.commands.spec_args import add_spec_arguments, load_host, spec_from_args
from torchsmith.errors import UsageError
from torchsmith.host.scope import for_spec
from torchsmith.jsonout import print_json
from torchsmith.plan import resolve
from torchsmith.report.plan_json import plan_json, shown

if TYPE_CHECKING:
    from torchsmith.plan_types import TorchFacts
    from torchsmith.spec_sources import ResolvedSpec


RUNS = {
    "working-container": "torchsmith runs this plan inside a working container of the image "
    "(`torchsmith build --backend docker`)",
    "dockerfile": "the generated Dockerfile's build stage runs this plan with torchsmith "
    "inside the image (`torchsmith image`)",
}


def _print_container_plan(args: argparse.Namespace, rs: ResolvedSpec) -> int:
    """`torchsmith plan --backend docker`: the one container plan, by the route the spec asks
    for (images: `torchsmith image`), step for step what the build inside runs."""
    from rich.markup import escape  # rich and the container planner: only for this route

    from torchsmith.console import out
    from torchsmith.container import routes
    from torchsmith.container.images import load_images
    from torchsmith.report.plan_view import print_plan

    ids = (os.getuid(), os.getgid())
    cp = routes.for_spec(rs, kbmod.load(), load_images(), load_host(args, for_spec(rs.spec)), ids)
    runs = "dockerfile" if routes.wants_images(rs.spec) else "working-container"
    base: dict[str, Any] = {"base_image": cp.base.image, "base_reason": cp.base.reason}
    base["runs"] = runs
    base["base_recipe"] = cp.base.recipe.record() if cp.base.recipe else None
    if args.json:
        print_json({**plan_json(cp.plan), "container": base})
        return 0
    print_plan(shown(cp.plan))
    out.print(f"[bold]base image[/]: {escape(cp.base.image)} ({escape(cp.base.reason)})")
    if cp.base.recipe is not None:
        out.print(f"[bold]base recipe[/]: {escape(cp.base.recipe.summary())}")
    out.print(f"[bold]runs[/]: {RUNS[runs]}")
    for image in cp.images:
        ids_text = f"uid {image.uid} gid {image.gid} ({image.reason})"
        out.print(f"[bold]image {image.spec.name}[/]: TZ {image.spec.tz}, user {image.spec.user}, "
                  f"{escape(ids_text)}")  # fmt: skip
    return 0


def _handle(args: argparse.Namespace) -> int:
    resolved = spec_from_args(args)
    if resolved.spec.backend == "docker":  # the one container plan, run inside the image
        return _print_container_plan(args, resolved)
    against = _against(args, resolved)
    host = load_host(args, for_spec(resolved.spec))  # what build probes for the same spec
    plan = resolve(resolved, kbmod.load(), host, against=against)
    if args.json:
        print_json(plan_json(plan))
    else:
        from torchsmith.report.plan_view import print_plan  # rich: only for the tables

        print_plan(shown(plan))
    return 0


def _against(args: argparse.Namespace, resolved: ResolvedSpec) -> TorchFacts | None:
    """The facts of the ``--against`` torch. A ``python:PATH`` is run here to read them: said on
    stderr first, and refused with ``--host-facts`` (a plan for another machine must not run a
    program of this one: security review f1b4bec N15)."""
    named = resolved.spec.against
    if named is None:
        return None
    from torchsmith.companions.facts import PYTHON_PREFIX, against_of  # inspect: only then
    from torchsmith.proc import HOST

    if named.startswith(PYTHON_PREFIX):
        if args.host_facts is not None:
            raise UsageError(
                f"--against {named} would run that interpreter on this machine, but --host-facts "
                "plans for a recorded one",
                "give the torch wheel file to --against instead, or plan on that machine",
            )
        from torchsmith import console  # rich: only here, --json without python: stays light

        path = console.shown(named.removeprefix(PYTHON_PREFIX))
        console.err.print(f"running {path} to read its torch (--against)")
    return against_of(resolved, dict(os.environ), HOST)


def register(sub: Any) -> None:
    parser = sub.add_parser("plan", help="a checked, explained build plan (nothing is built)")
    add_spec_arguments(parser)
    parser.add_argument("--host-facts", type=Path, help="use recorded `torchsmith host --json`")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handle)
