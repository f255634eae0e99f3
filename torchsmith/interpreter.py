"""How a ``--python`` / ``python:`` value names an interpreter, in one place for every command
(inspect, verify, doctor --env, --against, --smoke-python)."""

from __future__ import annotations

from pathlib import Path


def invocable(python: str) -> str:
    """``python`` as something any directory can run: a bare name (``python3``) is left to the
    PATH lookup, a path with a ``/`` (``.venv/bin/python``) is made absolute against the working
    directory — the probes run in an empty temporary directory, where a relative path names
    nothing. Symlinks are kept: a venv's ``bin/python`` is a link, and resolving it would leave
    the venv."""
    if "/" not in python:
        return python
    return str(Path.cwd() / Path(python).expanduser())
