"""Random specs and flags never produce a traceback: every outcome is a plan or a clear error.

Issue 16 trial 7: every spec key (derived from ``BuildSpec`` and its nested models, so a new
key is fuzzed the day it is added) and every command's arguments (derived from the argument
parser) are fuzzed; no traceback, no internal error (exit 70), and every error has a hint. A
command that gets as far as starting a tool stops there (unit tests start no process).

Under ``CI=true`` the examples are derandomized (the same ones every run: a CI failure is never
a flake, and reruns reproduce it); a local run draws new ones. Every input a random run has ever
found is kept as a named test at the end (:data:`FOUND`)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from tests.unit.planner.kb import ci_host
from torchsmith.cli import build_parser, main
from torchsmith.commands import COMMAND_MODULES
from torchsmith.errors import InternalError
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import spec_keys

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("local", derandomize=False)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "local")

VERSIONS = st.sampled_from(["1.0.0", "1.1.0", "1.13.1", "2.5.1", "main", "9.9.9", "abc", ""])
CUDAS = st.sampled_from(["9.0", "11.8", "12.4", "13.0", "cu118", "7.5", "x", "cpu"])
GPUS = st.sampled_from(["8.6", "9.0+PTX", "3.5", "RTX 4090", "H100", "native", "official",
                        "sm_90a", "12.0", "bogus", ""])  # fmt: skip
FEATURES = st.sampled_from(["cudnn", "nccl", "mkl", "fbgemm", "tests", "nope"])
NO_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
TEXT = st.text(alphabet=st.characters(blacklist_categories=NO_SURROGATES), max_size=12)


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


# --- every spec key, derived from the model (issue 16 trial 7) -------------------------------

SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=NO_SURROGATES, blacklist_characters="/~\\\x00"),
    max_size=10,
)  # no absolute or home paths: whatever a value names lands in the test's directory
STRINGS = st.one_of(
    st.sampled_from(["2.5.1", "2.13.0", "12.4", "11.8", "cpu", "8.6", "9.0+PTX", "native",
                     "gcc-12", "python3", "3.11", "path:.", "git:v2.5.1", "debian:pytorch",
                     "tarball:x.tar.gz", "torch_cpu", "lib", "dist", "", "-1", "1e9"]),
    SAFE_TEXT,
)  # fmt: skip
WRONG_TYPES = st.sampled_from(["x", 0, -7, 3.5, True, [], ["a", 1], {"k": 1}])


def model_leaves(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    """``dotted key -> annotation`` of every field of ``model`` and of its nested models."""
    leaves: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            leaves |= model_leaves(sub, f"{prefix}{name}.")
        else:
            leaves[f"{prefix}{name}"] = sub
    return leaves


SPEC_LEAVES = model_leaves(BuildSpec)


def values_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of the annotation's type (and near misses), sometimes of a wrong type."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    origin = get_origin(annotation)
    if origin is Literal:
        good: st.SearchStrategy[Any] = st.sampled_from([*args, "nope", ""])
    elif origin is tuple:
        good = st.lists(values_for(args[0]), max_size=3)
    elif origin in {Union, UnionType}:
        good = values_for(args[0]) if len(args) == 1 else st.one_of(*map(values_for, args))
    elif annotation is bool:
        good = st.booleans()
    elif annotation is int:
        good = st.integers(-3, 1 << 40)
    else:
        good = STRINGS
    return st.one_of(good, WRONG_TYPES) if origin is not tuple else good


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value) if isinstance(value, str) else str(value)


def spec_text(values: dict[str, Any]) -> str:
    """A TOML spec: top-level keys first, then one table per nested model."""
    top = [f"{k} = {toml_value(v)}" for k, v in values.items() if "." not in k]
    tables: dict[str, list[str]] = {}
    for key, value in values.items():
        if "." in key:
            table, name = key.split(".", 1)
            tables.setdefault(table, []).append(f"{name} = {toml_value(value)}")
    return "\n".join(top + [f"[{t}]\n" + "\n".join(lines) for t, lines in tables.items()]) + "\n"


@st.composite
def specs(draw: st.DrawFn, key: str) -> dict[str, Any]:
    """``key`` with a value, plus up to three other keys (one maybe misspelt)."""
    values = {key: draw(values_for(SPEC_LEAVES[key]))}
    for other in draw(st.lists(st.sampled_from(sorted(SPEC_LEAVES)), max_size=3)):
        values[other] = draw(values_for(SPEC_LEAVES[other]))
    if draw(st.integers(0, 9)) == 0:
        values[key + draw(st.sampled_from(["x", "_", "s"]))] = draw(STRINGS)
    return values


def test_the_fuzzed_keys_are_the_model_keys() -> None:
    """Derived, not listed: the newer keys are there because the model has them."""
    assert SPEC_LEAVES.keys() == spec_keys().keys()
    newer = {"nccl.root", "nccl.include_dir", "nccl.lib_dir", "install_python", "cache.dir",
             "outputs", "targets", "companions", "features.split_cuda"}  # fmt: skip
    assert newer <= SPEC_LEAVES.keys()
    assert "install" in get_args(get_args(SPEC_LEAVES["outputs"])[0])


DIAGNOSED = 20  # doctor: a known cause found and printed (README, exit codes), not an error


def check_outcome(code: int | None, err: str, what: object) -> None:
    """No traceback, no internal error (70), and every error says what to do. A traceback is
    Python's header line: the word alone may be the user's own input echoed in a clear error."""
    assert "Traceback (most recent call last)" not in err, (what, err)
    assert code != InternalError.exit_code, (what, err)
    if code not in {None, 0, 2, DIAGNOSED}:  # 2 also covers argparse's own usage errors
        assert "→" in err, (what, code, err)
    if code == 2 and "usage:" not in err:  # ours, not argparse's
        assert "→" in err, (what, code, err)


@pytest.mark.parametrize("key", sorted(SPEC_LEAVES))
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_spec_key_fuzzed_never_crashes(
    key: str,
    data: st.DataObject,
    host_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    values = data.draw(specs(key))
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text(values), encoding="utf-8")
    code = main(["plan", "--json", "--spec", str(spec), "--host-facts", str(host_file)])
    check_outcome(code, capsys.readouterr().err, spec.read_text())


# --- every command's arguments, derived from the parser --------------------------------------


class WouldRunATool(BaseException):
    """Raised where a command would start a process: its arguments got that far."""


def _would_run(*args: Any, **kwargs: Any) -> Any:
    raise WouldRunATool(args[:1])


def command_parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """``(command[, sub-command]) -> parser`` for every command torchsmith has."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subs:
            for name, child in action.choices.items():
                walk(child, (*path, name))
        if not subs and path:
            found[path] = parser

    walk(build_parser(), ())
    return found


