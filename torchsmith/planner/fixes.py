"""Known fixes that apply to the planned combination (matched by PEP 440 specifiers against the
build's versions); refusals become plan problems. Applying them is the ``fixes`` step's job
(:mod:`torchsmith.steps.edits`)."""

from __future__ import annotations

from collections.abc import Callable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import Fix, FixApplies
from torchsmith.plan_model import PlannedFix
from torchsmith.planner.context import Ctx


def _version(text: str | None) -> Version | None:
    if text is None:
        return None
    try:
        return Version(text.strip().lstrip("v"))
    except InvalidVersion:
        return None


def _matches(spec: str, value: str | None) -> bool:
    """An empty specifier matches anything; a non-empty one needs a version inside it."""
    if not spec:
        return True
    version = _version(value)
    if version is None:
        return False
    try:
        return SpecifierSet(spec).contains(version, prereleases=True)
    except InvalidSpecifier:
        return False


def _applies(
    when: FixApplies,
    *,
    torch: str,
    cuda: str | None,
    gcc: str | None,
    python: str | None,
    source_kind: str | None,
    python_packages: str,
) -> bool:
    if when.source and when.source != source_kind:
        return False
    if when.python_packages and when.python_packages != python_packages:
        return False
    if when.cpu is not None and when.cpu != (cuda is None):
        return False
    pairs = ((when.torch, torch), (when.cuda, cuda), (when.gcc, gcc), (when.python, python))
    return all(_matches(spec, value) for spec, value in pairs)


def applicable_fixes(
    kb: KnowledgeBase,
    *,
    torch: str,
    cuda: str | None,
    gcc: str | None,
    python: str | None,
    source_kind: str | None = None,
    python_packages: str | None = None,
) -> list[Fix]:
    """The fixes of ``kb`` whose ranges all contain this build, in registry order.

    ``cuda`` is ``None`` for a CPU build, ``gcc`` is the GCC major (or full) version or ``None``
    when the host compiler is not GCC, ``source_kind`` is ``git``, ``debian``, ``path``, ...
    ``python_packages`` is ``system`` when the build's venv sees Debian's python3-* packages,
    ``pypi`` when they come from PyPI (default: ``system`` for a Debian source, else ``pypi``).
    A fix restricted to some versions of a component never applies when that component's
    version is unknown (``None``, or ``main``/a commit for torch).
    """
    if python_packages is None:
        python_packages = "system" if source_kind == "debian" else "pypi"
    return [
        fix
        for fix in kb.fixes
        if _applies(
            fix.applies,
            torch=torch,
            cuda=cuda,
            gcc=gcc,
            python=python,
            source_kind=source_kind,
            python_packages=python_packages,
        )
    ]


def _planned(fix: Fix) -> PlannedFix:
    source = fix.sources.get("*") or next(iter(fix.sources.values()), "")
    return PlannedFix(
        id=fix.id,
        title=fix.title,
        action=fix.action,
        env=dict(fix.env),
        edits=[e.model_dump() for e in fix.edits],
        command=list(fix.command),
        explanation=fix.explanation,
        source=source,
    )


def _applicable(ctx: Ctx, cuda: str | None, gcc: str | None, python: str | None) -> list[Fix]:
    if ctx.release is None:
        return []
    return applicable_fixes(
        ctx.kb,
        torch=ctx.release.torch,
        cuda=cuda,
        gcc=gcc,
        python=python,
        source_kind=ctx.spec.source.split(":")[0],
        python_packages="system" if ctx.debian_system_python() else "pypi",
    )


def gcc_refusal(ctx: Ctx, cuda: str | None) -> Callable[[int], Fix | None]:
    """A predicate for the compiler choice: the refusing fix a gcc major would trigger."""

    def refused(major: int) -> Fix | None:
        found = _applicable(ctx, cuda, str(major), None)
        return next((f for f in found if f.action == "refuse" and f.applies.gcc), None)

    return refused


def resolve_fixes(
    ctx: Ctx, cuda: str | None, compiler: str, python: str | None
) -> list[PlannedFix]:
    gcc = compiler.split("-")[1] if compiler.startswith("gcc-") else None
    planned = []
    for fix in _applicable(ctx, cuda, gcc, python):
        if fix.action == "refuse":
            ctx.problem(f"{fix.title}: {fix.explanation}", fix.advice, "torch")
        else:
            planned.append(_planned(fix))
    return planned
