"""Command-line entry point. Argument parsing only; ``main()`` is the one place that catches
errors and turns them into exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from torchsmith import __version__
from torchsmith.commands import COMMAND_MODULES
from torchsmith.console import err, reader_gone
from torchsmith.errors import InterruptError, TorchsmithError


def _command_in(argv: Sequence[str]) -> str | None:
    """The sub-command named in argv, so that only its module is imported (start-up time)."""
    names = {m.rsplit(".", 1)[1] for m in COMMAND_MODULES}
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in names else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchsmith",
        description="Build PyTorch and its domain libraries from source — checked before, "
        "verified after.",
    )
    parser.add_argument("--version", action="version", version=f"torchsmith {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if only is None or name.rsplit(".", 1)[1] == only:
            importlib.import_module(name).register(sub)
    return parser


def _report(exc: TorchsmithError, debug: bool) -> int:
    if debug:
        err.print(traceback.format_exc(), markup=False)
    err.print(f"[bold red]torchsmith: {exc.title}[/]")
    err.print(exc.render(), markup=False)
    return exc.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_in(argv))
    args = parser.parse_args(argv)
    debug = bool(args.debug or os.environ.get("TORCHSMITH_DEBUG"))
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        code = int(args.handler(args))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return reader_gone()
    except KeyboardInterrupt:
        return _report(InterruptError("stopped by Ctrl-C", "run the same command to resume"), debug)
    except TorchsmithError as exc:
        return _report(exc, debug)
    except Exception as exc:  # a bug: say so plainly, never a bare traceback unless asked
        if debug:
            raise
        err.print("[bold red]torchsmith: internal error:[/]", end=" ")
        err.print(f"{type(exc).__name__}: {exc}", markup=False)
        err.print("this is a bug in torchsmith; rerun with --debug and report the traceback")
        return 70
