"""Backends: where a build's steps run. One executor interface (:mod:`.base`)."""

from __future__ import annotations

from collections.abc import Mapping

from torchsmith.backends.base import Executor
from torchsmith.backends.local import LocalExecutor
from torchsmith.errors import UsageError


def make_executor(kind: str, base_env: Mapping[str, str]) -> Executor:
    """The executor for the plan's backend name."""
    if kind == "local":
        return LocalExecutor(base_env)
    raise UsageError(
        f"backend {kind!r} is not implemented yet",
        "build with --backend local (the default)",
    )


__all__ = ["Executor", "LocalExecutor", "make_executor"]
