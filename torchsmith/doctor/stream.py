"""Streaming a log in bounded memory, and finding its interesting lines fast.

A build log can be gigabytes. It is read in chunks of whole lines (a few MiB each); in each chunk
one RE2 search (all trigger strings as one automaton, one pass, C speed) finds the lines that hold
one, and only those are decoded (at most ``MAX_LINE`` characters of each) and looked at in
Python. Line numbers are kept by counting newlines between those lines. Everything else — the
hundreds of thousands of ``[N/M] Building ...`` lines — is never decoded.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from torchsmith.doctor.linear import MAX_LINE, TriggerFinder
from torchsmith.errors import UsageError
from torchsmith.terminal import CONTROLS, ESCAPES

CHUNK_BYTES = 8 << 20
_PIECE = 1 << 20
SNIFF_BYTES = 8 << 10
GZIP_MAGIC = b"\x1f\x8b"
_STATUS_START = re.compile(rb"\[\d+/\d+")
_STATUS_TEXT = re.compile(r"\[\d+/\d+")
# CI log prefixes: GitHub Actions / Jenkins timestamps, docker BuildKit step and time
_PREFIX = re.compile(r"^(?:\d{4}-\d\d-\d\dT[\d:.]+Z |\[\d{4}-\d\d-\d\dT[\d:.]+Z\] |#\d+ \d+\.\d+ )")


@dataclass(frozen=True)
class Candidate:
    """A line that holds a trigger: its 1-based number, text, and where it sits in its chunk."""

    number: int
    text: str
    chunk: bytes
    start: int
    end: int
    boundary_before: bool  # a ninja status line or "ninja:" line lies between it and the last one

    def context(self, before: int, after: int) -> list[tuple[int, str]]:
        """Up to ``before`` lines above and ``after`` lines below, stopping at ninja status
        lines below (the next edge's output is not this one's)."""
        lines = _lines_before(self.chunk, self.start, before, self.number)
        lines.append((self.number, self.text))
        lines += _lines_after(self.chunk, self.end, after, self.number)
        return lines


def clean(raw: bytes) -> str:
    """A log line as text: decoded, escape sequences and control characters (but tab)
    removed, progress-bar rewrites dropped."""
    text = ESCAPES.sub("", raw.decode("utf-8", errors="replace"))
    if "\r" in text:
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    return _PREFIX.sub("", CONTROLS.sub("", text), count=1)


def _lines_before(chunk: bytes, start: int, count: int, number: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    end = start - 1
    while count > 0 and end > 0:
        begin = chunk.rfind(b"\n", 0, end) + 1
        number -= 1
        out.append((number, clean(chunk[begin:end])))
        end, count = begin - 1, count - 1
    return out[::-1]


def _lines_after(chunk: bytes, end: int, count: int, number: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    begin = end + 1
    while count > 0 and begin < len(chunk):
        stop = chunk.find(b"\n", begin)
        stop = len(chunk) if stop == -1 else stop
        text = clean(chunk[begin:stop])
        if _STATUS_TEXT.match(text) or text.startswith("ninja: "):
            break
        number += 1
        out.append((number, text))
        begin, count = stop + 1, count - 1
    return out


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return path.suffix == ".gz" or fh.read(2) == GZIP_MAGIC


def check_text(path: Path) -> None:
    """Refuse a binary file (a NUL byte in its first 8 KiB, after gunzip for a gzip file): its
    "lines" would be printed to the terminal as raw bytes."""
    try:
        gz = _is_gzip(path)
        with (gzip.open if gz else open)(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise UsageError(
            f"cannot read {path}: {exc}",
            "check the file's permissions; a .gz log must be a complete gzip file",
        ) from exc
    if b"\0" in head:
        raise UsageError(
            f"{path} is a binary file, not a build log (NUL bytes in its first "
            f"{SNIFF_BYTES // 1024} KiB)",
            "give the text a build printed, saved to a file (plain or gzip-compressed)",
        )


def chunks_of_file(
    path: Path, size: int = CHUNK_BYTES, on_cut: Callable[[str], None] | None = None
) -> Iterator[bytes]:
    """Whole-line chunks of a file (gzip is decompressed), each ending with a newline. A
    "line" longer than 4 chunks (progress bars rewritten with \\r, binary junk) is cut. A file
    that ends early (a truncated .gz) yields what could be read; ``on_cut`` hears why."""
    carry = b""
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as fh:
        reader = _Reader(fh, path, on_cut)
        while block := reader.read(size):
            block = carry + block
            cut = block.rfind(b"\n") + 1
            if cut == 0 and len(block) > 4 * size:
                cut, block = len(block) + 1, block + b"\n"
            carry = block[cut:]
            if cut:
                yield block[:cut]
    if carry:
        yield carry + b"\n"


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Reader:
    """Reads in pieces of ``_PIECE`` bytes, so a read error loses at most one piece; after an
    error (EOFError of a truncated gzip stream, BadGzipFile, EIO) it reports and stops."""

    def __init__(self, fh: _Readable, path: Path, on_cut: Callable[[str], None] | None) -> None:
        self.fh, self.path, self.on_cut = fh, path, on_cut
        self.done, self.offset = False, 0

    def read(self, size: int) -> bytes:
        parts: list[bytes] = []
        while not self.done and size > 0:
            piece = self._piece(min(size, _PIECE))
            parts.append(piece)
            size -= len(piece)
            self.done = self.done or not piece
        return b"".join(parts)

    def _piece(self, size: int) -> bytes:
        try:
            piece = self.fh.read(size)
        except (EOFError, OSError) as exc:  # gzip.BadGzipFile is an OSError
            self.done = True
            if self.on_cut is not None:
                self.on_cut(f"{self.path} is cut short after {self.offset:,} bytes: {exc}")
            return b""
        self.offset += len(piece)
        return piece


def chunks_of_lines(lines: Iterable[str], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Whole-line chunks of an iterable of lines (with or without their newlines)."""
    parts: list[bytes] = []
    total = 0
    for line in lines:
        raw = line.rstrip("\n").encode("utf-8", errors="replace") + b"\n"
        parts.append(raw)
        total += len(raw)
        if total >= size:
            yield b"".join(parts)
            parts, total = [], 0
    if parts:
        yield b"".join(parts)


