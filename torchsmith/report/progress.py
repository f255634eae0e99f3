"""Live progress of a build: the real stage, ninja's [N/M] counter with an ETA, and messages.

:class:`RichProgress` draws a live display on a terminal; :class:`PlainProgress` writes one line
per event (for logs, CI, ``nohup``), throttling ninja's counter to one line every few seconds.
Both implement :class:`Reporter`, the interface the build steps talk to.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from torchsmith.report.eta import Estimate, EtaSource
from torchsmith.report.ninja import NinjaStatus


class Reporter(Protocol):
    def stage_started(self, name: str, what: str) -> None: ...
    def stage_finished(self, name: str, seconds: float, note: str = "") -> None: ...
    def ninja(self, status: NinjaStatus) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_eta(estimate: Estimate | float | None) -> str:
    """``ETA 1:52:10 (1:31–2:18)`` from the cost model; ``ETA ≥ 11:40 (pace)`` without one."""
    if estimate is None:
        return "ETA …"
    if not isinstance(estimate, Estimate) or estimate.seconds <= 0:
        seconds = estimate if not isinstance(estimate, Estimate) else 0.0
        return f"ETA {_clock(seconds)}"
    if math.isinf(estimate.high):
        return f"ETA ≥ {_clock(estimate.seconds)} (pace)"
    return f"ETA {_clock(estimate.seconds)} ({_clock(estimate.low)}–{_clock(estimate.high)})"


def _short(description: str, width: int = 60) -> str:
    return description if len(description) <= width else "…" + description[-(width - 1) :]


class PlainProgress:
    """One line per stage event; ninja progress at most every ``every`` seconds."""

    def __init__(self, console: Console, every: float = 30.0, eta: EtaSource | None = None) -> None:
        self.console = console
        self.every = every
        self._last = 0.0
        self._eta = eta or EtaSource()

    def stage_started(self, name: str, what: str) -> None:
        self.console.print(f"==> {name}: {what}", markup=False, highlight=False)

    def stage_finished(self, name: str, seconds: float, note: str = "") -> None:
        extra = f" ({note})" if note else ""
        self.console.print(f"<== {name} done in {seconds:.1f} s{extra}", markup=False)

    def ninja(self, status: NinjaStatus) -> None:
        estimate = self._eta(status)  # every line: the cost model weighs each finished edge
        now = time.monotonic()
        if now - self._last < self.every and status.finished != status.total:
            return
        self._last = now
        eta = format_eta(estimate)
        line = f"    {status.kind} [{status.finished}/{status.total}] {eta}"
        self.console.print(f"{line} {_short(status.description)}", markup=False, highlight=False)

    def message(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

    def close(self) -> None:
        return None


class RichProgress:
    """A live rich display: one row per stage, the compile row with [N/M] and an ETA."""

    def __init__(self, console: Console, eta: EtaSource | None = None) -> None:
        self._eta = eta or EtaSource()
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[eta]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._current: str | None = None
        self._progress.start()

    def stage_started(self, name: str, what: str) -> None:
        self._current = name
        self._tasks[name] = self._progress.add_task(f"{name}: {what}", total=None, eta="")

    def stage_finished(self, name: str, seconds: float, note: str = "") -> None:
        task = self._tasks.get(name)
        if task is None:
            return
        extra = f" — {note}" if note else ""
        known = next((t.total for t in self._progress.tasks if t.id == task and t.total), None)
        total = known or 1
        self._progress.update(
            task,
            description=f"[green]✓[/] {name} {seconds:.1f} s{extra}",
            total=total,
            completed=total,
        )
        self._progress.stop_task(task)

    def ninja(self, status: NinjaStatus) -> None:
        estimate = self._eta(status)  # every line: the cost model weighs each finished edge
        task = self._tasks.get(self._current or "")
        if task is None:
            return
        self._progress.update(
            task,
            description=f"{status.kind}: {_short(status.description, 50)}",
            total=status.total,
            completed=status.finished,
            eta=format_eta(estimate),
        )

    def message(self, text: str) -> None:
        self._progress.console.print(text, markup=False, highlight=False)

    def close(self) -> None:
        self._progress.stop()


def make_reporter(console: Console, eta: EtaSource | None = None) -> Reporter:
    """A live display on a terminal, plain lines elsewhere."""
    if console.is_terminal:
        return RichProgress(console, eta)
    return PlainProgress(console, eta=eta)
