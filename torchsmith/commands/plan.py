"""`torchsmith plan`: turn what the user wants into a checked, explained build plan."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from torchsmith import kb as kbmod
from torchsmith.commands.spec_args import add_spec_arguments, load_host, spec_from_args
from torchsmith.jsonout import print_json
from torchsmith.plan import resolve
from torchsmith.report.plan_json import plan_json, shown


def _handle(args: argparse.Namespace) -> int:
    resolved = spec_from_args(args)
    if resolved.spec.backend == "docker":  # the one container plan, run inside the image
        from torchsmith.commands.build_container import print_container_plan

        return print_container_plan(args, resolved)
    against = None
    if resolved.spec.against is not None:  # reading it needs inspect (pyelftools): only then
        from torchsmith.companions.facts import against_of
        from torchsmith.proc import HOST

        against = against_of(resolved, dict(os.environ), HOST)
    plan = resolve(resolved, kbmod.load(), load_host(args), against=against)
    if args.json:
        print_json(plan_json(plan))
    else:
        from torchsmith.report.plan_view import print_plan  # rich: only for the tables

        print_plan(shown(plan))
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("plan", help="a checked, explained build plan (nothing is built)")
    add_spec_arguments(parser)
    parser.add_argument("--host-facts", type=Path, help="use recorded `torchsmith host --json`")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handle)
