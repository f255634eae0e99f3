"""Where each companion's source comes from — the same sources torch has. By default the
route of ``--source``: Debian's source package for ``--source debian``, else pytorch's own
repository at the paired release tag (``git``: the git provider torch uses, with the same
pinning and ``--git-mirror``). ``--companion-source NAME=…`` picks another: ``git``,
``git#REF``, ``git:URL[#REF]``, ``path:DIR``, ``tarball:URL_OR_FILE[#sha256=HEX]`` or
``debian``. Pure."""

from __future__ import annotations

from typing import Any, Literal

from torchsmith.plan_model import CompanionPlan
from torchsmith.planner.context import Ctx
from torchsmith.redact import redact_url

GITHUB = "https://github.com/"
REPOSITORY = {
    "torchvision": "pytorch/vision",
    "torchaudio": "pytorch/audio",
    "torchtext": "pytorch/text",
}
"""Each companion's upstream repository (its release tags are ``v<version>``)."""
Route = Literal["debian", "git", "path", "tarball"]


def given(ctx: Ctx, name: str) -> str:
    """The source asked for companion ``name``: its own, else the route of ``--source``."""
    own = ctx.spec.companion_source.of(name)
    if own is not None:
        return own
    return "debian" if ctx.spec.source == "debian" else "git"


def route(ctx: Ctx, name: str) -> Route:
    kind = given(ctx, name).partition(":")[0].split("#", 1)[0]
    match kind:
        case "debian" | "git" | "path" | "tarball":
            return kind
        case _:
            return "git"


def repository_url(name: str) -> str:
    return f"{GITHUB}{REPOSITORY[name]}.git"


def recorded_commit(ctx: Ctx, name: str, tag: str) -> str | None:
    """The commit the knowledge base records for ``name``'s ``tag`` (None: not recorded)."""
    del ctx, name, tag  # the KB records no companion tag's commit yet (see docs/planning.md)
    return None


def _git_fields(ctx: Ctx, comp: CompanionPlan) -> dict[str, Any]:
    """The git source: pytorch's repository (through --git-mirror) or the URL given, at the
    paired tag (or the ref given)."""
    text = given(ctx, comp.name)
    url, _, ref = text.removeprefix("git").removeprefix(":").partition("#")
    upstream = not url
    location = repository_url(comp.name) if upstream else url
    ref = ref or comp.tag
    commit = ref if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref) else None
    if commit is None and upstream:
        commit = recorded_commit(ctx, comp.name, ref)
    mirror = ctx.spec.git_mirror if location.startswith(GITHUB) else None
    if commit is None:
        ctx.warnings.append(unpinned(comp.name, location, ref, mirror))
    through = f", through mirror {redact_url(mirror)}" if mirror else ""
    why = f"git {redact_url(location)} {ref}{through}"
    source = {"kind": "git", "location": location, "ref": ref, "git_mirror": mirror}
    return {"source": {**source, "commit": commit}, "why": why}


def unpinned(name: str, location: str, ref: str, mirror: str | None) -> str:
    """The plan's warning for a companion tag no commit pins (as torch's fetch gives it)."""
    if mirror:
        return (
            f"{name} {ref} has no commit recorded in the knowledge base: the fetch through "
            "--git-mirror will refuse it (the mirror would be its only witness); give the commit "
            f"(--companion-source {name}=git#<40-hex sha>) or fetch without the mirror"
        )
    return (
        f"{name} {ref} has no commit recorded in the knowledge base: the fetch trusts whatever "
        f"{redact_url(location)} serves for it, names the commit it got and records it in the "
        "manifest (pinned_by: nothing); pin it with --companion-source "
        f"{name}=git#<40-hex sha>"
    )


def source_fields(ctx: Ctx, comp: CompanionPlan) -> dict[str, Any] | None:
    """The companion's source fields and the reason (``why``), or None for Debian's package
    (its fields come from the knowledge base's Debian record)."""
    kind = route(ctx, comp.name)
    if kind == "debian":
        return None
    if kind == "git":
        return _git_fields(ctx, comp)
    location = given(ctx, comp.name).partition(":")[2]
    why = f"its own source {kind}:{redact_url(location)} (companion_source.{comp.name})"
    return {"source": {"kind": kind, "location": location}, "why": why}
