"""Candidate discovery (files only, laid out in tmp_path) and the thin probe functions with
their command runner replaced by one that answers with real recorded output."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.host import _run, compilers, cuda, libs, pythons, system, tools
from torchsmith.host.model import Compiler

FIX = Path(__file__).resolve().parents[2] / "fixtures"
HOST = FIX / "host"
DEV = FIX / "device-h100"
Answer = Callable[[list[str]], str]


def exe(path: Path, body: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def fake_query(monkeypatch: pytest.MonkeyPatch, module: Any, answer: Answer) -> list[list[str]]:
    calls: list[list[str]] = []

    def query(
        argv: Sequence[Any],
        env: Mapping[str, str],
        runner: object,
        timeout: float = 10,
        **cache: Any,
    ) -> str:
        args = [str(a) for a in argv]
        calls.append(args)
        return answer(args)

    monkeypatch.setattr(module, "query", query)
    return calls


def failing(message: str) -> Answer:
    def answer(args: list[str]) -> str:
        raise _run.ProbeError(message)

    return answer


# -- the runner ---------------------------------------------------------------------------


def test_which_uses_the_given_path_only(tmp_path: Path) -> None:
    tool = exe(tmp_path / "bin" / "mytool")
    (tmp_path / "bin" / "notexec").write_text("")
    assert _run.which("mytool", {"PATH": f"::{tmp_path / 'bin'}"}) == tool
    assert _run.which("notexec", {"PATH": str(tmp_path / "bin")}) is None
    assert _run.which("mytool", {}) is None


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (subprocess.TimeoutExpired(["x"], 10), "gave no answer within 10 s"),
        (FileNotFoundError(2, "No such file or directory"), "cannot run x: No such file"),
        (subprocess.CompletedProcess(["x"], 3, "", "boom\nmore"), "exited with status 3: boom"),
    ],
)
def test_query_turns_every_failure_into_probe_error(
    monkeypatch: pytest.MonkeyPatch, outcome: Any, message: str
) -> None:
    def capture(*args: Any, **kwargs: Any) -> Any:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    monkeypatch.setattr(proc, "capture", capture)
    with pytest.raises(_run.ProbeError, match=message):
        _run.query(["x"], {}, runner=proc.HOST)


def test_query_returns_stdout_then_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    done = subprocess.CompletedProcess(["x"], 0, "out\n", "err\n")
    monkeypatch.setattr(proc, "capture", lambda *a, **k: done)
    assert _run.query(["x"], {}, runner=proc.HOST) == "out\nerr\n"


def test_parallel_keeps_order() -> None:
    assert _run.parallel(lambda x: x * 2, range(5)) == [0, 2, 4, 6, 8]
    assert _run.parallel(lambda x: x, []) == []


# -- compilers ----------------------------------------------------------------------------


def test_compiler_candidates_dedupe_by_real_path(tmp_path: Path) -> None:
    bin_ = tmp_path / "bin"
    exe(bin_ / "gcc-12")
    exe(bin_ / "g++-12")
    (bin_ / "gcc").symlink_to("gcc-12")
    (bin_ / "g++").symlink_to("g++-12")
    exe(bin_ / "gcc-ar-12")
    exe(bin_ / "clang-16")
    found = compilers.compiler_candidates({"PATH": str(bin_)}, extra_dirs=[bin_], root=tmp_path)
    assert [(c.family, c.cc.name, c.cxx and c.cxx.name) for c in found] == [
        ("gcc", "gcc", "g++"),
        ("clang", "clang-16", None),
    ]


def test_compiler_candidates_find_red_hat_toolsets(tmp_path: Path) -> None:
    exe(tmp_path / "opt/rh/gcc-toolset-13/root/usr/bin/gcc")
    exe(tmp_path / "opt/rh/gcc-toolset-13/root/usr/bin/g++")
    found = compilers.compiler_candidates({"PATH": ""}, extra_dirs=[], root=tmp_path)
    assert [str(c.cc.relative_to(tmp_path)) for c in found] == [
        "opt/rh/gcc-toolset-13/root/usr/bin/gcc"
    ]


def test_cxx_name() -> None:
    assert compilers.cxx_name("gcc-12") == "g++-12"
    assert compilers.cxx_name("clang") == "clang++"
    assert compilers.cxx_name("clang-16") == "clang++-16"


def test_probe_compiler_reads_gcc_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_query(monkeypatch, compilers, lambda args: (HOST / "gcc-dumpfullversion.txt").read_text())
    cand = compilers.CompilerCandidate("gcc", Path("/usr/bin/gcc"), Path("/usr/bin/g++"))
    assert compilers.probe_compiler(cand, {}, runner=proc.HOST) == (
        Compiler(family="gcc", version="12.2.0", cc="/usr/bin/gcc", cxx="/usr/bin/g++"),
        [],
    )


def test_probe_compiler_drops_a_mismatched_cxx(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "/usr/bin/gcc": HOST / "gcc-dumpfullversion.txt",
        "/usr/bin/g++": DEV / "gcc-dumpfullversion.txt",
    }
    fake_query(monkeypatch, compilers, lambda args: answers[args[0]].read_text())
    cand = compilers.CompilerCandidate("gcc", Path("/usr/bin/gcc"), Path("/usr/bin/g++"))
    compiler, warnings = compilers.probe_compiler(cand, {}, runner=proc.HOST)
    assert compiler is not None and compiler.cxx is None
    assert warnings == ["/usr/bin/g++ is version 13.3.0 but /usr/bin/gcc is 12.2.0: ignored"]


def test_probe_compiler_garbage_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_query(monkeypatch, compilers, lambda args: (HOST / "pyenv-shim-fail.txt").read_text())
    cand = compilers.CompilerCandidate("clang", Path("/usr/bin/clang"), None)
    compiler, warnings = compilers.probe_compiler(cand, {}, runner=proc.HOST)
    assert compiler is None
    assert warnings[0].startswith("/usr/bin/clang: cannot read a version")


# -- CUDA toolkits ------------------------------------------------------------------------


def test_toolkit_candidates_in_priority_order(tmp_path: Path) -> None:
    for version in ("11.8", "12.4", "12.10"):
        exe(tmp_path / f"usr/local/cuda-{version}/bin/nvcc")
    (tmp_path / "usr/local/cuda").symlink_to("cuda-12.4")
    site = tmp_path / "site"
    exe(site / "nvidia/cu13/bin/nvcc")
    env = {"PATH": "", "CUDA_HOME": str(tmp_path / "missing")}
    cands = cuda.toolkit_candidates(env, root=tmp_path, site_dirs=[site])
    origins = [c.origin for c in cands]
    assert origins[:2] == ["CUDA_HOME", "/usr/local/cuda"]
    assert [Path(o).name for o in origins[2:5]] == ["cuda-12.10", "cuda-12.4", "cuda-11.8"]
    warnings: list[str] = []
    present = cuda._present(cands, warnings)
    assert [c.root.name for c in present] == ["cuda", "cuda-12.10", "cuda-11.8", "cu13"]
    assert warnings == [f"CUDA_HOME={tmp_path / 'missing'} has no bin/nvcc"]


def _nvcc_answers(args: list[str]) -> str:
    name = "nvcc-dryrun.txt" if "-dryrun" in args else "nvcc-version-13.0.txt"
    return (HOST / name).read_text()


WRAPPER = (HOST / "nvcc-wrapper.sh").read_text()  # this machine's /usr/local/bin/nvcc


@pytest.mark.parametrize(
    ("change", "env"),
    [
        (("exec ", "set -e\nexec "), {}),  # not a plain exec wrapper: asked
        (("", ""), {"BASH_ENV": "/etc/profile"}),  # bash would read BASH_ENV first: asked
    ],
    ids=["script", "bash-env"],
)
def test_nvcc_wrapper_on_path_is_asked_what_it_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, change: tuple[str, str], env: dict[str, str]
) -> None:
    exe(tmp_path / "bin/nvcc", WRAPPER.replace(*change))
    env = {"PATH": str(tmp_path / "bin"), **env}
    cand = cuda._path_candidate(env)
    assert cand is not None and cand.wrapper
    calls = fake_query(monkeypatch, cuda, _nvcc_answers)
    toolkit = cuda.probe_toolkit(cand, env, runner=proc.HOST)
    assert toolkit.version == "13.0"
    assert calls[0][1] == "-dryrun"
    assert toolkit.nvcc == os.path.realpath("/usr/local/cuda-13.0/bin/nvcc")
    assert calls[1] == [toolkit.nvcc, "--version"]


def test_a_plain_exec_wrapper_is_read_not_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """This machine's wrapper, its nvcc laid out in tmp_path (behind a symlink, as
    /usr/local/cuda is): the nvcc it runs is read from it, no ``-dryrun`` is started."""
    real = Path(os.path.realpath(exe(tmp_path / "cuda-13.0/bin/nvcc", "\x7fELF")))
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-13.0")
    wrapper = WRAPPER.replace("/usr/local/cuda-13.0/bin/nvcc", str(tmp_path / "cuda/bin/nvcc"))
    exe(tmp_path / "bin/nvcc", wrapper)
    env = {"PATH": str(tmp_path / "bin")}
    cand = cuda._path_candidate(env)
    assert cand is not None and cand.wrapper
    calls = fake_query(monkeypatch, cuda, _nvcc_answers)
    toolkit = cuda.probe_toolkit(cand, env, runner=proc.HOST)
    assert calls == [[str(real), "--version"]]
    assert (toolkit.nvcc, toolkit.root, toolkit.version) == (
        str(real),
        str(real.parents[1]),
        "13.0",
    )
    (tmp_path / "cuda").unlink()  # the link pointed at another toolkit: followed at once
    other = Path(os.path.realpath(exe(tmp_path / "cuda-12.4/bin/nvcc", "\x7fELF")))
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-12.4")
    assert cuda.exec_target(tmp_path / "bin/nvcc", env) == other
    exe(other, '#!/bin/sh\nexec /opt/elsewhere/nvcc "$@"\n')  # a wrapper behind it: asked
    assert cuda.exec_target(tmp_path / "bin/nvcc", env) is None


def test_a_plain_wrapper_and_the_toolkit_it_runs_are_asked_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """This machine's layout in tmp_path: the wrapper on PATH runs cuda-13.0's nvcc, which
    /usr/local/cuda links to: one toolkit, found by PATH first, one ``--version``."""
    real = Path(os.path.realpath(exe(tmp_path / "usr/local/cuda-13.0/bin/nvcc", "\x7fELF")))
    (tmp_path / "usr/local/cuda").symlink_to(real.parents[1])
    exe(tmp_path / "bin/nvcc", WRAPPER.replace("/usr/local", str(tmp_path / "usr/local")))
    calls = fake_query(monkeypatch, cuda, _nvcc_answers)
    env = {"PATH": str(tmp_path / "bin")}
    toolkits, warnings = cuda.probe_toolkits(env, runner=proc.HOST, root=tmp_path)
    assert calls == [[str(real), "--version"]] and warnings == []
    assert [(t.nvcc, t.origin) for t in toolkits] == [(str(real), f"PATH ({tmp_path}/bin/nvcc)")]


def test_broken_nvcc_is_a_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    exe(tmp_path / "usr/local/cuda-12.4/bin/nvcc")
    fake_query(monkeypatch, cuda, failing("`nvcc --version` exited with status 1: bad"))
    toolkits, warnings = cuda.probe_toolkits({"PATH": ""}, runner=proc.HOST, root=tmp_path)
    assert toolkits == []
    assert "`nvcc --version` exited with status 1: bad" in warnings


# -- cuDNN / NCCL -------------------------------------------------------------------------


def test_library_versions_from_headers_and_dist_info(tmp_path: Path) -> None:
    include = tmp_path / "site/nvidia/cudnn/include"
    include.mkdir(parents=True)
    (include / "cudnn_version.h").write_text((DEV / "cudnn_version.h.defines").read_text())
    (tmp_path / "site/nvidia_cudnn_cu13-9.19.0.56.dist-info").mkdir()
    found = libs.probe_library(libs.CUDNN, {}, [], [tmp_path / "site"], "")
    assert found == ["9.19.0"]


def test_library_versions_from_ldconfig() -> None:
    ldconfig = (DEV / "ldconfig-p.txt").read_text()
    # On the device libcudnn.so.9 links to libcudnn.so.9.14.0; here the file does not exist.
    same = libs.ldconfig_versions(libs.CUDNN, ldconfig, realpath=lambda p: p)
    assert same == ["9"]
    full = libs.ldconfig_versions(libs.CUDNN, ldconfig, realpath=lambda p: p + ".14.0")
    assert full == ["9.14.0"]
    assert libs.merge_versions([*full, "9.19.0", *same]) == ["9.14.0", "9.19.0"]
    assert libs.ldconfig_versions(libs.NCCL, ldconfig, realpath=lambda p: p) == ["2"]


def test_nccl_from_the_device_header(tmp_path: Path) -> None:
    (tmp_path / "nccl.h").write_text((DEV / "nccl.h.defines").read_text())
    assert libs.header_versions(libs.NCCL, [tmp_path, tmp_path / "missing"]) == ["2.28.9"]


def test_merge_versions() -> None:
    assert libs.merge_versions(["9", "9.1.0", "9.1.0", "8.9.7", "2"]) == ["9.1.0", "8.9.7", "2"]


# -- system, Pythons, tools ---------------------------------------------------------------


def test_system_files(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "proc").mkdir()
    (tmp_path / "etc/os-release").write_text((DEV / "os-release").read_text())
    (tmp_path / "proc/meminfo").write_text((HOST / "meminfo.txt").read_text())
    assert system.os_release(tmp_path) == ("ubuntu", "24.04")
    assert system.ram_gib(tmp_path) == 23.5
    assert system.os_release(tmp_path / "nothing") is None
    assert system.disk_free_gib(tmp_path / "not" / "yet" / "made") > 0


def test_probe_system_without_files_warns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    facts = system.probe_system({}, tmp_path, runner=proc.HOST, root=tmp_path)
    assert facts.os_id == "" and facts.ram_gib == 0.0
    assert "no /etc/os-release: OS unknown" in facts.warnings
    assert facts.cores >= 1


def test_python_candidates(tmp_path: Path) -> None:
    pyenv = tmp_path / "pyenv"
    base = exe(pyenv / "versions/3.12.1/bin/python3")
    exe(pyenv / "versions/3.9.18/bin/python3")
    exe(pyenv / "shims/python3")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = x\n")
    (venv / "bin/python3").symlink_to(base)
    env = {"PATH": f"{pyenv / 'shims'}:{venv / 'bin'}", "PYENV_ROOT": str(pyenv)}
    found = pythons.python_candidates(env, system_dirs=[])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "venv/bin/python3",
        "pyenv/versions/3.9.18/bin/python3",
        "pyenv/versions/3.12.1/bin/python3",
    ]


def test_a_folder_on_path_and_among_the_system_ones_is_listed_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PATH here names /usr/bin and /usr/local/bin, which are the system folders too (and may
    name a folder twice): each is read once, the candidates as before."""
    bin_, sys_bin = tmp_path / "bin", tmp_path / "usr/bin"
    exe(bin_ / "python3.11")
    exe(sys_bin / "python3")
    listed: list[Path] = []
    real = pythons.entry_names
    monkeypatch.setattr(pythons, "entry_names", lambda d: listed.append(d) or real(d))
    env = {"PATH": f"{bin_}:{sys_bin}:{bin_}"}
    found = pythons.python_candidates(env, system_dirs=[sys_bin, tmp_path / "usr/local/bin"])
    assert found == [bin_ / "python3.11", sys_bin / "python3"]
    assert listed == [bin_, sys_bin, tmp_path / "usr/local/bin"]


