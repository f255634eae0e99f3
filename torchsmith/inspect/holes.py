"""Leave the payloads of CUDA fat binary entries out of a scratch file (as holes): ``inspect``
reads only the container and entry headers (:mod:`torchsmith.inspect.fatbin`), and the payloads
are most of a CUDA library (790 of libtorch_cuda.so's 903 MB in torch 2.6.0). Containers are
found by their magic at 8-byte aligned offsets and checked for plausible sizes; the caller
checks afterwards that every hole lies inside ``.nv_fatbin`` and starts over without holes when
one does not (a look-alike elsewhere)."""

from __future__ import annotations

import struct
from typing import BinaryIO

from torchsmith.inspect.fatbin import FATBIN_MAGIC

Hole = tuple[int, int, int]
"""(offset of the container, first byte left out, end): the caller checks all three."""
_MAGIC = struct.pack("<I", FATBIN_MAGIC)
_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQ")  # kind, version, header_size, padded size
_MIN_HOLE = 1 << 16  # smaller payloads are written (a hole saves nothing)


class HoleWriter:
    """Write a member's bytes as they are inflated, skipping fat binary entry payloads."""

    def __init__(self, dest: BinaryIO) -> None:
        self.dest = dest
        self.held = b""
        self.start = 0  # absolute offset of ``held``'s first byte
        self.write_to = 0  # bytes before this offset are written (a header, a small payload)
        self.skip_to = 0  # then bytes before this offset are an entry payload: a hole
        self.entry_at = -1  # absolute offset of the next entry header, -1 outside a container
        self.container_end = 0
        self.holes: list[Hole] = []
        self.container_start = 0

    def write(self, data: bytes) -> None:
        window = self.held + data if self.held else data  # held is rarely more than a header
        used = self._scan(window, final=False)
        self.held, self.start = window[used:], self.start + used

    def close(self, size: int) -> None:
        self._scan(self.held, final=True)
        self.dest.truncate(size)  # a file ending in a hole gets its full size
        self.dest.flush()
        self.holes = [(c, lo, min(hi, size)) for c, lo, hi in self.holes if lo < size]

    def _keep(self, window: bytes, a: int, b: int) -> None:
        if b > a:
            self.dest.seek(self.start + a)
            self.dest.write(window[a:b])

    def _scan(self, window: bytes, *, final: bool) -> int:
        """Write or skip ``window`` (at ``self.start``); the bytes consumed."""
        cur = 0
        while cur < len(window):
            step = self._step(window, cur, final)
            if step == cur:
                break
            cur = step
        return cur

    def _step(self, window: bytes, cur: int, final: bool) -> int:
        at = self.start + cur
        if at < self.write_to:
            stop = min(len(window), self.write_to - self.start)
            self._keep(window, cur, stop)
            return stop
        if at < self.skip_to:
            return min(len(window), self.skip_to - self.start)
        if self.entry_at >= 0 and at >= self.container_end:
            self.entry_at = -1
        if self.entry_at == at:
            return self._entry(window, cur, final)
        self.entry_at = -1
        return self._outside(window, cur, final)

    def _entry(self, window: bytes, cur: int, final: bool) -> int:
        if len(window) - cur < _ENTRY.size:
            return self._outside(window, cur, final) if final else cur
        _kind, _v, header, padded = _ENTRY.unpack_from(window, cur)
        at = self.start + cur
        stop = at + header + padded
        if header < 64 or stop > self.container_end:
            self.entry_at = -1  # not an entry this reader knows: the rest is written as is
            return self._outside(window, cur, final)
        self.write_to = at + header if padded >= _MIN_HOLE else stop
        if padded >= _MIN_HOLE:
            self.holes.append((self.container_start, at + header, stop))
            self.skip_to = stop
        self.entry_at = stop
        return self._step(window, cur, final)

    def _outside(self, window: bytes, cur: int, final: bool) -> int:
        found = self._container(window, cur, final)
        if found is None:
            stop = len(window)  # a magic split by the chunk's end is missed: no hole, no harm
            self._keep(window, cur, stop)
            return stop
        self._keep(window, cur, found)
        if len(window) - found < _CONTAINER.size + _ENTRY.size:
            return found  # held back: decided with the next chunk
        _m, _version, header, payload = _CONTAINER.unpack_from(window, found)
        self.container_start = self.start + found
        self.write_to = self.entry_at = self.container_start + header
        self.container_end = self.entry_at + payload
        return found if found > cur else self._step(window, cur, final)

    def _container(self, window: bytes, cur: int, final: bool) -> int | None:
        """The next plausible container header at an 8-byte aligned offset, if any."""
        pos = window.find(_MAGIC, cur)
        while pos >= 0:
            if (self.start + pos) % 8 == 0:
                if len(window) - pos < _CONTAINER.size + _ENTRY.size:
                    return None if final else pos
                if _plausible(window, pos):
                    return pos
            pos = window.find(_MAGIC, pos + 1)
        return None


def _plausible(window: bytes, pos: int) -> bool:
    _m, version, header, payload = _CONTAINER.unpack_from(window, pos)
    if version != 1 or header != _CONTAINER.size:
        return False
    kind, _v, entry_header, padded = _ENTRY.unpack_from(window, pos + header)
    return kind in (1, 2) and 64 <= entry_header <= 4096 and 0 < entry_header + padded <= payload
