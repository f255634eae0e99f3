"""Start-up costs only what the command uses (issue 26): the modules a command imports, checked in
``sys.modules`` after running it in a freshly imported torchsmith (no subprocess: unit tier)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.unit.planner.kb import ci_host

SCRUBBED = ("torchsmith", "elftools", "packaging", "tomllib", "tomli", "difflib")
"""Pure Python: safe to import afresh, then put back."""
PLAN = ["plan", "--torch", "2.6.0", "--cuda", "12.4", "--gpu", "8.6", "--json"]


def _scrubbed(name: str) -> bool:
    return name.split(".", maxsplit=1)[0] in SCRUBBED


def fresh_modules(run: Callable[[], object]) -> set[str]:
    """The modules present after ``run()`` in a process that had imported no torchsmith module
    and none of the other :data:`SCRUBBED` packages; the test process's own modules are put back
    afterwards."""
    saved = dict(sys.modules)
    for name in [n for n in sys.modules if _scrubbed(n)]:
        del sys.modules[name]
    try:
        run()
        return set(sys.modules)
    finally:
        sys.modules.clear()
        sys.modules.update(saved)


def _main(argv: list[str]) -> Callable[[], object]:
    def run() -> object:
        from torchsmith.cli import main

        try:
            return main(argv)
        except SystemExit as done:  # --help, --version
            return done.code

    return run


@pytest.fixture
def host_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "host.json"
    path.write_text(ci_host().model_dump_json())
    yield path


def commands_in(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("torchsmith.commands.")}


def test_plan_imports_no_elf_library_no_inspect_and_no_probe(
    host_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    modules = fresh_modules(_main([*PLAN, "--host-facts", str(host_file)]))
    assert '"plan_hash"' in capsys.readouterr().out  # the plan was made and printed
    assert not {m for m in modules if m.split(".", maxsplit=1)[0] == "elftools"}
    assert not {m for m in modules if m.startswith("torchsmith.inspect")}
    assert "torchsmith.host.probe" not in modules  # --host-facts given: no probe at all
    assert "torchsmith.console" not in modules  # --json: no rich
    assert "torchsmith.kb.schema" not in modules  # the KB's records are read without pydantic
    assert commands_in(modules) <= {"torchsmith.commands.plan", "torchsmith.commands.spec_args"}


def test_plan_without_a_spec_file_imports_no_toml_requirement_or_suggestion_parser(
    host_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What only a spec file, a pip requirement or a misspelt key needs is imported on use."""
    modules = fresh_modules(_main([*PLAN, "--host-facts", str(host_file)]))
    assert '"plan_hash"' in capsys.readouterr().out
    assert not {"tomllib", "tomli", "difflib", "packaging.requirements"} & modules


def test_help_imports_no_command_module_and_no_rich(capsys: pytest.CaptureFixture[str]) -> None:
    modules = fresh_modules(_main(["--help"]))
    assert "build torch from source" in capsys.readouterr().out  # every command still listed
    assert commands_in(modules) == set()
    assert "torchsmith.console" not in modules
    assert "torchsmith.kb" not in modules


def test_kb_command_imports_only_its_module(capsys: pytest.CaptureFixture[str]) -> None:
    modules = fresh_modules(_main(["kb", "release", "2.6.0"]))
    assert "2.6.0" in capsys.readouterr().out
    assert commands_in(modules) == {"torchsmith.commands.kb"}
    assert "torchsmith.planner" not in modules
    assert "torchsmith.kb.models" not in modules  # the records are read without pydantic


def test_a_misspelt_command_is_refused_with_the_commands_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    modules = fresh_modules(_main(["plna"]))
    assert "invalid choice: 'plna'" in capsys.readouterr().err
    assert commands_in(modules) == set()


def test_listed_help_is_each_modules_own_help() -> None:
    """``commands.COMMANDS`` (what --help lists without importing) says what each module
    registers."""
    from torchsmith.cli import build_parser
    from torchsmith.commands import COMMANDS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    registered = {choice.dest: choice.help for choice in sub._choices_actions}
    assert registered == COMMANDS


def test_the_host_command_imports_rich_only_for_its_tables() -> None:
    """``host --json`` prints JSON: importing the command (and the probe) brings no rich."""
    import importlib

    modules = fresh_modules(lambda: importlib.import_module("torchsmith.commands.host"))
    assert "torchsmith.host.probe" in modules and "torchsmith.console" not in modules


def test_a_probing_plan_imports_no_tool_or_library_probe(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A live probe for a plan (each command it starts refused by the unit tier's conftest: a
    warning), which reads no tools and no cuDNN/NCCL (host/scope.py): their probe modules are
    not even imported."""
    modules = fresh_modules(_main(PLAN))
    assert '"plan_hash"' in capsys.readouterr().out
    assert "torchsmith.host.probe" in modules
    assert not {"torchsmith.host.tools", "torchsmith.host.libs"} & modules