def test_probe_pythons_reads_versions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    exe(tmp_path / "bin/python3")
    exe(tmp_path / "bin/python3.6")
    answers = {"python3": "python3-version.txt", "python3.6": "pyenv-shim-fail.txt"}
    fake_query(monkeypatch, pythons, lambda args: (HOST / answers[Path(args[0]).name]).read_text())
    found, warnings = pythons.probe_pythons(
        {"PATH": str(tmp_path / "bin")}, runner=proc.HOST, system_dirs=[]
    )
    assert [(Path(p.path).name, p.version, p.minor) for p in found] == [
        ("python3", "3.11.7", "3.11")
    ]
    assert len(warnings) == 1 and "python3.6: cannot read a version" in warnings[0]


def test_probe_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("cmake", "ninja", "git", "docker"):
        exe(tmp_path / name)
    answers = {n: HOST / f"{n}-version.txt" for n in ("cmake", "ninja", "git")}

    def answer(args: list[str]) -> str:
        name = Path(args[0]).name
        if name == "docker":
            raise _run.ProbeError("`docker --version` gave no answer within 10 s")
        return answers[name].read_text()

    fake_query(monkeypatch, tools, answer)
    found, warnings = tools.probe_tools({"PATH": str(tmp_path)}, runner=proc.HOST)
    assert {n: t.version for n, t in found.items()} == {
        "cmake": "3.25.1",
        "ninja": "1.11.1",
        "git": "2.39.5",
        "docker": None,
    }
    assert warnings == ["`docker --version` gave no answer within 10 s"]


def test_docker_without_a_daemon_is_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """New-user trial §2: `host` listed docker 28.2.2 with no hint that the daemon was down."""
    exe(tmp_path / "docker")
    no_daemon = (HOST / "docker-no-daemon.txt").read_text().strip()

    def answer(args: list[str]) -> str:
        if args[1:2] == ["version"]:
            raise _run.ProbeError(f"`docker version` exited with status 1: {no_daemon}")
        return (HOST / "docker-version.txt").read_text()

    fake_query(monkeypatch, tools, answer)
    found, warnings = tools.probe_tools({"PATH": str(tmp_path)}, proc.HOST, ("docker",))
    assert found["docker"].version == "28.2.2"
    [warning] = warnings
    assert warning.startswith("docker 28.2.2 is installed, but its daemon does not answer")
    assert "Cannot connect to the Docker daemon" in warning