COMMANDS = command_parsers()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL_FILES = [
    str(FIXTURES / "doctor" / "libcuda-missing.log"),  # a build log
    str(FIXTURES / "inspect" / "plans" / "manifest-2.14.1-cu130.json"),  # a manifest
    str(FIXTURES / "inspect" / "libk_dyn.so"),  # a binary that is not a wheel
]
SKIP_ACTIONS = (argparse._HelpAction, argparse._VersionAction)
# weighted coins (hypothesis favours small integers, so not ``integers(0, n) == 0``)
SOMETIMES = st.sampled_from([False, False, False, False, True])
MOSTLY = st.sampled_from([True] * 9 + [False])


def exclusive(parser: argparse.ArgumentParser) -> dict[int, set[int]]:
    """``id(action) -> ids of the actions it excludes`` (``--cuda | --cpu`` …)."""
    others: dict[int, set[int]] = {}
    for group in parser._mutually_exclusive_groups:
        ids = {id(a) for a in group._group_actions}
        for action in group._group_actions:
            others.setdefault(id(action), set()).update(ids - {id(action)})
    return others


def option_value(draw: st.DrawFn, action: argparse.Action, values: Any) -> list[str]:
    if not action.option_strings:
        return [draw(values)]
    flag = draw(st.sampled_from(action.option_strings))
    if action.nargs == 0:
        return [flag]
    if action.choices and draw(MOSTLY):  # mostly valid: get past argparse
        return [flag, draw(st.sampled_from(list(action.choices)))]
    return [flag, draw(values)]


@st.composite
def command_argvs(draw: st.DrawFn, path: tuple[str, ...], files: list[str]) -> list[str]:
    """The required options and about a fifth of the others (mostly valid choices; an
    exclusive pair now and then), and the positionals now and then."""
    values = st.one_of(STRINGS, st.sampled_from(files))
    parser = COMMANDS[path]
    conflicts, taken = exclusive(parser), set[int]()
    argv = list(path)
    for action in parser._actions:
        if isinstance(action, SKIP_ACTIONS):
            continue
        wanted = st.booleans() if not action.option_strings else SOMETIMES
        if not action.required and not draw(wanted):
            continue
        clash = bool(conflicts.get(id(action), set()) & taken)
        if clash and draw(MOSTLY):
            continue
        taken.add(id(action))
        argv += option_value(draw, action, values)
    return argv


