"""The host probe leaves out what a command does not read (issue 26, torchsmith/host/scope.py):
every recorded request plans the same with the narrowed facts as with all of them; a narrowed
probe starts none of the left-out sections' processes and says in its warnings what it left out;
``plan`` and ``build`` of one spec probe the same sections (the plan shown is the one built).
Tool answers are the recorded ones of tests/fixtures/host (this machine's real output)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import tomllib

from torchsmith import cli, kb
from torchsmith.commands import spec_args
from torchsmith.container import routes
from torchsmith.container.images import load_images
from torchsmith.errors import TorchsmithError
from torchsmith.host.model import HostFacts
from torchsmith.host.probe import probe_host
from torchsmith.host.scope import EVERYTHING, FIELDS, LEFT_OUT, SECTIONS, Section, for_spec
from torchsmith.plan import resolve
from torchsmith.runner import Completed
from torchsmith.spec_sources import ResolvedSpec, resolve_spec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ROOT = FIXTURES.parents[1]
HOSTS = {
    "ci": FIXTURES / "plan" / "host-ci.json",
    "h100": FIXTURES / "device-h100" / "torchsmith-host.json",
}
ROWS = tomllib.loads((FIXTURES / "plan" / "public-requests.toml").read_text("utf-8"))["request"]
SEEDS = sorted((ROOT / "examples").glob("seed-*.toml"))


def _asks() -> list[dict[str, Any]]:
    """The public requests as asked, and each CUDA one for this machine's GPUs and in a
    container (the two routes that read the GPUs or none of the compilers)."""
    asks = [{k: tuple(v) if isinstance(v, list) else v for k, v in r["ask"].items()} for r in ROWS]
    cuda = [a for a in asks if a.get("accelerator", "cpu") != "cpu"]
    return [
        *asks,
        *({**a, "gpus": ("native",)} for a in cuda),
        *({**a, "backend": "docker"} for a in asks[::4]),
        {"torch": "2.6.0", "companions": ("torchvision",), "backend": "docker"},
        {"torch": "2.1.2", "accelerator": "11.8", "backend": "docker"},
        {"torch": "2.1.2", "accelerator": "11.8", "gpus": ("native",), "backend": "docker"},
        {"torch": "2.6.0", "accelerator": "12.4", "toolkit": "system"},
        {"torch": "2.6.0", "accelerator": "12.4", "toolkit": "apt"},
    ]


def narrowed(facts: HostFacts, sections: frozenset[Section]) -> HostFacts:
    """``facts`` as a probe of ``sections`` leaves them: the other sections' fields empty."""
    empty = HostFacts()
    blank = {f: getattr(empty, f) for s in SECTIONS if s not in sections for f in FIELDS[s]}
    return facts.model_copy(update=blank)


def outcome(rs: ResolvedSpec, host: HostFacts) -> Any:
    """What ``plan --json`` would say: the plan (and a container's base), or the refusal."""
    try:
        if rs.spec.backend == "docker":
            cp = routes.for_spec(rs, kb.load(), load_images(), host, (1000, 1000))
            return cp.plan.model_dump(mode="json"), cp.base.image, cp.base.reason
        return resolve(rs, kb.load(), host).model_dump(mode="json")
    except TorchsmithError as exc:
        return type(exc).__name__, exc.render()


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_every_recorded_request_plans_the_same_with_the_facts_it_reads(name: str) -> None:
    host = HostFacts.model_validate_json(HOSTS[name].read_text("utf-8"))
    specs = [resolve_spec(cli=ask) for ask in _asks()]
    specs += [resolve_spec(file=seed) for seed in SEEDS]
    narrowing = 0
    for rs in specs:
        sections = for_spec(rs.spec)
        narrowing += sections != EVERYTHING
        assert outcome(rs, narrowed(host, sections)) == outcome(rs, host), rs.spec
    assert narrowing == len(specs)  # every plan leaves out at least the tools and libraries


def test_a_cpu_plan_leaves_out_cuda_and_gpus_a_container_plan_the_compilers() -> None:
    cpu = for_spec(resolve_spec(cli={"torch": "2.6.0"}).spec)
    cuda = for_spec(resolve_spec(cli={"torch": "2.6.0", "accelerator": "12.4"}).spec)
    image = for_spec(resolve_spec(cli={"torch": "2.6.0", "backend": "docker"}).spec)
    assert cpu == {"compilers", "pythons"}
    assert cuda == {"compilers", "cuda", "gpus", "pythons"}
    assert image == set()
    assert not {"tools", "libraries"} & (cpu | cuda | image)


RECORDED = {  # (program, first argument) -> the file its real output was recorded in
    ("gcc", "-dumpfullversion"): "gcc-dumpfullversion.txt",
    ("g++", "-dumpfullversion"): "gxx-dumpfullversion.txt",
    ("cmake", "--version"): "cmake-version.txt",
    ("ninja", "--version"): "ninja-version.txt",
    ("git", "--version"): "git-version.txt",
    ("docker", "--version"): "docker-version.txt",
    ("nvcc", "--version"): "nvcc-version-13.0.txt",
    ("python3", "--version"): "python3-version.txt",
    ("ldconfig", "-p"): "ldconfig-p.txt",
}
FAILED = {("docker", "version"): "docker-no-daemon.txt"}  # recorded with no daemon: exit 1


