"""How the torchsmith process ends: its entry points call :func:`exit_process`; the library and
:func:`torchsmith.cli.main` only return an exit code.

py-rattler's async calls (the conda step's channel index, ``publish --to conda-channel:``) run on
a tokio runtime (pyo3-async-runtimes) that nothing shuts down: one of its threads may still touch
Python while the interpreter is torn down, and the process aborts after its work is done —
``Fatal Python error: PyGILState_Release: thread state … must be current when releasing``,
``Python runtime state: finalizing``, exit -6 (PyO3/pyo3-async-runtimes issue #40; seen once in
a CI rehearsal of ``torchsmith publish --to conda-channel:``, 2026-11-27). When such a module is
loaded, the process first does what a normal exit does (joins its threads, runs the atexit
callbacks, flushes its streams), then ends without the interpreter's teardown."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

# modules whose native threads outlive their calls (pyo3-async-runtimes' tokio runtime)
TOKIO_MODULES = ("rattler", "rattler_build")


def needs_hard_exit() -> bool:
    """Whether a module with a never-stopped tokio runtime was loaded in this process."""
    return any(name in sys.modules for name in TOKIO_MODULES)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream
            stream.flush()


def exit_process(code: int) -> NoReturn:
    """End the process with ``code`` (see the module's docstring)."""
    if not needs_hard_exit():
        raise SystemExit(code)
    threading._shutdown()  # type: ignore[attr-defined]  # what finalization runs first: non-daemon threads joined
    atexit._run_exitfuncs()
    _flush()
    os._exit(code)