def test_the_fuzzed_commands_are_all_commands() -> None:
    names = {path[0] for path in COMMANDS}
    assert names == {m.rsplit(".", 1)[1] for m in COMMAND_MODULES}
    assert {("source", "fetch"), ("source", "bundle"), ("kb", "release")} <= COMMANDS.keys()


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_command_fuzzed_never_crashes(  # noqa: PLR0917
    path: tuple[str, ...],
    data: st.DataObject,
    host_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('torch = "2.5.1"\naccelerator = "cpu"\n[nccl]\nroot = "nccl"\n')
    files = [str(host_file), str(spec), str(tmp_path), "missing.whl", "missing.json", *REAL_FILES]
    argv = data.draw(command_argvs(path, files))
    if any(a.option_strings == ["--host-facts"] for a in COMMANDS[path]._actions):
        argv += data.draw(st.sampled_from([[], *[["--host-facts", str(host_file)]] * 4]))
    if any(a.option_strings == ["--cache-root"] for a in COMMANDS[path]._actions):
        argv += ["--cache-root", str(tmp_path / "cache")]  # never the user's own cache
    code: int | None
    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        for name in ("Popen", "run", "check_output", "call"):
            m.setattr(subprocess, name, _would_run)
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors, --help
            code = int(exc.code or 0)
        except WouldRunATool:
            code = None
    check_outcome(code, capsys.readouterr().err, argv)


@pytest.mark.parametrize(
    "argv",
    [["inspect", ""], ["verify", "", "--no-smoke", "--plan", REAL_FILES[1]]],
    ids=["inspect", "verify"],
)
def test_an_empty_wheel_path_says_what_to_give(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the fuzzer: ``''`` is no wheel and no --python, and the error had no hint."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "an empty path names neither" in err and "→ torchsmith " in err


def test_ci_runs_the_fuzz_derandomized() -> None:
    """A fixed set of examples under CI=true, random ones locally."""
    assert settings.get_profile("ci").derandomize
    assert not settings.get_profile("local").derandomize
    assert settings.default.derandomize == (os.environ.get("CI") == "true")


# --- every input a random run found, by name -------------------------------------------------

FOUND: dict[str, tuple[list[str], int, str]] = {
    # issue 23: a binary --host-facts file was read as UTF-8 text: UnicodeDecodeError, exit 70
    "host-facts-binary": (["--host-facts", REAL_FILES[2]], 2, "not a text file"),
    "host-facts-not-host-facts": (["--host-facts", REAL_FILES[1]], 2, "not recorded host facts"),
    # fabdcc8: a Python that is no version was planned (now refused by its key)
    "python-not-a-version": (["--python", "x"], 3, "is not a Python version"),
    # 2a93c9d: rich markup in user text broke the error printer (exit 70)
    "markup-in-torch": (["--torch", "[/]"], 4, "'[/]' is not a release"),
    "markup-in-gpu": (["--cpu", "--gpu", "[/bold]"], 4, "['[/bold]'] need a CUDA build"),
    # 2a93c9d: a build_version that is no PEP 440 version reached the wheel's name
    "build-version-not-pep440": (["--build-version", "[x]"], 3, "is not a PEP 440 version"),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_an_input_the_fuzzer_found(
    name: str, host_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, code, words = FOUND[name]
    host = [] if "--host-facts" in argv else ["--host-facts", str(host_file)]
    assert main(["plan", "--json", *host, *argv]) == code
    err = capsys.readouterr().err
    assert words in err and "→" in err
    check_outcome(code, err, argv)


def test_an_echoed_word_traceback_is_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """2026-11-28, a local run: `kb cuda Traceback` got the right, clear refusal, and the oracle
    took the echoed word for a Python traceback."""
    code = main(["kb", "cuda", "Traceback"])
    err = capsys.readouterr().err
    assert code != 0 and "CUDA 'Traceback' is not a CUDA release" in err and "→" in err
    check_outcome(code, err, ["kb", "cuda", "Traceback"])

