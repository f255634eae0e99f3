"""pyenv-style shims (a shell script that asks `pyenv` which interpreter to run) are resolved to
the real interpreter by the host probe and by preflight; one that cannot run is refused at
preflight with pyenv's own words (new-user trial §3 #9: it passed, then exited 127)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from torchsmith.backends.local import LocalExecutor
from torchsmith.errors import HostError
from torchsmith.host.pythons import probe_pythons
from torchsmith.proc import HOST
from torchsmith.steps.preflight import plan_python, resolve_python

FAIL = Path(__file__).resolve().parents[1] / "fixtures" / "host" / "pyenv-shim-fail.txt"
VERSION = "{}.{}".format(*sys.version_info[:2])
NAME = f"python{VERSION}"
# the shape of ~/.pyenv/shims/python3.X: `exec pyenv exec "$program" "$@"`
SHIM = (
    '#!/usr/bin/env bash\nset -e\nprogram="${0##*/}"\n'
    'exec "$(dirname "$0")/pyenv" exec "$program" "$@"\n'
)


def _bin(tmp_path: Path, pyenv: str) -> dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, text in ((NAME, SHIM), ("pyenv", pyenv)):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin", "HOME": str(tmp_path)}


def _working(tmp_path: Path) -> dict[str, str]:
    return _bin(tmp_path, f'#!/bin/sh\nshift 2\nexec "{sys.executable}" "$@"\n')


def _failing(tmp_path: Path) -> dict[str, str]:
    text = FAIL.read_text().replace("3.12", VERSION)
    (tmp_path / "says").write_text(text)
    return _bin(tmp_path, f'#!/bin/sh\ncat "{tmp_path / "says"}" >&2\nexit 127\n')


def test_host_probe_records_the_interpreter_a_shim_runs(tmp_path: Path) -> None:
    found, _warnings = probe_pythons(_working(tmp_path), runner=HOST, system_dirs=())
    paths = {p.path: p.version for p in found}
    assert str(tmp_path / "bin" / NAME) not in paths
    assert paths[sys.executable].startswith(VERSION)


def test_preflight_resolves_a_shim(tmp_path: Path) -> None:
    env = _working(tmp_path)
    shim = str(tmp_path / "bin" / NAME)
    assert resolve_python(LocalExecutor(env), shim, env, VERSION) == sys.executable


def test_preflight_refuses_a_shim_that_cannot_run(tmp_path: Path) -> None:
    env = _failing(tmp_path)
    shim = str(tmp_path / "bin" / NAME)
    with pytest.raises(HostError, match=f"cannot run: pyenv: {NAME}: command not found"):
        resolve_python(LocalExecutor(env), shim, env, VERSION)
    assert os.access(shim, os.X_OK)


def test_preflight_takes_the_version_pyenv_has_when_its_shim_cannot_run(tmp_path: Path) -> None:
    """pyenv's layout: <root>/shims/python3.X fails (version not selected) while
    <root>/versions/3.X.N/bin/python3.X is installed: the build uses the installed one."""
    env = _failing(tmp_path)
    root = tmp_path / "pyenv-root"
    (root / "shims").mkdir(parents=True)
    shim = root / "shims" / NAME
    shim.write_text(SHIM)
    shim.chmod(0o755)
    (tmp_path / "bin" / NAME).rename(root / "shims" / "unused")
    (root / "shims" / "pyenv").symlink_to(tmp_path / "bin" / "pyenv")
    for patch in ("0", "11"):
        installed = root / "versions" / f"{VERSION}.{patch}" / "bin"
        installed.mkdir(parents=True)
        (installed / NAME).symlink_to(sys.executable)
    chosen = plan_python(LocalExecutor(env), str(shim), env, VERSION)
    assert chosen == str(root / "versions" / f"{VERSION}.11" / "bin" / NAME)  # the newest
    with pytest.raises(HostError, match="command not found"):
        plan_python(LocalExecutor(env), str(tmp_path / "bin" / "pyenv"), env, VERSION)
