"""What a test needs from the machine, said once: locally a missing resource skips the test
with how to get it; under ``CI=true`` it FAILS, so CI never goes quietly green.

Prefer obtaining a resource in a fixture (pip download, the toolkit providers) over requiring it;
``require`` is for what a test command cannot obtain by itself (root, a GPU, a Debian host)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
from collections.abc import Mapping
from types import ModuleType

import pytest

CI_TRUE = frozenset({"1", "true", "yes"})


def in_ci(env: Mapping[str, str] | None = None) -> bool:
    """``CI`` is set to a true value (GitHub Actions, GitLab and .ci/run set ``CI=true``)."""
    value = (os.environ if env is None else env).get("CI", "")
    return value.strip().lower() in CI_TRUE


def require(condition: object, what: str, how_to_get: str) -> None:
    """Go on when ``condition`` holds; else skip (locally) or fail (under ``CI=true``)."""
    if condition:
        return
    message = f"missing: {what} (to get it: {how_to_get})"
    if in_ci():
        pytest.fail(f"CI=true and a test resource is {message}", pytrace=False)
    pytest.skip(message)


def require_tool(name: str, how_to_get: str = "run scripts/setup-system-deps") -> str:
    """The path of executable ``name`` on PATH (skip/fail as :func:`require` when absent)."""
    path = shutil.which(name)
    require(path is not None, f"{name} on PATH", how_to_get)
    assert path is not None
    return path


def require_root(why: str) -> None:
    require(os.geteuid() == 0, f"root ({why})", "run the tests as root, as CI does")


def require_module(name: str, how_to_get: str) -> ModuleType:
    """Python module ``name`` of this interpreter, imported (skip/fail as :func:`require`)."""
    require(importlib.util.find_spec(name) is not None, f"Python module {name}", how_to_get)
    return importlib.import_module(name)
