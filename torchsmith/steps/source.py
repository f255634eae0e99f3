"""Step "fetch": get the source tree from its provider, then give the workspace its own copy.

The build never touches the fetched tree (a user's checkout stays unmodified; a cached Debian
or git tree stays pristine for other plans): fixes are applied to, and the build runs in, the
workspace's ``src/`` copy, made once and atomically. ``--in-place`` builds in the tree itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from torchsmith.planner.reproducible import EPOCH, epoch_rule_of
from torchsmith.redact import redact_url
from torchsmith.sources import fetch_source
from torchsmith.sources.base import SourceTree
from torchsmith.sources.epoch import SourceEpoch, source_epoch
from torchsmith.sources.git import unpinned_warning
from torchsmith.sources.version_check import check_tree_version
from torchsmith.steps.context import BuildContext
from torchsmith.steps.recorded import check_epoch, check_source
from torchsmith.steps.state import BuildState

EPOCH_MARKER = "source-epoch"
"""The workspace's record of the epoch resolved for its tree (``stages/source-epoch.done``)."""


def fetch(ctx: BuildContext, env: dict[str, str]) -> SourceTree:
    """The fetched source tree (providers cache their downloads under the cache root)."""
    with ctx.stage("fetch", f"{ctx.plan.source.kind} {redact_url(ctx.plan.source.location)}"):
        tree = fetch_source(
            ctx.plan.source,
            ctx.options.cache_root / "sources",
            env,
            runner=ctx.executor,
            install_deps=ctx.options.install_deps,
            on_line=_logger(ctx.log("fetch")),
        )
        check_tree_version(tree, ctx.plan.torch.value)
    ctx.reporter.message(f"source {tree.kind} {tree.version} at {tree.root} ({tree.identity})")
    if tree.kind == "git" and tree.details.get("pinned_by") == "nothing":  # loud (review M2)
        ctx.reporter.message(unpinned_warning(tree.details.get("ref", ""), tree.identity))
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


def recorded_epoch(ctx: BuildContext, tree: SourceTree) -> SourceEpoch | None:
    """The epoch an earlier run of this workspace resolved for this very tree."""
    done = ctx.workspace.read_marker(EPOCH_MARKER) if ctx.workspace.is_done(EPOCH_MARKER) else {}
    if done.get("identity") != tree.identity or not str(done.get("epoch")).isdigit():
        return None
    return SourceEpoch(int(done["epoch"]), str(done.get("epoch_from", "")))


def with_epoch(ctx: BuildContext, tree: SourceTree, env: dict[str, str]) -> SourceTree:
    """``tree`` with its SOURCE_DATE_EPOCH as the plan says to get it (planner/reproducible.py),
    resolved once per workspace and recorded there: a resumed build uses the same value."""
    found = recorded_epoch(ctx, tree)
    if found is None:
        rule = epoch_rule_of(ctx.plan.env_dict().get(EPOCH))
        found = source_epoch(rule, tree.root, tree.details, env, ctx.executor)
        ctx.workspace.mark_done(EPOCH_MARKER, {"identity": tree.identity, **found.record()})
    ctx.reporter.message(f"{EPOCH} {found.epoch}: {found.epoch_from}")
    return dataclasses.replace(tree, epoch=found.epoch, epoch_from=found.epoch_from)


def run_fetch(ctx: BuildContext, state: BuildState) -> None:
    """Step ``fetch``: the tree, and the epoch of its build."""
    tree = fetch(ctx, state.base_env)
    check_source(ctx.options.recorded, tree)  # rebuild: the recorded tree only
    state.fetched = with_epoch(ctx, tree, state.base_env)
    check_epoch(ctx.options.recorded, state.fetched)  # rebuild: the recorded epoch only


def run_copy(ctx: BuildContext, state: BuildState) -> None:
    """Step ``copy``: the tree the later steps build in."""
    state.tree = build_tree(ctx, state.need_fetched())
