"""Applying a patch fix's literal edits to the build tree, idempotently: every edit is checked
first (its ``find`` text occurs exactly once, or its ``replace`` text is already there), and
only when all of them check out are the files rewritten, each atomically. Which fixes apply is
the planner's decision (:mod:`torchsmith.planner.fixes`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from torchsmith import atomic
from torchsmith.errors import SourceError
from torchsmith.kb.models import Fix, PatchEdit

EditState = Literal["apply", "already"]
EditLike = PatchEdit | Mapping[str, str]


class HasEdits(Protocol):
    """A planned fix (``torchsmith.plan_model.PlannedFix``) or anything else with id and edits."""

    @property
    def id(self) -> str: ...

    @property
    def edits(self) -> Sequence[EditLike]: ...


FixLike = Fix | HasEdits | Sequence[EditLike]


@dataclass(frozen=True)
class _FileChange:
    path: Path
    new_text: str
    states: tuple[tuple[str, EditState], ...]


def _unpack(fix: FixLike) -> tuple[str, list[PatchEdit]]:
    """A Fix, anything with ``id``/``edits`` (a PlannedFix), or a plain sequence of edits."""
    if isinstance(fix, Fix):
        return fix.id, list(fix.edits)
    if isinstance(fix, Sequence):
        return "?", _edits(fix)
    return fix.id, _edits(fix.edits)


def _edits(items: Iterable[EditLike]) -> list[PatchEdit]:
    return [e if isinstance(e, PatchEdit) else PatchEdit.model_validate(dict(e)) for e in items]


def _target(root: Path, rel: str, fix_id: str) -> Path:
    path = (root / rel).resolve()
    if Path(rel).is_absolute() or not path.is_relative_to(root.resolve()):
        raise SourceError(
            f"fix {fix_id}: edit path {rel!r} leaves the source tree",
            "fix the knowledge-base record: edit paths are relative to the source root",
        )
    if not path.is_file():
        raise SourceError(
            f"fix {fix_id}: {rel} does not exist in {root}",
            "is this the source tree of the release the fix is for?",
        )
    return path


def _state(text: str, edit: PatchEdit, fix_id: str) -> EditState:
    if not edit.find:
        raise SourceError(f"fix {fix_id}: an edit of {edit.path} has an empty 'find' text")
    found = text.count(edit.find)
    done = text.count(edit.replace) if edit.replace else 0
    if done and found == done * edit.replace.count(edit.find):
        return "already"
    if found == 1:
        return "apply"
    raise SourceError(
        f"fix {fix_id}: {edit.path}: the text to replace occurs {found} times (expected once) "
        f"and the fix is not already applied:\n{_excerpt(edit.find)}",
        "the source differs from the release this fix was written for; nothing was changed",
    )


def _excerpt(text: str, limit: int = 200) -> str:
    short = text if len(text) <= limit else text[:limit] + "…"
    return "\n".join(f"    | {line}" for line in short.splitlines())


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def _plan_file(path: Path, edits: Sequence[PatchEdit], fix_id: str) -> _FileChange:
    text = _read(path)
    states: list[tuple[str, EditState]] = []
    for edit in edits:
        state = _state(text, edit, fix_id)
        if state == "apply":
            text = text.replace(edit.find, edit.replace, 1)
        states.append((edit.path, state))
    return _FileChange(path, text, tuple(states))


def _plan(root: Path, fix_id: str, edits: Sequence[PatchEdit]) -> list[_FileChange]:
    by_file: dict[str, list[PatchEdit]] = {}
    for edit in edits:
        by_file.setdefault(edit.path, []).append(edit)
    return [_plan_file(_target(root, rel, fix_id), group, fix_id) for rel, group in by_file.items()]


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s text atomically, keeping its mode (:mod:`torchsmith.atomic`)."""
    atomic.write_text(path, text, mode=path.stat().st_mode & 0o7777)


def apply_edits(root: Path, fix: FixLike, *, dry_run: bool = False) -> list[str]:
    """Apply a patch fix's edits under ``root``; return one line per edit.

    ``fix`` is a :class:`Fix`, a planned fix (anything with ``id`` and ``edits``) or a sequence
    of edits (:class:`PatchEdit` or mappings with ``path``/``find``/``replace``). Every edit is
    checked before any file is written; an edit whose ``replace`` text is already present is
    a no-op, so applying a fix twice changes nothing. With ``dry_run`` nothing is written.
    Raises :class:`SourceError` naming the fix and the file when an edit does not fit.
    """
    fix_id, edits = _unpack(fix)
    changes = _plan(Path(root), fix_id, edits)
    if not dry_run:
        for change in changes:
            if any(state == "apply" for _, state in change.states):
                _write_atomic(change.path, change.new_text)
    verb = {"apply": "would apply" if dry_run else "applied", "already": "already applied"}
    return [f"{rel}: {verb[state]}" for change in changes for rel, state in change.states]
