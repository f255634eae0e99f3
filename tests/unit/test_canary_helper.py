"""tests/canary.py finds a canary where a leak would put it: a file (as given or
percent-encoded, in a sub-directory), a captured text, a live process's command line."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.canary import (
    CmdlineWatch,
    Sweep,
    TmpWatch,
    cmdlines_holding,
    files_holding,
    forms,
    recent_files,
    texts_holding,
)

CANARY = "tok/CANARY+9f2 e"


def test_forms_are_as_given_and_percent_encoded() -> None:
    assert forms(CANARY) == (b"tok/CANARY+9f2 e", b"tok%2FCANARY%2B9f2%20e")
    assert forms("plain") == (b"plain",)


def test_files_holding_finds_both_forms_and_skips_the_tests_own(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    leaked = tmp_path / "a" / "b" / "manifest.json"
    leaked.write_text('{"url": "https://u:tok%2FCANARY%2B9f2%20e@h/"}')
    own = tmp_path / "token"
    own.write_text(CANARY)
    (tmp_path / "clean.log").write_text("nothing here")
    (tmp_path / "link").symlink_to(own)
    assert files_holding(CANARY, [tmp_path], skip=[own]) == [leaked]
    assert files_holding(CANARY, [own]) == [own]  # a root may be a file


def test_texts_holding_names_the_texts() -> None:
    assert texts_holding(CANARY, ["ok", b"x tok/CANARY+9f2 e", "fine"]) == [1]


def test_the_cmdline_watch_reads_live_command_lines() -> None:
    own = Path(sys.argv[0]).name  # this test process's own argv holds it
    assert cmdlines_holding(own)
    with CmdlineWatch(own) as watch:
        while watch.scans == 0:
            time.sleep(0.01)
    assert watch.seen and watch.scans > 0
    with CmdlineWatch(CANARY) as quiet:
        while quiet.scans == 0:
            time.sleep(0.01)
    assert quiet.seen == []


def test_the_tmp_watch_scans_what_appeared_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    (tmp_path / "old-auth.json").write_text(CANARY)  # there before: another test's business
    with TmpWatch(CANARY) as watch:
        left = tmp_path / "torchsmith-auth-x" / "auth.json"
        left.parent.mkdir()
        left.write_text(CANARY)
        (tmp_path / "clean").write_text("nothing")
    assert watch.new == [tmp_path / "clean", left.parent]
    assert watch.holding() == [left]


def test_recent_files_reads_what_was_written_since_and_prunes_stores(tmp_path: Path) -> None:
    old = tmp_path / "old.log"
    old.write_text(CANARY)
    os.utime(old, (1, 1))
    new = tmp_path / "w" / "manifest.json"
    new.parent.mkdir()
    new.write_text("x")
    store = tmp_path / "store"
    (store / "vfs").mkdir(parents=True)
    (store / "storage.lock").write_text("")
    (store / "vfs" / "etc.conf").write_text("image file system")
    (tmp_path / "lib.o").write_bytes(b"\0")
    assert recent_files([tmp_path], since=time.time() - 60) == [new]


def test_a_sweep_names_the_file_and_temporary_entry_that_hold_the_canary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    (tmp_path / "clean.log").write_text("nothing")
    with Sweep(CANARY, [tmp_path / "work"], interval=0.01) as sweep:
        (tmp_path / "work").mkdir()
        (tmp_path / "work" / "build.log").write_text(f"token={CANARY}")
        (temp / "auth.json").write_text(CANARY)
    assert sweep.leaks() == [
        f"file: {tmp_path / 'work' / 'build.log'}",
        f"file: {temp / 'auth.json'}",
    ]
    os.utime(tmp_path / "work" / "build.log", (1, 1))  # written before the next sweep
    with Sweep(CANARY, [tmp_path / "work"], interval=None) as quiet:
        pass
    assert quiet.leaks() == []