def chunks_of(
    source: str | os.PathLike[str] | Iterable[str], on_cut: Callable[[str], None] | None = None
) -> Iterator[bytes]:
    """A path (str or PathLike) is read from disk; any other iterable is taken as lines."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise UsageError(f"no log file at {path}", "give the path of a build log")
        check_text(path)
        return chunks_of_file(path, on_cut=on_cut)
    return chunks_of_lines(source)


def _line_text(chunk: bytes, start: int, end: int) -> str:
    """A line's clean text, at most ``MAX_LINE`` characters; of a very long line rewritten with
    \\r (a progress bar), its last rewrite."""
    if end - start > 4 * MAX_LINE:
        start = max(start, chunk.rfind(b"\r", start, end - 1) + 1)
    return clean(chunk[start : min(end, start + 4 * MAX_LINE)])[:MAX_LINE]


def _has_boundary(chunk: bytes, begin: int, end: int) -> bool:
    """Whether a ninja status line ("[N/M") or a "ninja:" line starts in chunk[begin:end]."""
    i = chunk.find(b"\n[", begin - 1 if begin else 0, end)
    while i != -1:
        if _STATUS_START.match(chunk, i + 1):
            return True
        i = chunk.find(b"\n[", i + 2, end)
    return chunk.find(b"\nninja: ", begin - 1 if begin else 0, end) != -1


class Scanner:
    """Yields the candidate lines of a log, numbered, in order; counts lines and bytes."""

    def __init__(self, triggers: Iterable[bytes]) -> None:
        self.triggers = tuple(sorted(set(triggers)))
        self._finder = TriggerFinder(self.triggers)
        self.lines = 0
        self.bytes = 0

    def candidates(self, chunks: Iterable[bytes]) -> Iterator[Candidate]:
        for chunk in chunks:
            yield from self._chunk(chunk)
            self.lines += chunk.count(b"\n")
            self.bytes += len(chunk)

    def _chunk(self, chunk: bytes) -> Iterator[Candidate]:
        newlines, pos, last_end = 0, 0, 0
        for start in self._finder.line_starts(chunk):
            newlines += chunk.count(b"\n", pos, start)
            end = chunk.find(b"\n", start)
            text = _line_text(chunk, start, end)
            boundary = _has_boundary(chunk, last_end, start)
            yield Candidate(self.lines + newlines + 1, text, chunk, start, end, boundary)
            pos, last_end = start, end + 1
