"""The container backend passes environment by a private file, never ``--env KEY=VALUE`` on the
engine's argv (security review f1b4bec, N1: a git_mirror password from a spec file, a cache
endpoint's user-info and a scheme-less proxy credential sat on buildah's world-readable argv
for the whole build)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from torchsmith.container import env_file, inside
from torchsmith.container.engines import EngineChoice, EngineProbe
from torchsmith.errors import HostError
from torchsmith.spec_sources import resolve_spec

CANARY = "ghpCANARY5a1e"  # a canary, not a credential
BUILDAH = EngineChoice(EngineProbe("buildah", "/usr/bin/buildah", True, "1.28.2", False), "a")


def _session(root: Path, proxies: dict[str, str]) -> inside.Session:
    env = (("PYTHONPATH", inside.LIB), *inside.proxy_env(proxies).items())
    return inside.Session(inside.buildah_head(BUILDAH), "ctr", (root, root / "dist"), env)


def test_no_secret_reaches_the_engines_argv(tmp_path: Path) -> None:
    rs = resolve_spec(cli={"torch": "2.6.0", "accelerator": "cpu", "source": "debian",
                           "git_mirror": f"https://bob:{CANARY}@git.example/"})  # fmt: skip
    proxies = {"http_proxy": f"alice:{CANARY}@proxy.example:3128"}  # no scheme: kept, by file
    s = _session(tmp_path, proxies)
    for env in ({}, inside.spec_env(rs)):
        argv = s.run_argv(["python", "-m", "torchsmith", "build"], env)
        assert not any(CANARY in a for a in argv) and "--env" not in argv
        file = Path(argv[argv.index(env_file.LOADER) + 2])
        assert CANARY in file.read_text()
        info = file.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid()
        assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    left = list((tmp_path / env_file.DIR_NAME).iterdir())
    assert len(left) == 1  # each call removes this process's earlier file first
    s.release()
    assert not list((tmp_path / env_file.DIR_NAME).iterdir())


def test_a_command_without_environment_is_not_wrapped(tmp_path: Path) -> None:
    s = inside.Session(inside.buildah_head(BUILDAH), "ctr", (tmp_path,))
    assert s.run_argv(["true"])[-3:] == ["ctr", "--", "true"]


def test_values_are_quoted_for_the_shell() -> None:
    text = env_file.script([("A", "it's $(id) `x` \\ ;\nB=1"), ("B", "")])
    assert text == "A='it'\"'\"'s $(id) `x` \\ ;\nB=1'\nB=''\n"
    with pytest.raises(HostError):
        env_file.script([("A=B", "x")])
    with pytest.raises(HostError):
        env_file.script([("A", "x\0y")])


def test_a_planted_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / env_file.DIR_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(HostError, match="not a private directory"):
        env_file.write(tmp_path, [("A", "b")])
    open_dir = tmp_path / "open"
    (open_dir / env_file.DIR_NAME).mkdir(parents=True, mode=0o755)
    (open_dir / env_file.DIR_NAME).chmod(0o755)
    with pytest.raises(HostError, match="not a private directory"):
        env_file.write(open_dir, [("A", "b")])
