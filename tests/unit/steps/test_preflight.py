"""Bad input is a clear error before any work: missing compiler or tools, too little disk."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from torchsmith.backends.base import Executor
from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan, Decision
from torchsmith.proc import Completed, LineCallback
from torchsmith.steps.preflight import preflight


class FakeExecutor(Executor):
    """Knows a fixed set of programs; answers ``--version`` with a canned first line."""

    name = "fake"

    def __init__(self, programs: set[str], free_gib: float = 100.0) -> None:
        self.programs = programs
        self.free_gib = free_gib
        self.ran: list[list[str]] = []

    def environment(self) -> dict[str, str]:
        return {"PATH": "/usr/bin"}

    def run(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        log_path: Path | None = None,
        on_line: LineCallback | None = None,
        check: bool = True,
        stdin_text: str | None = None,
    ) -> Completed:
        args = [str(a) for a in argv]
        self.ran.append(args)
        return Completed(tuple(args), 0, 0.0, None, (f"{Path(args[0]).name} version 1.0",))

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
    ) -> subprocess.CompletedProcess[str]:
        args = [str(a) for a in argv]
        self.ran.append(args)
        return subprocess.CompletedProcess(args, 0, f"{Path(args[0]).name} version 1.0\n", "")

    def copy_in(self, src: Path, dest: Path) -> None:
        raise NotImplementedError

    def copy_out(self, src: Path, dest: Path) -> None:
        raise NotImplementedError

    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        return f"/usr/bin/{program}" if program in self.programs else None

    def disk_free_gib(self, path: Path) -> float:
        return self.free_gib


ALL = {"gcc-12", "g++-12", "cmake", "ninja", "ccache"}


@pytest.fixture
def plan(fixtures: Path) -> BuildPlan:
    text = (fixtures / "build" / "plan-debian-1.13.1-c10.json").read_text()
    plan = BuildPlan.model_validate_json(text)
    python = plan.source.model_copy(update={"kind": "git"})
    return plan.model_copy(
        update={"source": python, "python": Decision(value="3.11", origin="user", reason="t")}
    )


def test_everything_found(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({*ALL, "python3.11"})
    tools = preflight(ex, plan, ex.environment(), tmp_path)
    assert (tools.cc, tools.cxx) == ("/usr/bin/gcc-12", "/usr/bin/g++-12")
    assert tools.python == "/usr/bin/python3.11"
    assert tools.cache == "/usr/bin/ccache"
    assert tools.versions["cmake"] == "cmake version 1.0"


def test_unversioned_compiler_is_a_fallback(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({"gcc", "g++", "cmake", "ninja", "ccache", "python3"})
    tools = preflight(ex, plan, ex.environment(), tmp_path)
    assert tools.cxx == "/usr/bin/g++"


def test_missing_compiler_is_a_host_error(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({"cmake", "ninja", "ccache", "python3"})
    with pytest.raises(HostError, match="compiler gcc-12"):
        preflight(ex, plan, ex.environment(), tmp_path)
    assert ex.ran == []  # nothing was run


def test_missing_tools_are_listed_together(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({"gcc-12", "g++-12", "python3"})
    with pytest.raises(HostError, match="missing on this machine: cmake, ninja, ccache"):
        preflight(ex, plan, ex.environment(), tmp_path)


def test_too_little_disk_stops_before_work(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor(ALL, free_gib=0.5)
    with pytest.raises(HostError, match=r"only 0\.5 GiB free"):
        preflight(ex, plan, ex.environment(), tmp_path)
    assert ex.ran == []


def test_missing_compiler_hint_names_packages_and_install_deps(
    plan: BuildPlan, tmp_path: Path
) -> None:
    ex = FakeExecutor({"cmake", "ninja", "ccache", "python3"})
    with pytest.raises(HostError) as info:
        preflight(ex, plan, ex.environment(), tmp_path)
    assert "apt-get install gcc-12 g++-12" in info.value.hint
    assert "--install-deps" in info.value.hint


def test_install_deps_installs_the_missing_compiler_then_finds_it(
    plan: BuildPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = FakeExecutor({"cmake", "ninja", "ccache", "python3"})
    installed: list[str] = []

    def fake_install(label: str, env: object, where: Path) -> None:
        installed.append(label)
        ex.programs |= {"gcc-12", "g++-12"}

    monkeypatch.setattr("torchsmith.steps.preflight._install", fake_install)
    tools = preflight(ex, plan, ex.environment(), tmp_path, install_deps=True)
    assert installed == ["gcc-12"] and tools.cxx == "/usr/bin/g++-12"
