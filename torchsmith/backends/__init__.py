"""Backends: where a build's steps run. One executor interface (:mod:`.base`); one entry per
backend in :data:`EXECUTORS` (planner/support.py's PIPELINE names the same set, by test)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from torchsmith.backends.base import Executor
from torchsmith.backends.local import LocalExecutor
from torchsmith.errors import UsageError

EXECUTORS: Mapping[str, Callable[[Mapping[str, str]], Executor]] = {"local": LocalExecutor}


def make_executor(kind: str, base_env: Mapping[str, str]) -> Executor:
    """The executor for the plan's backend name (the planner refused any other)."""
    factory = EXECUTORS.get(kind)
    if factory is None:
        raise UsageError(
            f"backend {kind!r} is not implemented yet",
            "build with --backend local (the default)",
        )
    return factory(base_env)


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "make_executor"]
