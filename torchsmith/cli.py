"""Command-line entry point. Argument parsing only; ``main()`` is the one place that catches
errors and turns them into exit codes."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import NoReturn

from torchsmith import __version__
from torchsmith.commands import COMMANDS
from torchsmith.errors import InterruptError, TorchsmithError

LISTING = ""  # build_parser(only=LISTING): every command listed, none imported (for --help)


def _command_in(argv: Sequence[str]) -> str:
    """The sub-command named in argv, so that only its module is imported (start-up time);
    ``LISTING`` when there is none (``--help``, ``--version``, a misspelt command)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else LISTING


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (``only=None``), of one command (its module alone is
    imported), or of none (``LISTING``: the commands are listed by name and help only)."""
    parser = argparse.ArgumentParser(
        prog="torchsmith",
        description="Build PyTorch and its domain libraries from source — checked before, "
        "verified after.",
    )
    parser.add_argument("--version", action="version", version=f"torchsmith {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, helptext in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(f"torchsmith.commands.{name}").register(sub)
        else:
            sub.add_parser(name, help=helptext)  # listed only: a command given is imported
    return parser


def _report(exc: TorchsmithError, debug: bool) -> int:
    from torchsmith.console import err  # rich: only when there is something to say

    if debug:
        err.print(traceback.format_exc(), markup=False)
    err.print(f"[bold red]torchsmith: {exc.title}[/]")
    err.print(exc.render(), markup=False)
    return exc.exit_code


TERMINATED = "SIGTERM"


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(TERMINATED)


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, ``timeout``) unwinds like Ctrl-C: every ``finally`` and
    context manager runs, so private files holding credentials, sockets and working
    containers are removed and child processes are killed (security review f1b4bec N11)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(exc: KeyboardInterrupt) -> InterruptError:
    if exc.args == (TERMINATED,):
        return InterruptError("stopped by SIGTERM", "run the same command to resume")
    return InterruptError("stopped by Ctrl-C", "run the same command to resume")


def run() -> NoReturn:
    """The ``torchsmith`` command: :func:`main`, then the process ends (torchsmith/exiting.py)."""
    from torchsmith.exiting import exit_process

    exit_process(main())


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_in(argv))
    args = parser.parse_args(argv)
    debug = bool(args.debug or os.environ.get("TORCHSMITH_DEBUG"))
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        with _sigterm_unwinds():
            code = int(args.handler(args))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        from torchsmith.console import reader_gone

        return reader_gone()
    except KeyboardInterrupt as exc:
        return _report(_interrupted(exc), debug)
    except TorchsmithError as exc:
        return _report(exc, debug)
    except Exception as exc:  # a bug: say so plainly, never a bare traceback unless asked
        if debug:
            raise
        from torchsmith.console import err

        err.print("[bold red]torchsmith: internal error:[/]", end=" ")
        err.print(f"{type(exc).__name__}: {exc}", markup=False)
        err.print("this is a bug in torchsmith; rerun with --debug and report the traceback")
        return 70
