"""Which torch, which companions, which Python, which source."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from torchsmith.errors import UnknownEntryError
from torchsmith.kb.models import Release
from torchsmith.plan_model import CompanionPlan, Decision, SourcePlan
from torchsmith.planner.context import Ctx, decide, minor_version
from torchsmith.planner.free_threaded import interpreter_row
from torchsmith.planner.ranges import check_python, way_out
from torchsmith.redact import redact_url
from torchsmith.spec import COMPANIONS

PYTORCH_GIT = "https://github.com/pytorch/pytorch.git"
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_FULL_COMMIT = re.compile(r"^[0-9a-f]{40}$")  # sources.git's _SHA: what the fetch pins itself to


def resolve_torch(ctx: Ctx) -> Decision[str]:
    wanted = ctx.spec.torch
    if wanted is None:
        rel = ctx.kb.newest_release()
        ctx.release = rel
        return decide(rel.torch, "default", "newest release the knowledge base knows")
    if _COMMIT.match(wanted.lower()):
        ctx.release = ctx.kb.release("main")
        ctx.warnings.append(
            f"commit {wanted}: planned with the facts of `main`; a commit from an older branch "
            "may need an older release's settings (give --torch X.Y.Z for those)"
        )
        return ctx.user("torch", wanted.lower(), f"commit {wanted} (planned as main)")
    try:
        ctx.release = ctx.kb.release(wanted)
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "torch")
        return ctx.user("torch", wanted)
    return ctx.user("torch", ctx.release.torch)


def tag_of(torch: str, rel: Release | None) -> str:
    if _COMMIT.match(torch):
        return torch
    return rel.tag if rel else f"v{torch}"


def pinned_commit(source: SourcePlan, rel: Release | None) -> str | None:
    """The commit the git fetch will insist on (``sources.git.expected_commit``): the ref when it
    is a full commit, else the knowledge base's record of the release tag; None: unpinned."""
    if source.kind != "git":
        return None
    if _FULL_COMMIT.match(source.ref):
        return source.ref
    return rel.commit if rel is not None and rel.tag == source.ref else None


def _unpinned(source: SourcePlan) -> str:
    """The plan's warning for a git ref no commit pins (security review f1b4bec M2)."""
    if source.git_mirror:
        return (
            f"{source.ref} has no commit recorded in the knowledge base: the fetch through "
            "--git-mirror will refuse it (the mirror would be its only witness); give the commit "
            "(--torch <40-hex sha>) or fetch without the mirror"
        )
    return (
        f"{source.ref} has no commit recorded in the knowledge base: the fetch trusts whatever "
        f"{source.location} serves for it, names the commit it got and records it in the "
        "manifest (pinned_by: nothing); pin it with --torch <40-hex sha>"
    )


def _companion_version(rel: Release, name: str) -> str | None:
    value: str | None = getattr(rel, name)
    return value


def _companion_tag(version: str) -> str:
    """The companion's git ref: its release tag, or its ``main`` branch (torch ``main``)."""
    return version if version == "main" else f"v{version}"


def resolve_companions(ctx: Ctx) -> list[CompanionPlan]:
    rel = ctx.release
    if rel is None:
        return []
    asked = list(ctx.spec.companions)
    if "auto" in asked:
        asked = [c for c in COMPANIONS if _companion_version(rel, c)] + [
            a for a in asked if a != "auto"
        ]
    plans: dict[str, CompanionPlan] = {}
    for item in asked:
        name, _, pin = item.partition("=")
        pin = pin.lstrip("=")
        plan = _one_companion(ctx, rel, name, pin)
        if plan is not None:
            plans.setdefault(name, plan)
    return list(plans.values())


def _made_for(ctx: Ctx, name: str, pin: str) -> str:
    """The torch releases the knowledge base pairs with ``name`` ``pin``, or — a pairing it
    does not know — the nearest releases of ``name`` it does know."""
    torches = [r.torch for r in ctx.kb.releases if _companion_version(r, name) == pin]
    if torches:
        return f"--torch {torches[-1]} (the torch {name} {pin} was made for: {', '.join(torches)})"
    known = sorted(
        {v for r in ctx.kb.releases if (v := _companion_version(r, name)) and v != "main"},
        key=Version,
    )
    near = sorted(known, key=lambda v: _distance(v, pin))[:3]
    return (
        f"a {name} release the knowledge base pairs with a torch ({name} {pin} is not one; "
        f"the nearest known: {', '.join(sorted(near, key=Version))})"
    )


def _distance(version: str, pin: str) -> tuple[int, ...]:
    try:
        a, b = Version(version).release, Version(pin).release
    except InvalidVersion:
        return (99,)
    return tuple(abs(x - y) for x, y in zip((*a, 0, 0, 0)[:3], (*b, 0, 0, 0)[:3], strict=True))


def _one_companion(ctx: Ctx, rel: Release, name: str, pin: str) -> CompanionPlan | None:
    version = _companion_version(rel, name)
    source = rel.sources.get(name) or rel.sources.get("*", "")
    if version is None:
        out = way_out(ctx.kb, rel, lambda r: _companion_version(r, name) is not None)
        why = source.split(" (", 1)[1].rstrip(")") if " (" in source else ""
        ctx.problem(
            f"{name} has no release matching torch {rel.torch}" + (f" ({why})" if why else ""),
            f"drop {name}"
            + (f", or use --torch {out.split()[-1]} ({name} follows {out})" if out else ""),
            "companions",
        )
        return None
    if pin and pin != version:
        ctx.problem(
            f"{name} {pin} does not match torch {rel.torch}: the matching release is {version}",
            f"use {name}=={version}, or {_made_for(ctx, name, pin)}",
            "companions",
        )
        return None
    reason = f"matching release of torch {rel.torch} ({source})"
    return CompanionPlan(name=name, version=version, tag=_companion_tag(version), reason=reason)


