"""A foreign manifest or .ninja_log given to `torchsmith report` (security review f1b4bec
N14, N16, N17): clean refusals, escaped labels, no terminal escapes printed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.report.analysis import analyse, stage_times
from torchsmith.report.build_report import write_report
from torchsmith.report.figures import stages_figure
from torchsmith.report.inputs import cpu_samples, load_inputs

LINK = '<a href="https://evil.example/login">compile: click for details</a>'


def _manifest(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "x.manifest.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_stage_name_is_escaped_in_the_figure(tmp_path: Path) -> None:
    path = _manifest(tmp_path, {"stages": {LINK: 3.0}, "workspace": str(tmp_path / "gone")})
    figure = stages_figure(analyse(load_inputs(path)))
    assert figure is not None
    assert list(figure.data[0].y) == [
        "&lt;a href=&quot;https://evil.example/login&quot;&gt;compile: click for details&lt;/a&gt;"
    ]
    assert "evil.example/login\\u0022\\u003e" not in write_report(path).html.read_text()


def test_a_deep_manifest_is_a_usage_error_not_exit_70(tmp_path: Path) -> None:
    path = _manifest(tmp_path, "[" * 200_000 + "]" * 200_000)
    assert main(["report", str(path)]) == 2


@pytest.mark.parametrize(
    "data",
    [
        {"stages": {"a": "notanumber"}},
        {"stages": {"a": 1.0}, "resources": {"cpu_during_compile": {"samples": [[1, "x"], [2]]}}},
    ],
)
def test_non_numbers_in_a_manifest_are_left_out(tmp_path: Path, data: dict[str, object]) -> None:
    stage_times(data)
    assert cpu_samples(data) == []
    assert main(["report", str(_manifest(tmp_path, data))]) == 0


@pytest.mark.parametrize(
    "data",
    [
        {"stages": ["a"], "stages_all_runs": 5},
        {"stages": {}, "workspace": ["x"]},
        {"stages": {}, "source": {"built_in": 3}},
        {"stages": {}, "resources": {"cpu_during_compile": [1]}},
    ],
)
def test_tables_of_the_wrong_type_are_a_usage_error(tmp_path: Path, data: object) -> None:
    assert main(["report", str(_manifest(tmp_path, data))]) == 2  # a TypeError was exit 70


def test_a_deep_manifest_for_doctor_is_a_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("hello\n")
    manifest = _manifest(tmp_path, "[" * 200_000 + "]" * 200_000)
    assert main(["doctor", "--manifest", str(manifest), str(log)]) == 2


def test_terminal_escapes_in_a_target_name_are_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """N17: a title change and a clipboard write (OSC 0, OSC 52) reached stdout."""
    build = tmp_path / "ws" / "src" / "build"
    build.mkdir(parents=True)
    evil = "slow\x1b]0;OWNED-TITLE\x1b\\\x1b]52;c;ZWNobyBwd25lZA==\x1b\\.o"
    (build / ".ninja_log").write_text(f"# ninja log v5\n0\t100000\t1\t{evil}\th\n")
    assert main(["report", str(tmp_path / "ws")]) == 0
    printed = capsys.readouterr().out
    assert "faster: start slow" in printed
    assert "\x1b" not in printed


def _random_value(rng: random.Random, depth: int) -> object:
    """A JSON value of the shapes a manifest has, with the wrong types in the wrong places."""
    leaves = [None, True, -1, 2.5, "x", "<a>", "\x1b]0;t\x07", 10**30, "1e400", ""]
    if depth <= 0 or rng.random() < 0.3:
        return rng.choice(leaves)
    keys = ["stages", "stages_all_runs", "resources", "cpu_during_compile", "samples",
            "peak_process_rss_mib", "source", "built_in", "workspace", "plan", "torch",
            "compiler_cache", "hits", "misses", "a"]  # fmt: skip
    if rng.random() < 0.5:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(keys): _random_value(rng, depth - 1) for _ in range(rng.randint(0, 4))}


def test_random_manifests_never_crash_report_or_doctor(tmp_path: Path) -> None:
    """Issue 27: fuzzing of report and doctor --manifest inputs, deterministic (fixed seed):
    every input is reported (0), refused as a usage error (2) or diagnosed (doctor), never 70."""
    rng = random.Random(27)
    log = tmp_path / "log.txt"
    log.write_text("error: something failed\n")
    for i in range(40):
        data = _random_value(rng, 5)
        if isinstance(data, dict) and rng.random() < 0.7:
            data.setdefault("stages", _random_value(rng, 2))
        path = _manifest(tmp_path, json.dumps(data))
        assert main(["report", str(path), "--output", str(tmp_path / "out")]) in (0, 2), data
        assert main(["doctor", "--manifest", str(path), str(log)]) != 70, data
        del i


def _log_workspace(tmp_path: Path, log: bytes) -> Path:
    (tmp_path / "ws" / "src" / "build").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "build" / ".ninja_log").write_bytes(log)
    return tmp_path / "ws"


def test_a_header_only_ninja_log_is_said_to_hold_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trial R06: a .ninja_log of its header only gave an empty report with exit 0."""
    ws = _log_workspace(tmp_path, b"# ninja log v5\n")
    assert main(["report", str(ws)]) == 2
    assert "holds no finished edge" in capsys.readouterr().err


def test_an_empty_log_next_to_a_manifest_is_listed_as_not_recorded(tmp_path: Path) -> None:
    ws = _log_workspace(tmp_path, b"# ninja log v5\n")
    (ws / "x.manifest.json").write_text(json.dumps({"stages": {"compile": 1.0}}))
    assert any("holds no finished edge" in m for m in load_inputs(ws).missing)


@pytest.mark.parametrize(
    "line",
    [b"10\t99999999999999999999\t0\tb\xffad.o\tdef", b"500\t100\t0\ta.o\tdef"],
)
def test_times_ninja_never_writes_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: bytes
) -> None:
    """Trial R10: end = 99999999999999999999 ms gave 'one translation unit took 1e17 s'."""
    ws = _log_workspace(tmp_path, b"# ninja log v5\n0\t1500\t0\tfoo.o\tabc\n" + line + b"\n")
    assert main(["report", str(ws)]) == 2
    assert "times ninja never writes" in capsys.readouterr().err


def test_a_wheel_given_as_manifest_is_named_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trial R13: a 766 MB wheel was read whole for 7 s, then 'utf-8 codec can't decode'."""
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
    wheel.write_bytes(b"PK\x03\x04" + bytes(100))
    assert main(["report", str(wheel)]) == 2
    assert "is a zip archive (a wheel?)" in capsys.readouterr().err


def test_a_huge_or_binary_manifest_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.manifest.json"
    with big.open("wb") as handle:
        handle.truncate(65 * 2**20)  # sparse: no 65 MiB written
    assert main(["report", str(big)]) == 2
    assert "65 MiB, not a build manifest" in capsys.readouterr().err
    binary = _manifest(tmp_path, "x")
    binary.write_bytes(b"\xff\xfe\x00{")
    assert main(["report", str(binary)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
