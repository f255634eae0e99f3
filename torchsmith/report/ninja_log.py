"""Reading ninja's ``.ninja_log``: what each edge built, when it started and ended.

Format (ninja's src/build_log.cc, versions 5 and 6): a ``# ninja log vN`` header, then one
tab-separated line per *output*: ``start_ms end_ms mtime output cmdhash``. An edge with several
outputs writes one line per output with the same start, end and command hash. Times restart at 0
for every ninja run and lines are appended in completion order, so an end time smaller than the
one before marks a new run (the rule github.com/nico/ninjatracing uses). :func:`chrome_trace`
writes the Chrome trace event format (``ph: X`` complete events, one ``tid`` per job slot).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from torchsmith.errors import UsageError

TRACE_OUTPUTS = 20  # outputs listed per trace event (ATen's codegen edge writes thousands)
# CMake's utility targets (install, install/local, edit_cache, rebuild_cache, list_install_
# components): what setup.py's trailing `cmake --build . --target install` run does, no building.
_UTILITY = re.compile(r"^CMakeFiles/[\w.-]+\.util$")


@dataclass(frozen=True)
class NinjaEdge:
    """One edge of one ninja run: seconds from the run's start, and what it wrote."""

    start: float
    end: float
    outputs: tuple[str, ...]
    cmdhash: str

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def name(self) -> str:
        """The first output, with how many more there are."""
        more = len(self.outputs) - 1
        return self.outputs[0] + (f" (+{more} more outputs)" if more else "")


# ninja keeps an edge's start and end as an `int` of milliseconds since the run began
# (ninja-build/ninja src/build_log.h, LogEntry::start_time/end_time): nothing it writes is larger.
MAX_MS = 2**31 - 1


def _fields(line: str, number: int) -> tuple[int, int, str, str]:
    parts = line.split("\t")
    if len(parts) != 5 or not parts[0].isdigit() or not parts[1].isdigit():
        raise UsageError(
            f".ninja_log line {number} is not 'start end mtime output hash': {line[:120]!r}",
            "pass the build directory's .ninja_log as ninja wrote it (format v5 or v6)",
        )
    start, end = int(parts[0]), int(parts[1])
    if end > MAX_MS or start > end:  # trial R10: end 99999999999999999999 became 1e17 s
        raise UsageError(
            f".ninja_log line {number} has times ninja never writes (start {parts[0][:24]} ms, "
            f"end {parts[1][:24]} ms: ninja's are at most {MAX_MS} ms and end after start): "
            f"{line[:120]!r}",
            "pass the build directory's .ninja_log as ninja wrote it (format v5 or v6)",
        )
    return start, end, parts[3], parts[4]


def _check_header(first: str) -> None:
    if not first.startswith("# ninja log v"):
        raise UsageError(
            f"not a .ninja_log: the first line is {first[:60]!r}",
            "ninja's log starts with '# ninja log v5' or v6; pass <build dir>/.ninja_log",
        )


def parse_runs(text: str) -> list[list[NinjaEdge]]:
    """Every ninja run recorded in the log, oldest first, each a list of edges in end order."""
    lines = text.splitlines()
    _check_header(lines[0] if lines else "")
    runs: list[dict[tuple[int, int, str], list[str]]] = [{}]
    last_end = -1
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        start, end, output, cmdhash = _fields(line, number)
        if end < last_end:
            runs.append({})
        last_end = end
        runs[-1].setdefault((start, end, cmdhash), []).append(output)
    return [_edges(run) for run in runs if run]


def _edges(run: dict[tuple[int, int, str], list[str]]) -> list[NinjaEdge]:
    return [
        NinjaEdge(start / 1000, end / 1000, tuple(outputs), cmdhash)
        for (start, end, cmdhash), outputs in run.items()
    ]


def is_utility(edge: NinjaEdge) -> bool:
    """Every output is a CMake utility target (``CMakeFiles/install.util``): nothing built."""
    return all(_UTILITY.match(output) for output in edge.outputs)


def building_runs(runs: Sequence[list[NinjaEdge]]) -> list[list[NinjaEdge]]:
    """The runs that built something, oldest first; setup.py's trailing install run (one
    ``CMakeFiles/install.util`` edge) is left out. A log whose runs all only ran utility
    targets keeps its last run."""
    built = [run for run in runs if not all(is_utility(e) for e in run)]
    return built or list(runs[-1:])


def end_to_end(runs: Sequence[list[NinjaEdge]]) -> list[NinjaEdge]:
    """The edges of several runs on one time axis, each run starting where the one before
    ended (the log holds no time between runs: the gaps are left out, the work is not)."""
    edges: list[NinjaEdge] = []
    offset = 0.0
    for run in runs:
        shift = offset - min(e.start for e in run) if edges else 0.0
        edges += [replace(e, start=e.start + shift, end=e.end + shift) for e in run]
        offset = max(e.end for e in edges)
    return edges


def assign_slots(edges: Sequence[NinjaEdge]) -> list[int]:
    """A job slot per edge (the lowest slot free at its start), as a timeline lane."""
    order = sorted(range(len(edges)), key=lambda i: (edges[i].start, edges[i].end))
    free_at: list[float] = []
    slots = [0] * len(edges)
    for index in order:
        edge = edges[index]
        slot = next((s for s, t in enumerate(free_at) if t <= edge.start), len(free_at))
        if slot == len(free_at):
            free_at.append(0.0)
        free_at[slot] = edge.end
        slots[index] = slot
    return slots


def chrome_trace(edges: Sequence[NinjaEdge]) -> dict[str, Any]:
    """The run as Chrome trace events (chrome://tracing, Perfetto, speedscope)."""
    events = [
        {
            "name": edge.name,
            "cat": "ninja",
            "ph": "X",
            "ts": round(edge.start * 1e6),
            "dur": round(edge.duration * 1e6),
            "pid": 0,
            "tid": slot,
            "args": {
                "outputs": list(edge.outputs[:TRACE_OUTPUTS]),
                "outputs_total": len(edge.outputs),
                "cmdhash": edge.cmdhash,
            },
        }
        for edge, slot in zip(edges, assign_slots(edges), strict=True)
    ]
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def concurrency(edges: Iterable[NinjaEdge]) -> list[tuple[float, int]]:
    """(time, jobs running from then on) at every start/end: a step function."""
    deltas: dict[float, int] = {}
    for edge in edges:
        deltas[edge.start] = deltas.get(edge.start, 0) + 1
        deltas[edge.end] = deltas.get(edge.end, 0) - 1
    running = 0
    steps: list[tuple[float, int]] = []
    for moment in sorted(deltas):
        running += deltas[moment]
        steps.append((moment, running))
    return steps


def busy_average(edges: Sequence[NinjaEdge]) -> float:
    """Mean number of jobs running over the run's wall time (0 for an empty run)."""
    if not edges:
        return 0.0
    wall = max(e.end for e in edges) - min(e.start for e in edges)
    return sum(e.duration for e in edges) / wall if wall > 0 else 0.0
