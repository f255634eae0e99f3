"""Bad input is a clear error before any work: missing compiler or tools, too little disk."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from torchsmith.backends.base import Executor
from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan, Decision, EnvSetting
from torchsmith.proc import Completed, LineCallback
from torchsmith.steps.preflight import preflight


class FakeExecutor(Executor):
    """Knows a fixed set of programs; answers ``--version`` with a canned first line."""

    name = "fake"

    def __init__(
        self, programs: set[str], free_gib: float = 100.0, answers: dict[str, str] | None = None
    ) -> None:
        self.programs = programs
        self.free_gib = free_gib
        self.ran: list[list[str]] = []
        # program name -> stdout of a query; a Python answers sys.executable and X.Y
        self.answers = answers or {}

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
        name = Path(args[0]).name
        if name in self.answers:
            code, _, text = self.answers[name].partition(":")
            return subprocess.CompletedProcess(args, int(code), text, text)
        if args[1:2] == ["-c"]:
            return subprocess.CompletedProcess(args, 0, f"/opt/real/{name}\n3.11\n", "")
        return subprocess.CompletedProcess(args, 0, f"{name} version 1.0\n", "")

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
    python = plan.source.model_copy(update={"kind": "git", "system_python": False})
    return plan.model_copy(
        update={"source": python, "python": Decision(value="3.11", origin="user", reason="t")}
    )


def test_everything_found(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({*ALL, "python3.11"})
    tools = preflight(ex, plan, ex.environment(), tmp_path)
    assert (tools.cc, tools.cxx) == ("/usr/bin/gcc-12", "/usr/bin/g++-12")
    assert tools.python == "/opt/real/python3.11"  # what the interpreter says it is
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

    def fake_install(_ex: object, label: str, env: object, where: Path) -> None:
        installed.append(label)
        ex.programs |= {"gcc-12", "g++-12"}

    monkeypatch.setattr("torchsmith.steps.preflight._install", fake_install)
    tools = preflight(ex, plan, ex.environment(), tmp_path, install_deps=True)
    assert installed == ["gcc-12"] and tools.cxx == "/usr/bin/g++-12"


HOST_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "host"


def _with_compiler(plan: BuildPlan, label: str) -> BuildPlan:
    return plan.model_copy(update={"compiler": Decision(value=label, origin="user", reason="t")})


@pytest.mark.parametrize("root", ["/proc/nope", "/proc/self/status/x"])
def test_unwritable_cache_root_is_named_not_blamed_on_disk_space(
    plan: BuildPlan, root: str
) -> None:
    """New-user trial §3 #12: `--cache-root /proc/nope` said "only 0.0 GiB free"."""
    ex = FakeExecutor({*ALL, "python3.11"}, free_gib=0.0)
    with pytest.raises(HostError, match=f"cannot write to the cache root {root}") as info:
        preflight(ex, plan, ex.environment(), Path(root))
    assert "GiB free" not in str(info.value) and "--cache-root" in info.value.hint


