"""Reading ninja's progress lines.

torchsmith sets ``NINJA_STATUS`` to :data:`NINJA_STATUS` so every edge ninja starts prints
``[finished/total elapsed_s] description``; :func:`parse_status` turns that into a
:class:`NinjaStatus` and names the stage the edge belongs to (codegen, compile, link).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

NINJA_STATUS = "[%f/%t %es] "
_STATUS = re.compile(r"^\[(\d+)/(\d+) (\d+(?:\.\d+)?)s\] (.*)$")
# ninja's default status, for logs made without our NINJA_STATUS
_DEFAULT_STATUS = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")
EdgeKind = Literal["codegen", "compile", "link", "other"]


@dataclass(frozen=True)
class NinjaStatus:
    finished: int
    total: int
    elapsed: float | None
    description: str

    @property
    def kind(self) -> EdgeKind:
        return edge_kind(self.description)

    def eta_seconds(self) -> float | None:
        """Seconds left at the average pace so far, None until the pace is known."""
        if self.elapsed is None or self.finished < 3 or self.elapsed <= 0:
            return None
        return self.elapsed / self.finished * (self.total - self.finished)


def edge_kind(description: str) -> EdgeKind:
    """Which stage a ninja edge belongs to, from CMake's descriptions."""
    if description.startswith("Linking"):
        return "link"
    if description.startswith(("Building", "Compiling")):
        return "compile"
    if description.startswith(("Generating", "Running", "Writing")):
        return "codegen"
    return "other"


def parse_status(line: str) -> NinjaStatus | None:
    """The status of one output line of ninja, None for any other line."""
    match = _STATUS.match(line)
    if match:
        done, total, elapsed, desc = match.groups()
        return NinjaStatus(int(done), int(total), float(elapsed), desc)
    match = _DEFAULT_STATUS.match(line)
    if match:
        done, total, desc = match.groups()
        return NinjaStatus(int(done), int(total), None, desc)
    return None


@dataclass(frozen=True)
class NinjaSummary:
    """What a ninja run did: edges run, out of how many, split by kind."""

    edges_run: int
    edges_total: int
    by_kind: dict[str, int]


def summarize(lines: list[str]) -> NinjaSummary:
    """Count the edges of a ninja log (the last status line gives finished/total)."""
    statuses = [s for s in (parse_status(line) for line in lines) if s is not None]
    by_kind: dict[str, int] = {}
    for status in statuses:
        by_kind[status.kind] = by_kind.get(status.kind, 0) + 1
    last = statuses[-1] if statuses else None
    return NinjaSummary(
        last.finished if last else 0, last.total if last else 0, dict(sorted(by_kind.items()))
    )
