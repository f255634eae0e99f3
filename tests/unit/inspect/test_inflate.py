"""Fast member extraction: every inflater gives the same bytes, a damaged member is refused, and
fat binary payloads left out as holes change nothing inspect reads (issue 26 item 2)."""

from __future__ import annotations

import io
import random
import re
import struct
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from tests.resources import require_module
from torchsmith.errors import InspectError
from torchsmith.inspect import inflate
from torchsmith.inspect import wheel as wheel_mod
from torchsmith.inspect.elf import holes_inside_fatbin, read_elf
from torchsmith.inspect.fatbin import FATBIN_MAGIC, read_fatbin
from torchsmith.inspect.holes import HoleWriter

LIB = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "libk_dyn.so"


def _zip(tmp_path: Path, data: bytes, method: int = zipfile.ZIP_DEFLATED) -> Path:
    path = tmp_path / "w.whl"
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        zf.writestr("torch/lib/libx.so", data)
    return path


@pytest.mark.parametrize("codec", ["isal.isal_zlib", "zlib_ng.zlib_ng", "zlib"])
def test_every_inflater_gives_the_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str
) -> None:
    require_module(codec.split(".", maxsplit=1)[0], "pip install -e '.[dev]' (isal, zlib-ng)")
    monkeypatch.setattr(inflate, "_CODECS", (codec,) if codec != "zlib" else ())
    data = random.Random(1).randbytes(300_000) + bytes(5_000_000)  # a zero run: many outputs
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
        path = _zip(tmp_path, data, method)
        out = io.BytesIO()
        with zipfile.ZipFile(path) as zf:
            inflate.extract(path, zf.getinfo("torch/lib/libx.so"), out)
        assert out.getvalue() == data


def test_a_corrupt_member_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path, b"\x7fELF" + bytes(1000), zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"\x7fELF") + 10] = 1
    path.write_bytes(bytes(raw))
    with zipfile.ZipFile(path) as zf, pytest.raises(InspectError, match="is corrupt"):
        inflate.extract(path, zf.getinfo("torch/lib/libx.so"), io.BytesIO())


def _fatbin(rng: random.Random) -> tuple[bytes, int]:
    """A look-alike at an odd offset, then a container of a big and a small entry."""
    lead = b"junk" + struct.pack("<I", FATBIN_MAGIC) + rng.randbytes(1000)
    lead += bytes(-len(lead) % 8)
    entries = b""
    for kind, arch, size in ((2, 90, 200_000), (1, 80, 3_000)):
        head = struct.pack("<HHIQIIHHI", kind, 1, 64, size, size, 0, 0, 9, arch).ljust(64, b"\0")
        entries += head + rng.randbytes(size)
    container = struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(entries)) + entries
    return lead + container + rng.randbytes(5000), len(lead)


def test_holes_leave_out_only_entry_payloads() -> None:
    rng = random.Random(7)
    data, start = _fatbin(rng)
    out = io.BytesIO()
    writer = HoleWriter(out)
    pos = 0
    while pos < len(data):  # uneven chunks: headers straddle them
        step = rng.randint(1, 70_000)
        writer.write(data[pos : pos + step])
        pos += step
    writer.close(len(data))
    got = out.getvalue()
    assert len(got) == len(data) and len(writer.holes) == 1
    ((box, lo, hi),) = writer.holes
    assert box == start  # the container it was found in
    assert hi - lo == 200_000 and got[lo:hi] == bytes(hi - lo)
    assert got[:lo] == data[:lo] and got[hi:] == data[hi:]
    entries = list(read_fatbin(io.BytesIO(got), start, len(data) - start - 5000))
    assert [(e.kind, e.arch) for e in entries] == [("sass", "sm_90"), ("ptx", "compute_80")]


def test_holes_in_a_real_nvcc_library_change_no_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("torchsmith.inspect.holes._MIN_HOLE", 1)  # its cubins are small
    data = LIB.read_bytes()
    path = _zip(tmp_path, data)
    target = tmp_path / "out.so"
    with zipfile.ZipFile(path) as zf, target.open("w+b") as fh:
        holes = inflate.extract(path, zf.getinfo("torch/lib/libx.so"), fh, holes=True)
    assert holes and holes_inside_fatbin(target, holes)
    assert not holes_inside_fatbin(LIB, [(0, 0, 64)])
    _box, lo, hi = holes[0]
    assert not holes_inside_fatbin(target, [(0, lo, hi)])  # its container starts outside
    assert read_elf(target) == read_elf(LIB)