def test_cache_root_that_is_a_file(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({*ALL, "python3.11"})
    (tmp_path / "afile").write_text("x")
    with pytest.raises(HostError, match=r"cannot write to the cache root .*afile: File exists"):
        preflight(ex, plan, ex.environment(), tmp_path / "afile")


def _debian(monkeypatch: pytest.MonkeyPatch) -> FakeExecutor:
    monkeypatch.setattr("torchsmith.steps.preflight.os_release", lambda: ("debian", "12"))
    policy = (HOST_FIXTURES / "apt-cache-policy.txt").read_text()
    return FakeExecutor({"cmake", "ninja", "ccache", "python3", "apt-cache"}, answers={
        "apt-cache": f"0:{policy}"
    })  # fmt: skip


def test_compiler_the_host_cannot_package_gets_no_apt_get_hint(
    plan: BuildPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New-user trial §4 seed 000: `apt-get install gcc-6` on Debian 12, which has none."""
    ex = _debian(monkeypatch)
    with pytest.raises(HostError, match="compiler gcc-6") as info:
        preflight(ex, _with_compiler(plan, "gcc-6"), ex.environment(), tmp_path)
    hint = info.value.hint
    assert "apt lists have no gcc-6 g++-6" in hint and "apt-get install" not in hint
    assert "container backends are not implemented yet" in hint


def test_compiler_the_host_packages_gets_one_install_line(
    plan: BuildPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New-user trial §3 #13: `apt-get install clang-14 clang-14; RHEL: dnf install clang-14`."""
    ex = _debian(monkeypatch)
    with pytest.raises(HostError) as info:
        preflight(ex, _with_compiler(plan, "clang-14"), ex.environment(), tmp_path)
    hint = info.value.hint
    assert "apt-get install clang-14 (Debian/Ubuntu)" in hint
    assert "clang-14 clang-14" not in hint and "dnf" not in hint


def test_python_that_cannot_run_is_refused_with_its_cause(plan: BuildPlan, tmp_path: Path) -> None:
    """New-user trial §3 #9: the pyenv shim python3.10 passed preflight, then exited 127."""
    shim = (HOST_FIXTURES / "pyenv-shim-fail.txt").read_text().replace("3.12", "3.11")
    ex = FakeExecutor({*ALL, "python3.11"}, answers={"python3.11": f"127:{shim}"})
    with pytest.raises(HostError, match=r"python3\.11 cannot run: pyenv: python3\.11: command not"):
        preflight(ex, plan, ex.environment(), tmp_path)


def test_python_of_another_version_is_refused(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({*ALL, "python3"}, answers={"python3": "0:/usr/bin/python3.13\n3.13\n"})
    with pytest.raises(HostError, match=r"python3 is Python 3\.13; the plan needs 3\.11"):
        preflight(ex, plan, ex.environment(), tmp_path)


def test_install_deps_installs_the_missing_build_tools_then_finds_them(
    plan: BuildPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # round-3 trial: --install-deps installed Debian's Build-Depends, then "missing ccache"
    ex = FakeExecutor({"gcc-12", "g++-12", "python3", "cmake"})
    asked: list[list[str]] = []

    def fake_ensure(packages: list[str], env: object, **kw: object) -> list[str]:
        asked.append(list(packages))
        ex.programs |= {"ninja", "ccache"}
        return list(packages)

    monkeypatch.setattr("torchsmith.steps.preflight.ensure_packages", fake_ensure)
    monkeypatch.setattr("torchsmith.steps.preflight.shutil.which", lambda *a, **k: "/usr/bin/x")
    tools = preflight(ex, plan, ex.environment(), tmp_path, install_deps=True)
    assert asked == [["ninja-build", "ccache"]] and tools.cache == "/usr/bin/ccache"


def test_without_apt_the_missing_tools_are_still_named(
    plan: BuildPlan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = FakeExecutor({"gcc-12", "g++-12", "python3", "cmake", "ninja"})
    monkeypatch.setattr("torchsmith.steps.preflight.shutil.which", lambda *a, **k: None)
    with pytest.raises(HostError, match="missing on this machine: ccache"):
        preflight(ex, plan, ex.environment(), tmp_path, install_deps=True)


def _with_nccl(plan: BuildPlan, root: str) -> BuildPlan:
    settings = [
        EnvSetting(name="NCCL_ROOT", value=root, reason="t"),
        EnvSetting(name="NCCL_INCLUDE_DIR", value=f"{root}/include", reason="t"),
        EnvSetting(name="NCCL_LIB_DIR", value=f"{root}/lib", reason="t"),
    ]
    return plan.model_copy(update={"env": [*plan.env, *settings]})


def test_a_system_nccl_that_is_not_there_stops_the_build(plan: BuildPlan, tmp_path: Path) -> None:
    """Trial E10: TORCHSMITH_NCCL_ROOT=/nonexistent with system_nccl was planned and built with
    unchecked; the machine that builds is asked (through the executor) before any work."""
    ex = FakeExecutor({*ALL, "python3.11"}, answers={"sh": "1:"})
    with pytest.raises(HostError, match=r"no nccl\.h in /nonexistent/include") as info:
        preflight(ex, _with_nccl(plan, "/nonexistent"), ex.environment(), tmp_path)
    assert "libnccl.so* in /nonexistent/lib (NCCL_LIB_DIR)" in info.value.message
    assert "--nccl-root" in info.value.hint and "drop system_nccl" in info.value.hint
    assert next(a for a in ex.ran if a[0] == "sh")[:2] == ["sh", "-c"]


def test_a_system_nccl_that_is_there_passes(plan: BuildPlan, tmp_path: Path) -> None:
    ex = FakeExecutor({*ALL, "python3.11"}, answers={"sh": "0:"})
    preflight(ex, _with_nccl(plan, "/usr"), ex.environment(), tmp_path)
    probes = [a for a in ex.ran if a[0] == "sh"]
    assert [a[-2:] for a in probes] == [["/usr/include", "nccl.h"], ["/usr/lib", "libnccl.so*"]]
