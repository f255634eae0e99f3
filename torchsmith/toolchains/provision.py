"""Glue for the build pipeline's ``toolchain`` step: turn the plan's toolkit decision into a
toolkit root (provisioned into the cache when needed) and the variables the build runs with.

Pipeline use (one call before the environment step)::

    record = provision_toolkit(plan.cuda.value, plan.toolkit.value, host, ProvideContext(...))
    env = toolkit_build_env(record, env)   # CUDA_HOME, CUDACXX, PATH, ...
    manifest["toolkit"] = record.model_dump() if record else None
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import PlanError, Problem
from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_select import select_toolkit
from torchsmith.toolchains.cuda.apt import AptProvider
from torchsmith.toolchains.cuda.base import ProvideContext, ToolkitProvider, ToolkitRecord
from torchsmith.toolchains.cuda.pypi import PypiProvider
from torchsmith.toolchains.cuda.system import SystemProvider


def default_providers() -> tuple[ToolkitProvider, ...]:
    """In order of preference (the order of :data:`~torchsmith.planner.toolkit_offers.OFFERERS`):
    what the machine has, then downloads."""
    return (SystemProvider(), PypiProvider(), AptProvider())


def provider_named(
    name: str, providers: tuple[ToolkitProvider, ...] | None = None
) -> ToolkitProvider:
    for provider in providers or default_providers():
        if provider.name == name:
            return provider
    raise PlanError(
        [
            Problem(
                f"toolkit provider {name!r} cannot be run here",
                "use --toolkit system, pypi or apt; 'container' needs the container backend",
                "toolkit",
            )
        ]
    )


def provision_toolkit(
    cuda: str | None, toolkit: str | None, host: HostFacts, ctx: ProvideContext
) -> ToolkitRecord | None:
    """The toolkit of a plan (None for a CPU build); ``toolkit`` 'auto'/None selects one."""
    if cuda is None:
        return None
    if toolkit in (None, "auto"):
        toolkit, _reason = select_toolkit(cuda, host)
    provider = provider_named(toolkit)
    return provider.provide(cuda, host, ctx)


def toolkit_build_env(record: ToolkitRecord | None, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` plus the toolkit's variables, its bin/ first on PATH."""
    env = dict(base)
    if record is None:
        return env
    env.update(record.env())
    env["PATH"] = f"{Path(record.root) / 'bin'}:{base.get('PATH', '/usr/bin:/bin')}"
    return env
