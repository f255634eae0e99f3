"""A companion's source other than Debian's source package, through torch's own providers:
``git`` (the release tag, pinned by the plan's commit when it has one, through ``--git-mirror``),
``path`` (an owned copy; the user's tree is never written to) or ``tarball`` (a file or https://
URL, its sha256 checked when given). The tree's ``version.txt``
must be the release the plan pairs with the torch (torchvision and torchaudio both keep their
version there, e.g. pytorch/vision@v0.21.0:version.txt = ``0.21.0a0``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from torchsmith.errors import InternalError, SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.plan_types import CompanionBuild
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import fetch_source
from torchsmith.sources.git import fetch_git
from torchsmith.sources.path import identity_of
from torchsmith.sources.version_check import tree_version as version_txt


def source_plan(comp: CompanionBuild) -> SourcePlan:
    if comp.source is None:
        raise InternalError(f"{comp.name} has no source of its own (Debian's is fetched)")
    own = comp.source
    ref = {"path": "", "tarball": own.location, "git": own.ref}[own.kind]
    return SourcePlan(
        kind=own.kind,
        location=own.location,
        ref=ref,
        git_mirror=own.git_mirror,
        reason=f"{comp.name}'s source",
    )


def tree_version(root: Path) -> str | None:
    """The release a companion tree says it is (``version.txt``, e.g. '0.21.0a0' → '0.21.0')."""
    text = version_txt(root)
    if not text:
        return None
    try:
        return Version(text).base_version
    except InvalidVersion:
        return None


def check_version(comp: CompanionBuild, root: Path, shown: str) -> None:
    found = tree_version(root)
    if found is None:
        raise SourceError(
            f"{comp.name} source {shown}: no readable version.txt, so which {comp.name} release "
            "it is cannot be told",
            f"give the top directory of a {comp.name} checkout or release tarball "
            "(the one that holds setup.py and version.txt)",
        )
    if found != comp.version:
        raise SourceError(
            f"{comp.name} source {shown} is {comp.name} {found}; the plan builds "
            f"{comp.name} {comp.version}, the release paired with this torch",
            f"give a {comp.name} {comp.version} tree (or tarball), or drop the "
            "--companion-source to build Debian's",
        )


def fetch_own(
    comp: CompanionBuild,
    cache_root: Path,
    env: Mapping[str, str],
    on_line: LineCallback,
    runner: Runner,
) -> dict[str, Any]:
    """The companion's own tree, fetched or copied into ``cache_root``, its version checked."""
    plan = source_plan(comp)
    if plan.kind == "git":  # pinned by the plan's commit (the KB's record or the ref given)
        recorded = comp.source.commit if comp.source else None
        cache_root.mkdir(parents=True, exist_ok=True)
        tree = fetch_git(plan, cache_root, env, runner=runner, on_line=on_line,
                         recorded_commit=lambda _plan: recorded)  # fmt: skip
        tree = dataclasses.replace(tree, version=comp.version)
    else:
        tree = fetch_source(plan, cache_root, env, runner=runner, on_line=on_line)
    shown = tree.details.get("path") or tree.details.get("location") or plan.kind
    check_version(comp, tree.root, f"{plan.kind}:{shown}")
    return {"root": str(tree.root), "identity": tree.identity, "kind": plan.kind, **tree.details}


def still_current(
    comp: CompanionBuild, recorded: Mapping[str, Any], env: Mapping[str, str], runner: Runner
) -> bool:
    """Whether a wheel an earlier run built is still of the source: a ``path`` tree the user has
    changed since is built again (a tarball is pinned by its location and sha256)."""
    if comp.source is None or comp.source.kind != "path":
        return True
    identity, _ = identity_of(Path(comp.source.location).expanduser().resolve(), env, runner)
    return bool(recorded.get("identity") == identity)
