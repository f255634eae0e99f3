"""Symbol tables read in pieces give the same facts whatever the piece size (names and entries
cut at every boundary), on the real nvcc-built and recorded-name libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.inspect import elf

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"
LIBS = [FIXTURES / "libk_dyn.so", FIXTURES / "libk_fam.so"]
LIBS += sorted((FIXTURES / "abi").glob("*.so"))


@pytest.mark.parametrize("piece", [24, 48, 24 * 7, 24 * 1000])
def test_pieces_change_no_fact(monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    whole = {lib: elf.read_elf(lib) for lib in LIBS}
    monkeypatch.setattr(elf, "_PIECE", piece)
    for lib in LIBS:
        assert elf.read_elf(lib) == whole[lib], lib.name
    assert "__cudaRegisterFatBinary" in whole[FIXTURES / "libk_dyn.so"].undefined


def test_a_wanted_name_shared_as_the_tail_of_a_longer_one_is_found(tmp_path: Path) -> None:
    table = b"\0x_cudaMalloc\0ncclGetVersion\0"
    path = tmp_path / "t"
    path.write_bytes(table)
    with path.open("rb") as fh:
        found = {}
        for pos, data in elf._chunks(fh, 0, len(table), overlap=elf._LONGEST + 1):
            found |= elf._names_in(pos, data)
    assert found == {3: "cudaMalloc", 14: "ncclGetVersion"}
