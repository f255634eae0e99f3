"""host/load.py: ``plan --host-facts FILE`` with a binary file is a usage error (exit 2) that
says what is wrong and what to do, never an internal error (exit 70; issue 23). Twenty random
blobs from a fixed seed (the same in every run, CI included), each through the CLI's main."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from torchsmith.cli import main

SEED = 22
HEADS = (b"", b"\x7fELF", b"\x1f\x8b", b"PK\x03\x04", b"\xef\xbb\xbf{", b'{"os": ', b"\x00")
"""Starts of real binary formats (ELF, gzip, zip), a UTF-8 BOM before JSON, JSON cut short."""


def _blobs(count: int = 20) -> list[bytes]:
    rng = random.Random(SEED)
    blobs = []
    for i in range(count):
        body = rng.randbytes(rng.randrange(1, 4096))
        blobs.append(HEADS[i % len(HEADS)] + body + b"\xff")  # \xff: never UTF-8
    return blobs


@pytest.mark.parametrize("index", range(20))
def test_a_binary_host_facts_file_exits_2_with_a_clear_message(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "host.json"
    path.write_bytes(_blobs()[index])
    assert main(["plan", "--json", "--host-facts", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"--host-facts {path}: not a text file (byte " in err
    assert "→" in err and "Traceback" not in err


def test_the_blobs_are_the_same_every_run() -> None:
    assert _blobs() == _blobs() and len(set(_blobs())) == 20
