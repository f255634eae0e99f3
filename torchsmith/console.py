"""Output helpers shared by the commands: rich for people, stable JSON for machines."""

from __future__ import annotations

import io
import os
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from torchsmith import jsonout
from torchsmith.terminal import strip_terminal_codes


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits with status 1 here; let ``cli.main`` decide (a reader that stops early,
        like ``| head -1``, is not an error)."""
        self.quiet = True
        raise BrokenPipeError


def reader_gone() -> int:
    """stdout's reader has gone: point stdout at /dev/null so the final flush stays quiet, and
    exit 0 (documented in README's exit codes)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    return 0


out = _Console(highlight=False, soft_wrap=True)
err = _Console(stderr=True, highlight=False, soft_wrap=True)


def shown(value: object) -> str:
    """Data (a path, a version read from a wheel, a log line) made safe to print with markup:
    no terminal escape sequences or controls, no markup tags."""
    return escape(strip_terminal_codes(str(value)))


def table(title: str, *columns: str, show_header: bool = True) -> Table:
    """A table whose cells are never cut: long values fold instead of ending in an ellipsis."""
    made = Table(title=title, title_justify="left", show_header=show_header)
    for column in columns:
        made.add_column(column, overflow="fold")
    return made


def print_table(grid: Table, console: Console | None = None) -> None:
    """``grid`` as a table when it fits the width (80 columns when piped, or COLUMNS); else
    each row as ``header: value`` lines, so values people copy (TORCH_CUDA_ARCH_LIST, paths,
    library names) stay whole on one line."""
    console = console or out
    unbounded = console.options.update(max_width=1 << 20)
    if Measurement.get(console, unbounded, grid).maximum <= console.width:
        console.print(grid)
        return
    if grid.title:
        console.print(f"[bold]{grid.title}[/]")
    for row in zip(*(list(column.cells) for column in grid.columns), strict=True):
        console.print(*_row_lines(grid, [str(cell) for cell in row]), sep="\n")


def _row_lines(grid: Table, cells: list[str]) -> list[str]:
    if not grid.show_header:
        return [f"  [bold]{cells[0]}[/]: {' '.join(cells[1:])}"]
    heads = [str(column.header) for column in grid.columns]
    rest = [f"    {head}: {cell}" for head, cell in zip(heads[1:], cells[1:], strict=True) if cell]
    return [f"  [bold]{cells[0]}[/]", *rest]


def print_json(data: Any) -> None:
    """Write ``data`` as indented, key-sorted JSON to stdout (:mod:`torchsmith.jsonout`, which
    a ``--json`` path can import without rich)."""
    jsonout.print_json(data)
