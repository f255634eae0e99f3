"""Grouping error lines into blocks, one per failed step, so interleaved parallel output is
pulled apart.

* ninja prints a failed edge as ``FAILED: <target>``, its command, and its output, then the next
  ``[N/M]`` status line: everything in between is one block.
* ``make -j`` and loose output interleave; there a compiler diagnostic (``file:line:col: error``)
  for another file than the open block's starts a new block, and so does a long silent gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torchsmith.doctor.classify import LineInfo
from torchsmith.doctor.models import BlockKind, ErrorBlock, Evidence
from torchsmith.doctor.stream import Candidate

MAX_BLOCKS = 20  # blocks kept in full; later ones are only counted
MAX_LINES = 40  # error lines kept per block
GAP = 60  # lines without an error that end a loose block
CONTEXT_BEFORE, CONTEXT_AFTER = 3, 10


@dataclass
class _Open:
    kind: BlockKind
    start: int
    target: str | None
    last: int
    lines: list[Evidence] = field(default_factory=list)
    context: list[Evidence] = field(default_factory=list)
    real: bool = False

    def freeze(self) -> ErrorBlock:
        lines = self.lines or self.context[:1]
        return ErrorBlock(
            kind=self.kind,
            start_line=self.start,
            target=self.target,
            lines=tuple(lines),
            context=tuple(self.context),
        )


class BlockBuilder:
    """Feed it classified candidate lines in order; it keeps the first blocks (bounded)."""

    def __init__(self) -> None:
        self.blocks: list[ErrorBlock] = []
        self.count = 0
        self._open: _Open | None = None
        self._index = -1  # index of the open block among all blocks
        self._fallback: _Open | None = None  # the first "secondary" lines, if nothing else
        self._soft: _Open | None = None  # the first soft error lines, if nothing at all else

    @property
    def open_index(self) -> int | None:
        """Index of the block the last fed line belongs to, None outside any block."""
        return self._index if self._open is not None else None

    def feed(self, cand: Candidate, info: LineInfo) -> None:
        if self._open is not None and self._ends_before(cand, info):
            self.close()
        if info.kind == "failed":
            self._start(cand, info, real=True)
        elif info.kind == "error":
            self._error(cand, info)
        elif info.kind == "noise" and self.count == 0 and "Traceback" not in cand.text:
            self._noise(cand)
        elif info.kind == "soft" and self.count == 0:
            self._soft_line(cand, info)

    def _soft_line(self, cand: Candidate, info: LineInfo) -> None:
        """Keep the first soft error lines (classify's ``_SOFT``: a failure said without an
        error word), for a log that holds no other error line."""
        if self._soft is None:
            self._soft = _Open(info.block_kind, cand.number, None, cand.number, real=True)
            self._soft.context = _evidence(cand.context(CONTEXT_BEFORE, CONTEXT_AFTER))
        if len(self._soft.lines) < MAX_LINES:
            self._soft.lines.append(Evidence(line=cand.number, text=cand.text))

    def _noise(self, cand: Candidate) -> None:
        """Keep the first lines that only follow an error (make's 'Error 1', 'Error generating'),
        so a log whose real error is missing still shows where it failed."""
        if self._fallback is None:
            self._fallback = _Open("other", cand.number, None, cand.number, real=True)
            self._fallback.context = _evidence(cand.context(CONTEXT_BEFORE, CONTEXT_AFTER))
        if len(self._fallback.lines) < MAX_LINES:
            self._fallback.lines.append(Evidence(line=cand.number, text=cand.text))

    def _ends_before(self, cand: Candidate, info: LineInfo) -> bool:
        block = self._open
        assert block is not None
        if cand.boundary_before or info.kind == "failed":
            return True
        if block.kind == "ninja" or info.kind != "error":
            return False
        other_file = info.block_kind == "diagnostic" and info.target != block.target
        return cand.number - block.last > GAP or (block.kind == "diagnostic" and other_file)

    def _error(self, cand: Candidate, info: LineInfo) -> None:
        if self._open is None:
            self._start(cand, info, real=False)
        block = self._open
        assert block is not None
        if not block.real and len(self.blocks) < MAX_BLOCKS:
            block.context = _evidence(cand.context(CONTEXT_BEFORE, CONTEXT_AFTER))
        block.real = True
        block.last = cand.number
        if len(block.lines) < MAX_LINES:
            block.lines.append(Evidence(line=cand.number, text=cand.text))

    def _start(self, cand: Candidate, info: LineInfo, *, real: bool) -> None:
        self._index += 1
        self.count += 1
        kind: BlockKind = info.block_kind
        self._open = _Open(kind, cand.number, info.target, cand.number, real=real)
        if info.kind == "failed" and len(self.blocks) < MAX_BLOCKS:
            self._open.lines.append(Evidence(line=cand.number, text=cand.text))
            self._open.context = _evidence(cand.context(0, CONTEXT_AFTER))

    def close(self) -> None:
        block, self._open = self._open, None
        if block is not None and len(self.blocks) < MAX_BLOCKS:
            self.blocks.append(block.freeze())

    def finish(self) -> None:
        """Close the open block; with no real error block at all, fall back to the first
        secondary error lines, and with none of those to the first soft error lines."""
        self.close()
        fallback = self._fallback or self._soft
        if not self.blocks and fallback is not None:
            self.blocks.append(fallback.freeze())
            self.count = 1


def _evidence(lines: list[tuple[int, str]]) -> list[Evidence]:
    return [Evidence(line=n, text=t) for n, t in lines]
