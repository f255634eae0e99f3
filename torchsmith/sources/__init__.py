"""Source providers: git, tarball, path, debian, bundle. Each yields a :class:`SourceTree`.

The pipeline calls :func:`fetch_source` with the plan's :class:`SourcePlan`; fix commands that
refer to extra sources go through :func:`expand_placeholders` with the tree's ``details``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from pathlib import Path

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources.base import SourceTree
from torchsmith.sources.extras import expand_placeholders
from torchsmith.sources.identity import check_identity

__all__ = ["SourceTree", "expand_placeholders", "fetch_source"]

# kind -> (module, function); every provider has the signature of fetch_source.
_PROVIDERS = {
    "debian": ("torchsmith.sources.debian", "fetch_debian"),
    "git": ("torchsmith.sources.git", "fetch_git"),
    "tarball": ("torchsmith.sources.tarball", "fetch_tarball"),
    "path": ("torchsmith.sources.path", "fetch_path"),
    "bundle": ("torchsmith.sources.bundle", "fetch_bundle"),
}


_CHECKS_DEPS = {"debian"}  # providers that check the host's build dependencies


def fetch_source(
    source_plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    runner: Runner,
    install_deps: bool = False,
    check_deps: bool = True,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """Fetch (or reuse from ``cache_root``) the source tree the plan names. ``check_deps``:
    demand (or with ``install_deps`` install) what building it on this machine needs; off for
    a bundle, which is packed here and built on another machine."""
    if source_plan.kind not in _PROVIDERS:
        raise SourceError(
            f"the {source_plan.kind!r} source provider is not available in this torchsmith",
            f"available: {', '.join(sorted(_PROVIDERS))}",
        )
    module_name, func_name = _PROVIDERS[source_plan.kind]
    provider = getattr(importlib.import_module(module_name), func_name)
    cache_root.mkdir(parents=True, exist_ok=True)
    extra = {} if check_deps or source_plan.kind not in _CHECKS_DEPS else {"check_deps": False}
    tree: SourceTree = provider(
        source_plan,
        cache_root,
        env,
        runner=runner,
        install_deps=install_deps,
        on_line=on_line,
        **extra,
    )
    note = check_identity(tree, kb.load())
    return dataclasses.replace(tree, details={**tree.details, "identity_check": note})
