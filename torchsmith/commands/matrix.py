"""`torchsmith matrix --spec matrix.toml --emit github-actions|bake`: a build matrix as a
GitHub Actions workflow (one job per combination) or a docker-bake.hcl (one target each)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, get_args

from torchsmith import kb as kbmod
from torchsmith.atomic import write_text
from torchsmith.commands.spec_args import load_host
from torchsmith.console import out
from torchsmith.errors import UsageError
from torchsmith.matrix import Emit, check_plans, combinations, default_output, load_matrix, render


def _handle(args: argparse.Namespace) -> int:
    matrix = load_matrix(args.spec)
    combos = combinations(matrix, args.spec)
    check_plans(combos, kbmod.load(), load_host(args))
    text = render(matrix, combos, args.emit)
    if str(args.output) == "-":
        out.print(text, markup=False, highlight=False, end="", soft_wrap=True)
        return 0
    target = args.output or default_output(matrix, args.emit)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc}", "give --output a file path") from exc
    out.print(f"{args.emit}: {target} ({len(combos)} combinations)", markup=False)
    for combo in combos:
        out.print(f"  {combo.id}", markup=False)
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("matrix", help="a build matrix as CI files (GitHub Actions, bake)")
    parser.add_argument("--spec", type=Path, required=True, help="the matrix spec (TOML)")
    parser.add_argument("--emit", choices=get_args(Emit), required=True)
    parser.add_argument(
        "--output",
        type=Path,
        help="file to write ('-': stdout; default .github/workflows/torchsmith-NAME.yml or "
        "docker-bake.hcl)",
    )
    parser.add_argument(
        "--host-facts",
        type=Path,
        help="plan the combinations with the CI runner's recorded `torchsmith host --json`",
    )
    parser.set_defaults(handler=_handle)
