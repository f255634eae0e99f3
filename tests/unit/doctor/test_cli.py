"""`torchsmith doctor LOG`: output and exit codes (the --env side runs probes: integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.commands.doctor import EXIT_CAUSE, EXIT_OK, EXIT_UNKNOWN, EXIT_WARNINGS

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
NINJA = (FIXTURES / "ninja-build.txt").read_text(encoding="utf-8")


def _log(tmp_path: Path, *parts: str) -> Path:
    text = "".join(parts)
    path = tmp_path / "build.log"
    path.write_text(text, encoding="utf-8")
    return path


def _fixture(name: str) -> str:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return "".join(line + "\n" for line in lines if not line.startswith("#@ "))


def test_known_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, NINJA, _fixture("compiler-killed-oom.log"), "ninja: build stopped\n")
    assert main(["doctor", str(log)]) == EXIT_CAUSE
    text = capsys.readouterr().out
    assert "the compiler was killed (out of memory)" in text
    assert "MAX_JOBS=" in text
    assert "https://github.com/dusty-nv/jetson-containers/issues/1142" in text


def test_unknown_error_shows_the_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, NINJA, "FAILED: x.o\nx.cpp:1:1: error: expected ';'\n")
    assert main(["doctor", str(log)]) == EXIT_UNKNOWN
    text = capsys.readouterr().out
    assert "no known cause" in text and "x.cpp:1:1: error: expected ';'" in text


def test_clean_log_and_warnings(tmp_path: Path) -> None:
    assert main(["doctor", str(_log(tmp_path, NINJA))]) == EXIT_OK
    warned = _log(tmp_path, NINJA, _fixture("warn-mkl-not-found.log"))
    assert main(["doctor", str(warned)]) == EXIT_WARNINGS


def test_json_with_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, _fixture("nvcc-host-gcc-too-new.log"))
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"plan": {"cuda": {"value": "12.4"}}}), encoding="utf-8")
    assert main(["doctor", str(log), "--json", "--manifest", str(manifest)]) == EXIT_CAUSE
    data = json.loads(capsys.readouterr().out)["log"]
    assert data["context"] == {"cuda": "12.4"}
    assert data["findings"][0]["rule_id"] == "nvcc-host-gcc-too-new"
    assert data["first_error"]["lines"][0]["line"] == 4


def test_bad_input_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", str(tmp_path / "missing.log")]) == 2
    assert "no log file" in capsys.readouterr().err
    assert main(["doctor"]) == 2
    bad = tmp_path / "m.json"
    bad.write_text("{not json", encoding="utf-8")
    log = _log(tmp_path, NINJA)
    assert main(["doctor", str(log), "--manifest", str(bad)]) == 2
    capsys.readouterr()
    binary = tmp_path / "prog"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\0\0\0\xff\xfe\n")
    assert main(["doctor", str(binary)]) == 2
    captured = capsys.readouterr()
    assert "is a binary file" in captured.err and "\x7fELF" not in captured.out + captured.err


def test_list_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--list-rules", "--json"]) == EXIT_OK
    rules = json.loads(capsys.readouterr().out)
    assert len(rules) >= 40 and all(r["source"] for r in rules)
