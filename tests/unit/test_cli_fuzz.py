"""Random specs and flags never produce a traceback: every outcome is a plan or a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.planner.kb import ci_host
from torchsmith.cli import main

VERSIONS = st.sampled_from(["1.0.0", "1.1.0", "1.13.1", "2.5.1", "main", "9.9.9", "abc", ""])
CUDAS = st.sampled_from(["9.0", "11.8", "12.4", "13.0", "cu118", "7.5", "x", "cpu"])
GPUS = st.sampled_from(["8.6", "9.0+PTX", "3.5", "RTX 4090", "H100", "native", "official",
                        "sm_90a", "12.0", "bogus", ""])  # fmt: skip
FEATURES = st.sampled_from(["cudnn", "nccl", "mkl", "fbgemm", "tests", "nope"])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    argv = ["plan", "--json"]
    if draw(st.booleans()):
        argv += ["--torch", draw(st.one_of(VERSIONS, TEXT))]
    if draw(st.booleans()):
        argv += ["--cuda", draw(st.one_of(CUDAS, TEXT))]
    for gpu in draw(st.lists(st.one_of(GPUS, TEXT), max_size=3)):
        argv += ["--gpu", gpu]
    if draw(st.booleans()):
        argv += ["--python", draw(st.sampled_from(["3.5", "3.8", "3.11", "3.14", "x"]))]
    for feat in draw(st.lists(FEATURES, max_size=2)):
        argv += [draw(st.sampled_from(["--enable", "--disable"])), feat]
    if draw(st.booleans()):
        argv += ["--with", draw(st.sampled_from(["auto", "torchvision", "torchtext==0.1", "x"]))]
    if draw(st.booleans()):
        argv += ["--compiler", draw(st.sampled_from(["gcc-9", "gcc-13", "clang-15", "icc"]))]
    if draw(st.booleans()):
        argv += ["--link", draw(st.sampled_from(["nccl=static", "cuda=pip-deps", "x=y", "z"]))]
    return argv


@pytest.fixture(scope="module")
def host_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "host.json"
    path.write_text(ci_host().model_dump_json())
    return path


ENV_KEYS = st.sampled_from(
    ["TORCHSMITH_TORCH", "TORCHSMITH_GPUS", "TORCHSMITH_FEATURES_CUDNN", "TORCHSMITH_PYTHN",
     "TORCHSMITH_ACCELERATOR", "TORCHSMITH_MAX_JOBS"]
)  # fmt: skip
SPEC_LINES = st.sampled_from(['torch = "1.13.1"', 'accelerator = "11.8"', 'gpus = ["8.6", "x"]',
                              "[features]\ncudnn = true", "max_jobs = -3", "torhc = 1", "= broken",
                              'python = "3.10"', "[linking]\nnccl = \"static\""])  # fmt: skip


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    env=st.dictionaries(ENV_KEYS, st.one_of(VERSIONS, CUDAS, GPUS, TEXT), max_size=3),
    lines=st.lists(SPEC_LINES, max_size=4),
)
def test_random_env_and_spec_files_never_crash(  # noqa: PLR0917
    env: dict[str, str],
    lines: list[str],
    host_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = tmp_path_factory.mktemp("spec") / "spec.toml"
    spec.write_text("\n".join(lines) + "\n")
    with monkeypatch.context() as m:
        for key, value in env.items():
            m.setenv(key, value.replace("\x00", ""))
        code = main(["plan", "--json", "--spec", str(spec), "--host-facts", str(host_file)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert code in {0, 3, 4, 6}, (env, lines, code, captured.err)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(argv=argvs())
def test_random_requests_never_crash(
    argv: list[str], host_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main([*argv, "--host-facts", str(host_file)])
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert code in {0, 2, 3, 4, 5, 6}, (argv, code, captured.err)
