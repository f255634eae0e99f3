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
