"""How the process ends (torchsmith/exiting.py); the real race is in
tests/integration/test_process_exit.py."""

from __future__ import annotations

import sys

import pytest

from torchsmith.exiting import TOKIO_MODULES, exit_process, needs_hard_exit


def test_without_a_tokio_module_the_exit_is_the_normal_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TOKIO_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert not needs_hard_exit()
    with pytest.raises(SystemExit) as exited:
        exit_process(4)
    assert exited.value.code == 4


def test_py_rattler_loaded_asks_for_the_hard_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    import rattler

    monkeypatch.setitem(sys.modules, "rattler", rattler)
    assert needs_hard_exit()


def test_the_command_entry_point_ends_through_exit_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib.metadata import entry_points

    from torchsmith import cli, exiting

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "torchsmith"]
    assert script.value == "torchsmith.cli:run"
    ended: list[int] = []
    monkeypatch.setattr(cli, "main", lambda: 5)
    monkeypatch.setattr(exiting, "exit_process", ended.append)
    cli.run()
    assert ended == [5]
