"""Debian's own patch series (``debian/patches/series``), applied with quilt's semantics:
in order, ``-p1`` unless the series line says otherwise, each checked with a dry run first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import SourceError
from torchsmith.runner import Completed, LineCallback, Runner


@dataclass(frozen=True)
class SeriesEntry:
    name: str
    strip: str = "1"


def read_series(tree: Path) -> list[SeriesEntry]:
    """The patches listed in ``debian/patches/series`` (empty when there is none)."""
    series = tree / "debian" / "patches" / "series"
    if not series.is_file():
        return []
    entries = []
    for raw in series.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, *opts = line.split()
        strip = next((o[2:] for o in opts if o.startswith("-p")), "1")
        entries.append(SeriesEntry(name, strip))
    return entries


def _patch(
    tree: Path, entry: SeriesEntry, env: Mapping[str, str], dry_run: bool, runner: Runner
) -> Completed:
    patch_file = tree / "debian" / "patches" / entry.name
    argv = ["patch", f"-p{entry.strip}", "--forward", "--batch", "-s", "-i", str(patch_file)]
    return runner.run([*argv, "--dry-run"] if dry_run else argv, env=env, cwd=tree, check=False)


def apply_series(
    tree: Path, env: Mapping[str, str], runner: Runner, on_line: LineCallback | None = None
) -> list[str]:
    """Apply every patch of the series in order; the names applied. A patch whose dry run
    fails stops everything with the patch's name and patch's own words."""
    applied = []
    for entry in read_series(tree):
        for dry_run in (True, False):
            done = _patch(tree, entry, env, dry_run, runner)
            if done.returncode != 0:
                raise SourceError(
                    f"Debian patch {entry.name} does not apply"
                    + (" (dry run)" if dry_run else "")
                    + ": "
                    + " / ".join(done.tail[-4:]),
                    "the Debian source tree differs from what its patch series expects; "
                    "fetch it again, or report this to torchsmith",
                )
        applied.append(entry.name)
        if on_line is not None:
            on_line(f"debian: applied patch {entry.name}")
    return applied