class RecordedRunner:
    """Answers each query with its recorded output; records every program asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str | Path], **kw: Any) -> Completed:
        raise AssertionError("probes only capture")

    def capture(
        self, argv: Sequence[str | Path], *, env: Mapping[str, str], **kw: Any
    ) -> subprocess.CompletedProcess[str]:
        args = tuple(str(a) for a in argv)
        self.asked.append(args)
        key = (Path(args[0]).name, args[1] if len(args) > 1 else "")
        for table, code in ((RECORDED, 0), (FAILED, 1)):
            if key in table:
                text = (FIXTURES / "host" / table[key]).read_text("utf-8")
                return subprocess.CompletedProcess(args, code, text, "")
        return subprocess.CompletedProcess(args, 127, "", f"{args[0]}: not recorded\n")

    def programs(self, under: Path) -> set[str]:
        return {Path(a[0]).name for a in self.asked if a[0].startswith(str(under))}


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    """PATH and CUDA_HOME with the programs whose answers are recorded (an ELF head each: not
    taken for a wrapper script); the probe also looks in /usr/bin and the like, answered the
    same way or refused (a warning)."""
    bin_, cuda = tmp_path / "bin", tmp_path / "cuda" / "bin"
    for folder, names in ((bin_, ("gcc", "g++", "cmake", "ninja", "git", "docker")), (cuda, ())):
        folder.mkdir(parents=True)
        for name in (*names, "python3") if folder == bin_ else ("nvcc",):
            (folder / name).write_bytes(b"\x7fELF")
            (folder / name).chmod(0o755)
    return {"PATH": str(bin_), "CUDA_HOME": str(cuda.parent), "HOME": str(tmp_path)}


def test_a_cpu_plan_asks_no_toolkit_tool_daemon_or_library(
    machine: dict[str, str], tmp_path: Path
) -> None:
    runner = RecordedRunner()
    facts = probe_host(machine, tmp_path, runner, sections=frozenset({"compilers", "pythons"}))
    assert runner.programs(tmp_path) == {"gcc", "g++", "python3"}
    assert not {Path(a[0]).name for a in runner.asked} & {"nvcc", "docker", "ldconfig", "cmake"}
    assert [c.version for c in facts.compilers if c.cc.startswith(str(tmp_path))] == ["12.2.0"]
    assert facts.tools == {} and facts.cuda_toolkits == [] and facts.cudnn_versions == []
    assert LEFT_OUT + "cuda, gpus, tools, libraries" in facts.warnings  # said, not dropped


def test_everything_is_asked_when_everything_is_wanted(
    machine: dict[str, str], tmp_path: Path
) -> None:
    runner = RecordedRunner()
    facts = probe_host(machine, tmp_path, runner)
    assert runner.programs(tmp_path) == {
        "gcc", "g++", "python3", "cmake", "ninja", "git", "docker", "nvcc",
    }  # fmt: skip
    assert ("ldconfig", "-p") in runner.asked
    assert any(a[1:2] == ("version",) for a in runner.asked if a[0].endswith("docker"))
    assert facts.tools["cmake"].version == "3.25.1"
    assert [t.version for t in facts.cuda_toolkits if t.origin == "CUDA_HOME"] == ["13.0"]
    assert not [w for w in facts.warnings if w.startswith(LEFT_OUT)]


class ProbedError(Exception):
    """Raised by the stand-in probe once it has seen what was asked."""


@pytest.mark.parametrize(
    "flags",
    [
        ["--torch", "2.6.0", "--cpu"],
        ["--torch", "2.6.0", "--cuda", "12.4", "--gpu", "8.6"],
        ["--torch", "2.6.0", "--cuda", "12.4", "--backend", "docker"],
    ],
    ids=["cpu", "cuda", "container"],
)
def test_plan_and_build_of_one_spec_probe_the_same_sections(
    flags: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[frozenset[Section]] = []

    def probe(*args: Any, sections: frozenset[Section], **kw: Any) -> HostFacts:
        seen.append(sections)
        raise ProbedError

    monkeypatch.setattr(spec_args.host_load, "load_host", probe)
    monkeypatch.setenv("TORCHSMITH_DEBUG", "1")  # the stand-in's exception comes out as is
    monkeypatch.setenv("TORCHSMITH_CACHE_ROOT", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    for command in ("plan", "build"):
        with pytest.raises(ProbedError):
            cli.main([command, *flags, "--output-dir", str(tmp_path / "dist")])
    expected = for_spec(resolve_spec(cli=spec_args.cli_values(_args(flags))[0]).spec)
    assert seen == [expected, expected]


def _args(flags: list[str]) -> Any:
    from torchsmith.cli import build_parser

    return build_parser("plan").parse_args(["plan", *flags])
