"""``image --wheels DIR``: the prebuilt wheels must be the ones the spec describes before they go
into a training image (issue 28 item 6, trial I18, I19, I27: a macOS cp311 torch 2.6.0 wheel
for a torch 1.9.1 / Python 3.9 spec, random bytes named .whl and a wheel with ``../`` members
were all taken, exit 0)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from torchsmith.errors import InspectError, Problem, SpecError
from torchsmith.inspect.wheel_checks import check_members

_LINUX = ("linux_", "manylinux", "musllinux")


def check_prebuilt(wheels: list[Path], torch: str | None, python: str | None) -> None:
    """Every problem of every wheel at once (SpecError), or nothing."""
    problems = [p for wheel in wheels for p in wheel_problems(wheel, torch, python)]
    if problems:
        raise SpecError(
            problems, "give --wheels a directory of wheels built for this spec (torchsmith build)"
        )


def wheel_problems(wheel: Path, torch: str | None, python: str | None) -> list[Problem]:
    try:
        name, version, _, tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        return [_problem(wheel, f"is not a wheel's file name ({exc})")]
    found = _archive_problems(wheel)
    found += _tag_problems(wheel, tags, python)
    if name == "torch" and torch is not None and not _same_release(version, torch):
        found.append(_problem(wheel, f"is torch {version}; the spec asks for torch {torch}"))
    return found


def _problem(wheel: Path, what: str) -> Problem:
    return Problem(f"--wheels {wheel.name} {what}", "rebuild it for this spec", field="wheels")


def _archive_problems(wheel: Path) -> list[Problem]:
    try:
        with zipfile.ZipFile(wheel) as zf:
            check_members(zf, wheel)
    except zipfile.BadZipFile:
        return [_problem(wheel, "is not a zip archive (truncated, or another file)")]
    except InspectError as exc:
        return [_problem(wheel, exc.message.removeprefix(f"{wheel.name}: "))]
    except OSError as exc:
        return [_problem(wheel, f"cannot be read ({exc.strerror or exc})")]
    return []


def _tag_problems(wheel: Path, tags: frozenset[Tag], python: str | None) -> list[Problem]:
    found = []
    if not any(t.platform == "any" or t.platform.startswith(_LINUX) for t in tags):
        platforms = ", ".join(sorted({t.platform for t in tags}))
        found.append(_problem(wheel, f"is for {platforms}, not Linux: the image cannot load it"))
    if python is not None and not any(_runs_on(t, python) for t in tags):
        wanted = "cp" + python.replace(".", "")
        shown = ", ".join(sorted({t.interpreter for t in tags}))
        found.append(_problem(wheel, f"is for {shown}; the spec's Python {python} is {wanted}"))
    return found


def _runs_on(tag: Tag, python: str) -> bool:
    """pip's rule in short: py3 / py3X pure, the same cpXY, or cpXY-abi3 up to ours."""
    ours = "cp" + python.replace(".", "")
    if tag.interpreter in {"py3", "py" + python.replace(".", "")} or tag.interpreter == ours:
        return True
    if tag.abi == "abi3" and tag.interpreter.startswith("cp3"):
        return int(tag.interpreter[3:] or 0) <= int(ours[3:])
    return False


def _same_release(version: Version, torch: str) -> bool:
    """``2.6.0+cu124`` is release 2.6.0; 'main' or a commit is not checked."""
    try:
        return version.public == Version(torch).public
    except InvalidVersion:
        return True
