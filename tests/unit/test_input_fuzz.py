"""Issue 27 (done-when): the inputs `report`, `matrix` and `doctor --manifest` read from files —
a manifest (JSON of any shape, types wrong anywhere) and a matrix spec (the real example,
mutated) — fuzzed through ``cli.main``: every outcome is a result or a clear error, never a
traceback or an internal error (exit 70). Security review f1b4bec N16 found RecursionError and
ValueError there.

The profiles are test_cli_fuzz's: derandomized under ``CI=true`` (the same examples every run),
new ones locally. Every input a random run found is a named test at the end (:data:`FOUND`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_cli_fuzz import check_outcome  # also loads the ci/local profiles
from torchsmith.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "matrix-seed-002.toml"
KEYS = ["stages", "stages_all_runs", "resources", "cpu_during_compile", "samples",
        "peak_process_rss_mib", "source", "built_in", "workspace", "plan", "torch", "cuda",
        "compiler_cache", "hits", "misses", "container", "warnings", "python", "steps"]  # fmt: skip
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "x",
            "<a href='https://e.example/'>s</a>",
            "\x1b]0;t\x07",
            "1e400",
            "",
            "/nonexistent",
            ".",
            "..",
            "compile",
            "\x00",
        ]
    ),
    st.text(max_size=8),
)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)), inner, max_size=4),
    ),
    max_leaves=24,
)
MANIFESTS = st.one_of(
    JSON, st.fixed_dictionaries({"stages": JSON}, optional=dict.fromkeys(KEYS[1:], JSON))
)
PIECES = ["[", "]", "[[", '"', "'''", "=", "\n", ",", "{", "}", "\x00", "\\u0000", "1e9999", "-1",
          "true", "[[[[[[[[", "${{ x }}", "\r\n", "é", "#", "[base]\n", "[axes]\n", " = []\n",
          'gpus = [["9.0"]]\n', "runs_on = 'x'\n", "image = ''\n"]  # fmt: skip
DOCTOR_RESULTS = (20, 21, 22)  # a cause found, an unexplained error, warnings only (README)
FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _report_and_doctor(
    folder: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> list[tuple[str, int]]:
    path = folder / "x.manifest.json"
    path.write_text(text, encoding="utf-8")
    log = folder / "build.log"
    log.write_text("error: something failed\n")
    outcomes = []
    for argv in (
        ["report", str(path), "--output", str(folder / "out")],
        ["doctor", "--manifest", str(path), str(log)],
    ):
        code = main(argv)
        result = argv[0] == "doctor" and code in DOCTOR_RESULTS  # a diagnosis, not an error
        check_outcome(0 if result else code, capsys.readouterr().err, (argv[0], text[:300]))
        outcomes.append((argv[0], code))
    return outcomes


@FUZZ
@given(data=MANIFESTS)
def test_random_manifests_through_report_and_doctor(
    data: Any, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    _report_and_doctor(tmp_path_factory.mktemp("m"), json.dumps(data), capsys)


@st.composite
def mutated_matrix(draw: st.DrawFn) -> str:
    """The example matrix with a few pieces put in, cut out or lines repeated."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        match draw(st.integers(0, 2)):
            case 0:
                piece = draw(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)))
                text = text[:at] + piece + text[at:]
            case 1:
                text = text[:at] + text[at + draw(st.integers(1, 40)) :]
            case _:
                lines = text.splitlines(keepends=True)
                text = text[:at] + draw(st.sampled_from(lines)) + text[at:]
    return text


@FUZZ
@given(text=mutated_matrix(), emit=st.sampled_from(["bake", "github-actions"]))
def test_mutated_matrix_specs_through_matrix(
    text: str,
    emit: str,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path_factory.mktemp("mx") / "matrix.toml"
    path.write_text(text, encoding="utf-8")
    spec = EXAMPLE.parent / "seed-002-cresset-train-images.toml"  # the spec it names
    (path.parent / spec.name).write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    code = main(["matrix", "--spec", str(path), "--emit", emit, "--output", "-"])
    check_outcome(code, capsys.readouterr().err, text)


# --- every input a random run found, by name ------------------------------------------------
# (name -> manifest text, the exit codes of report and doctor --manifest)
FOUND: dict[str, tuple[str, int, int]] = {
    # N16: json's RecursionError was exit 70 in both
    "deep-list": ("[" * 200_000 + "]" * 200_000, 2, 2),
    # N16: float("notanumber") / a sample [1, "x"] was ValueError, exit 70
    "stage-not-a-number": ('{"stages": {"a": "notanumber"}}', 0, 21),
    # c834670: a workspace that is a list was TypeError, exit 70
    # test_random_manifests_through_report_and_doctor: doctor's usage error had no hint
    "not-a-table": ("null", 2, 2),
    "workspace-a-list": ('{"stages": {}, "workspace": ["x"]}', 2, 21),
    # 2026-11-28, a local run: plan.torch not a table was AttributeError in report, exit 70
    "plan-torch-a-bool": ('{"stages": null, "plan": {"torch": true}}', 0, 21),
    "plan-a-list": ('{"stages": null, "plan": [1]}', 2, 21),
    "targets-not-names": ('{"stages": null, "targets": [1, "x", null]}', 0, 21),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_manifest_the_fuzzer_found(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, report, doctor = FOUND[name]
    assert _report_and_doctor(tmp_path, text, capsys) == [("report", report), ("doctor", doctor)]
