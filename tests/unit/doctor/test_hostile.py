"""doctor on hostile or damaged logs: a truncated .gz, terminal escape sequences (security
review L5), controls; nothing reaches the terminal raw and nothing is an internal error."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.commands.doctor import EXIT_CAUSE
from torchsmith.doctor.stream import clean

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
NINJA = (FIXTURES / "ninja-build.txt").read_text(encoding="utf-8")
# The review's payloads: set the window title, write "OWNED" to the clipboard (OSC 52).
OSC_TITLE = "\x1b]0;OWNED-TITLE\x07"
OSC_52 = "\x1b]52;c;T1dORUQ=\x1b\\"


def _fixture(name: str) -> str:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return "".join(line + "\n" for line in lines if not line.startswith("#@ "))


def _truncated_gz(tmp_path: Path, text: str) -> Path:
    whole = gzip.compress(text.encode(), mtime=0)
    path = tmp_path / "trunc.log.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    return path


def test_truncated_gzip_is_analysed_as_far_as_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filler = "".join(f"[{i}/90000] Building CXX object x{i}.o  {i * 7919}\n" for i in range(90000))
    log = _truncated_gz(tmp_path, _fixture("disk-full.log") + filler)
    assert main(["doctor", str(log)]) == EXIT_CAUSE
    captured = capsys.readouterr()
    assert "No space left on device" in captured.out
    assert re.search(r"warning: .*trunc\.log\.gz is cut short after \d", captured.out)


def test_truncated_gzip_with_nothing_readable_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filler = "".join(f"[{i}/90000] Building CXX object x{i}.o  {i * 7919}\n" for i in range(90000))
    log = _truncated_gz(tmp_path, filler + _fixture("disk-full.log"))
    assert main(["doctor", str(log)]) == 2
    assert "cut short" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (f"error: {OSC_TITLE}boom", "error: boom"),
        (f"error: {OSC_52}boom", "error: boom"),
        ("error: \x1b]0;unterminated title", "error: "),
        ("\x1b[1;31merror:\x1b[0m red", "error: red"),
        ("error: \x1bP1$r0m\x1b\\dcs", "error: dcs"),
        ("error: \x1b_apc\x1b\\ \x1b^pm\x1b\\ \x1bXsos\x1b\\x", "error:   x"),
        ("error: \x9b31m c1-csi \x9d0;t\x9c end", "error: 31m c1-csi 0;t end"),
        ("a\tb\x00c\x07d\x08e\x7ff\x1bcg", "a\tbcdefg"),
    ],
)
def test_clean_strips_escape_sequences_and_controls(raw: str, text: str) -> None:
    assert clean(raw.encode()) == text


def test_doctor_output_holds_no_escape_sequences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "build.log"
    evil = f"{OSC_TITLE}{OSC_52}"
    body = _fixture("disk-full.log").replace("fatal error:", f"{evil}fatal error:", 1)
    log.write_text(NINJA + evil + "\n" + body, encoding="utf-8")
    assert main(["doctor", str(log)]) == EXIT_CAUSE
    shown = capsys.readouterr().out
    assert "No space left on device" in shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown.replace("\n", ""))