def _debian_python(ctx: Ctx) -> Decision[str | None] | None:
    """Debian builds torch for its suite's python3; another Python (local builds only) gets
    its build requirements from PyPI instead of Debian's python3-* packages."""
    if ctx.spec.source != "debian" or ctx.release is None:
        return None
    try:
        pkg = ctx.kb.debian_package("pytorch", ctx.release.torch)
    except UnknownEntryError:
        return None  # reported by resolve_source
    if pkg.python is None:
        return None
    if ctx.spec.python is not None and minor_version(ctx.spec.python) != minor_version(pkg.python):
        return _debian_other_python(ctx, ctx.release, pkg.suite, pkg.python)
    return decide(
        pkg.python,
        "kb",
        f"Debian {pkg.suite} builds pytorch {pkg.version} with its /usr/bin/python3 "
        f"({pkg.python}) and the python3-* packages (numpy, yaml) only that interpreter sees",
    )


def _debian_other_python(ctx: Ctx, rel: Release, suite: str, python: str) -> Decision[str | None]:
    """Debian's tree for another Python than the suite's: that interpreter must be on the
    machine that builds (this host, or the image for --backend docker)."""
    wanted = str(ctx.spec.python)
    found = sorted({p.minor for p in ctx.host.pythons}, key=minor_version)
    if minor_version(wanted) not in {minor_version(m) for m in found}:
        ctx.problem(
            f"Debian {suite}'s pytorch for Python {wanted} is built with that interpreter, and "
            f"the build machine has none (Pythons there: {', '.join(found) or 'none'})",
            f"install Python {wanted} where it builds (e.g. pyenv install {wanted}; a "
            "container image has its python3 only: use --backend local), or drop --python "
            f"to build for {suite}'s python3 {python}",
            "python",
        )
    check_python(ctx, rel, wanted)
    return ctx.user(
        "python",
        wanted.removesuffix("t"),
        f"Debian's tree built for Python {wanted} instead of {suite}'s python3 {python}: the "
        "build requirements (numpy, pyyaml, ...) come from PyPI into the build's venv",
    )


def resolve_python(ctx: Ctx) -> Decision[str | None]:
    debian = _debian_python(ctx)
    if debian is not None:
        return debian
    rel = ctx.release
    if ctx.spec.python is not None:
        wanted = ctx.spec.python
        if rel:
            check_python(ctx, rel, wanted)
        if not wanted.endswith("t"):
            return ctx.user("python", wanted)
        if ctx.spec.backend == "local":  # the machine's answer: its free-threaded interpreter
            ctx.readiness.append(interpreter_row(wanted, ctx.host))
        why = f"free-threaded (PEP 703): the build runs on python{wanted}"
        return ctx.user("python", wanted, why)
    if rel is None:
        return decide(None, "default", "unknown torch release")
    if ctx.spec.backend != "local":  # the build's Python is the image's, never this host's
        why = f"newest Python torch {rel.torch} supports, for the {ctx.spec.backend} image"
        return decide(rel.python_max, "kb", why)
    low, high = minor_version(rel.python_min), minor_version(rel.python_max)
    for py in ctx.host.pythons:
        if low <= minor_version(py.minor) <= high:
            return decide(py.minor, "host", f"{py.path} is Python {py.version}, supported")
    return decide(
        rel.python_max,
        "kb",
        f"newest Python torch {rel.torch} supports; no supported interpreter was found here, "
        "so install it before building (`torchsmith build` checks first)",
    )


def resolve_source(ctx: Ctx, torch: str) -> SourcePlan:
    spec = ctx.spec
    kind, _, location = spec.source.partition(":")
    if kind == "git":
        source = SourcePlan(
            kind="git",
            location=PYTORCH_GIT,
            ref=tag_of(torch, ctx.release),
            git_mirror=spec.git_mirror,
            reason="git clone of the release tag with submodules"
            + (f", through mirror {spec.git_mirror}" if spec.git_mirror else ""),
        )
        if pinned_commit(source, ctx.release) is None:
            ctx.warnings.append(_unpinned(source))
        return source
    if kind == "debian":
        return _debian_source(ctx, torch)
    if kind == "bundle" and "#sha256=" not in location:
        ctx.warnings.append(
            f"bundle {location} is not pinned: anyone who can replace the file chooses the source "
            "built, and its identity is only claimed; give the 'bundle:FILE#sha256=HEX' value "
            "`torchsmith source bundle` printed"
        )
    if kind == "tarball" and "#sha256=" not in location:
        ctx.warnings.append(
            f"tarball {redact_url(location)} is not pinned: the first download is trusted as it "
            "is; add '#sha256=HEX' (the release tarball's sha256) to the location"
        )
    ref = "" if kind == "path" else location
    return SourcePlan(
        kind=kind,
        location=location,
        ref=ref,
        in_place=spec.in_place,
        reason=f"{kind} source given by the user",
    )


def _debian_source(ctx: Ctx, torch: str) -> SourcePlan:
    try:
        pkg = ctx.kb.debian_package("pytorch", torch)
    except UnknownEntryError as exc:
        ctx.problem(exc.message, exc.hint, "source")
        return SourcePlan(kind="debian", location="pytorch", ref="", reason="not available")
    return SourcePlan(
        kind="debian",
        location="pytorch",
        ref=pkg.version,
        system_python=ctx.debian_system_python(),
        reason=f"Debian {pkg.suite} source package pytorch {pkg.version} (DFSG: no "
        "submodules, built against system libraries)",
    )
