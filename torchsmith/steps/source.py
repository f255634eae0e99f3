"""Step "fetch": get the source tree from its provider, then give the workspace its own copy.

The build never touches the fetched tree (a user's checkout stays unmodified; a cached Debian
or git tree stays pristine for other plans): fixes are applied to, and the build runs in, the
workspace's ``src/`` copy, made once and atomically. ``--in-place`` builds in the tree itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torchsmith.errors import SourceError
from torchsmith.sources.base import SourceTree
from torchsmith.steps.context import BuildContext

FetchSource = Callable[..., SourceTree]


def _fetcher() -> FetchSource:
    try:
        module: Any = importlib.import_module("torchsmith.sources")
        fetch: FetchSource = module.fetch_source
    except (ImportError, AttributeError) as exc:
        raise SourceError(
            "this torchsmith has no source providers (torchsmith.sources.fetch_source)",
            "update torchsmith; meanwhile use a prepared tree with --source path:DIR",
        ) from exc
    return fetch


def fetch(ctx: BuildContext, env: dict[str, str]) -> SourceTree:
    """The fetched source tree (providers cache their downloads under the cache root)."""
    with ctx.stage("fetch", f"{ctx.plan.source.kind} {ctx.plan.source.location}"):
        tree = _fetcher()(
            ctx.plan.source,
            ctx.options.cache_root / "sources",
            env,
            install_deps=ctx.options.install_deps,
            on_line=_logger(ctx.log("fetch")),
        )
    ctx.reporter.message(f"source {tree.kind} {tree.version} at {tree.root} ({tree.identity})")
    return tree


def _logger(path: Path) -> Callable[[str], None]:
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(line: str) -> None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    return write


def build_tree(ctx: BuildContext, tree: SourceTree) -> Path:
    """Where the build runs: the workspace copy (made once), or the tree for --in-place."""
    if ctx.plan.source.in_place:
        return tree.root
    dest = ctx.workspace.src
    if dest.is_dir():
        return dest
    with ctx.stage("copy", f"source → {dest}"):
        ctx.executor.copy_in(tree.root, dest)
    return dest