def test_a_hole_outside_the_fat_binary_means_reading_it_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _zip(tmp_path, LIB.read_bytes())
    monkeypatch.setattr(wheel_mod, "_GPU_NAME", re.compile("libx"))
    monkeypatch.setattr(wheel_mod, "holes_inside_fatbin", lambda where, holes: False)
    with zipfile.ZipFile(path) as zf:
        lib = wheel_mod._one(path, zf.getinfo("torch/lib/libx.so"), tmp_path, 1, None)
    assert lib.facts == read_elf(LIB)


def test_a_member_that_is_not_elf_is_named(tmp_path: Path) -> None:
    path = _zip(tmp_path, b"\xcf\xfa\xed\xfe" + bytes(4096))  # a Mach-O header
    with zipfile.ZipFile(path) as zf, pytest.raises(InspectError) as err:
        wheel_mod._one(path, zf.getinfo("torch/lib/libx.so"), tmp_path, 1, None)
    assert err.value.message.startswith("torch/lib/libx.so is not an ELF shared object")
    assert "macOS wheel" in err.value.message and "Linux torch wheel" in err.value.hint


def test_a_member_of_zeros_is_refused_at_its_first_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # round-3 trial N02: a 3 GB zero-filled library was inflated whole (21-37 s) first
    path = _zip(tmp_path, bytes(50_000_000))
    written: list[int] = []
    monkeypatch.setattr(inflate, "_OUT", 1 << 20)
    out = io.BytesIO()
    monkeypatch.setattr(out, "write", lambda data: written.append(len(data)))
    with zipfile.ZipFile(path) as zf, pytest.raises(InspectError, match="starts with 00 00"):
        inflate.extract(path, zf.getinfo("torch/lib/libx.so"), out, elf=True)
    assert written == []


def test_a_refused_member_stops_the_queued_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "torch-9.9.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch/version.py", "__version__ = '9.9.0'\n")
        zf.writestr("torch/lib/libbad.so", random.Random(3).randbytes(400_000))  # largest: first
        for i in range(20):
            zf.write(LIB, f"torch/lib/libk{i}.so")
    calls: list[str] = []
    real = wheel_mod._one

    def counted(wheel: Path, info: zipfile.ZipInfo, *rest: object) -> object:
        calls.append(info.filename)
        if calls[1:]:
            time.sleep(0.2)  # a member after the bad one takes a while: time to cancel the rest
        return real(wheel, info, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(wheel_mod, "_one", counted)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    with pytest.raises(InspectError, match=r"libbad\.so is not an ELF shared object"):
        wheel_mod.inspect_wheel(path)
    assert calls[0] == "torch/lib/libbad.so" and len(calls) <= 3


def test_holes_never_change_a_byte_outside_them_on_hostile_input() -> None:
    """Deterministic fuzz: look-alike containers with lying sizes, cut anywhere."""
    rng = random.Random(2026)
    for _ in range(200):
        data = bytearray(rng.randbytes(rng.randint(0, 300_000)))
        for _ in range(rng.randint(0, 6)):
            at = rng.randrange(0, max(1, len(data) - 100)) & ~7
            head = struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, rng.choice([0, 80, 1 << 62, 90_000]))
            entry = struct.pack("<HHIQ", rng.choice([1, 2]), 1, rng.choice([64, 112, 3]),
                                rng.choice([70_000, 1 << 40, 0]))  # fmt: skip
            data[at : at + 32] = (head + entry)[: len(data) - at]
        with tempfile.TemporaryFile() as out:  # a real file: truncate() extends it
            writer = HoleWriter(out)
            pos = 0
            while pos < len(data):
                step = rng.randint(1, 50_000)
                writer.write(bytes(data[pos : pos + step]))
                pos += step
            writer.close(len(data))
            out.seek(0)
            got = out.read()
        assert len(got) == len(data)
        mask = bytearray(len(data))
        for box, lo, hi in writer.holes:
            assert box < lo
            assert 0 <= lo < hi <= len(data)
            mask[lo:hi] = b"\1" * (hi - lo)
        assert all(m or g == d for g, d, m in zip(got, data, mask, strict=True))
