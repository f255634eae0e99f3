"""Issue 24: the combination's answer and the machine's, kept apart. A tool the machine lacks is
a readiness row (plan exits 0, `ready: false`); `build` refuses only what nothing here can
supply; `--toolkit container` is not a choice; refusals name the way out in numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.unit.planner.kb import ci_host
from torchsmith import cli
from torchsmith.errors import NotReadyError, PlanError
from torchsmith.host.model import CudaToolkit, HostFacts
from torchsmith.kb import load
from torchsmith.plan import BuildPlan, resolve
from torchsmith.planner.readiness import COMPILER, TOOLKIT, refuse_not_ready
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.spec_sources import resolve_spec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RECORDED_HOSTS = [  # `torchsmith host --json` of real machines (see their READMEs)
    FIXTURES / "plan" / "host-ci.json",
    FIXTURES / "device-h100" / "torchsmith-host.json",
]


def _cuda(version: str) -> CudaToolkit:
    root = f"/usr/local/cuda-{version}"
    return CudaToolkit(root=root, nvcc=f"{root}/bin/nvcc", version=version, origin="PATH")


def plan(host: HostFacts | None = None, **cli_: Any) -> BuildPlan:
    return resolve(resolve_spec(cli=cli_), load(), host or ci_host(), can=KNOWLEDGE_ONLY)


def row(p: BuildPlan, tool: str) -> Any:
    return next(r for r in p.readiness if r.tool == tool)


class Case(NamedTuple):
    what: str
    host: HostFacts
    extra: dict[str, Any]  # over torch 2.7.0 + CUDA 12.8 + sm_120
    ready: bool
    provider: str  # the toolkit decision
    row: tuple[bool, bool]  # the toolkit row: ready, provisionable
    says: str  # in the row's "provided by"


CU124 = {"accelerator": "12.4", "torch": "2.5.1", "gpus": ("8.6",)}
TOOLKIT_CASES = [
    Case("CPU machine, no CUDA", ci_host(), {}, False, "system", (False, False), "conda install"),
    Case("CUDA 12.8 installed", ci_host(cuda_toolkits=[_cuda("12.8")]), {}, True, "system",
         (True, True), "this machine"),
    Case("only CUDA 13.0 installed", ci_host(cuda_toolkits=[_cuda("13.0")]), {}, False, "system",
         (False, False), "nvidia/cuda:12.8"),
    Case("12.4 from Debian trixie", ci_host(), CU124, True, "apt", (True, True),
         "torchsmith downloads it"),
    Case("12.4 on a non-Debian host", ci_host(os_id="fedora"), CU124, False, "system",
         (False, False), "cuda-toolkit-12-4"),
]  # fmt: skip


@pytest.mark.parametrize("case", TOOLKIT_CASES, ids=[c.what for c in TOOLKIT_CASES])
def test_the_toolkit_is_the_machines_answer_never_a_conflict(case: Case) -> None:
    request = {"torch": "2.7.0", "accelerator": "12.8", "gpus": ("12.0",), **case.extra}
    p = plan(case.host, **request)  # valid combination: planned whatever the machine
    toolkit = row(p, TOOLKIT)
    assert p.ready is case.ready and p.toolkit.value == case.provider
    assert (toolkit.ready, toolkit.provisionable) == case.row
    assert case.says in toolkit.provider


def test_a_missing_gcc_is_a_row_build_checks_itself() -> None:
    p = plan(torch="1.13.1", accelerator="11.8", gpus=("8.6",))  # the CI host has only gcc 12
    gcc = row(p, COMPILER)
    assert not p.ready and not gcc.ready and gcc.provisionable
    assert gcc.found == "gcc-12" and "--install-deps" in gcc.provider
    refuse_not_ready(p)  # build goes on: its own check (or --install-deps) handles it


def test_build_refuses_a_toolkit_nothing_here_supplies_with_the_table() -> None:
    p = plan(torch="2.7.0", accelerator="12.8", gpus=("12.0",))
    with pytest.raises(NotReadyError) as info:
        refuse_not_ready(p)
    assert isinstance(info.value, PlanError) and info.value.exit_code == 4
    text = info.value.render()
    assert "1 tool(s) missing on this machine" in text and "CUDA 12.8" in text
    assert "conflict" not in text and "the combination is valid" in text


def test_readiness_is_not_hashed() -> None:
    p = plan(torch="2.7.0", accelerator="12.8", gpus=("12.0",))
    empty = BuildPlan.model_validate({**p.model_dump(mode="json"), "readiness": []})
    assert p.readiness and empty.ready and p.plan_hash() == empty.plan_hash()


def test_a_container_builds_toolkit_is_the_images() -> None:
    p = plan(torch="1.13.1", accelerator="11.7", gpus=("8.6",), backend="docker")
    toolkit = row(p, TOOLKIT)
    assert p.toolkit.value == "container" and toolkit.ready
    assert "nvidia/cuda:11.7" in toolkit.provider


@pytest.mark.parametrize("host_file", RECORDED_HOSTS, ids=lambda p: p.parent.name)
def test_plan_exits_0_for_a_valid_combination_on_a_recorded_host(
    host_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["plan", "--torch", "2.7.0", "--cuda", "12.8", "--gpu", "12.0", "--json",
            "--host-facts", str(host_file)]  # fmt: skip
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ready"] is False and data["arch_list"] == "12.0"
    toolkit = next(r for r in data["readiness"] if r["tool"] == TOOLKIT)
    assert toolkit["found"] == "13.0 (/usr/local/cuda-13.0)" and not toolkit["provisionable"]


def test_the_text_plan_ends_with_the_readiness_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--torch", "2.7.0", "--cuda", "12.8", "--gpu", "12.0",
            "--host-facts", str(RECORDED_HOSTS[0])]  # fmt: skip
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "this machine (readiness)" in out and "cuda-toolkit-12-8" in out
    assert "ready: no — the combination is valid" in out


def test_toolkit_container_is_not_a_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["plan", "--cpu", "--toolkit", "container"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "its image's toolkit" in err and "torchsmith image" in err


# (request, what the refusal must name: numbers and a source)
REFUSALS: list[tuple[dict[str, Any], list[str]]] = [
    ({"torch": "2.5.1", "accelerator": "12.4", "gpus": ("3.5",)},
     ["sm_35 needs CUDA ≤ 11.8", "CUDA 12.0 dropped it", "CUDA 11.8 is the last that compiles it",
      "use --cuda 11.8", r"torch \d+\.\d+\.\d+ is the last release whose official binaries"]),
    ({"torch": "2.7.0", "accelerator": "12.6", "gpus": ("12.0",)},
     ["sm_120 needs CUDA ≥ 12.8", "CUDA 12.8 is the first that compiles it",
      "torch 2.7.0 is the first release whose official binaries carry sm_120"]),
    ({"torch": "2.0.0", "accelerator": "11.8", "gpus": ("3.0",)},
     [r"sm_30 needs torch ≤ \d+\.\d+\.\d+ and CUDA ≤ 10.2", "CUDA 11.0 dropped sm_30",
      r"use --cuda 10.2 --torch \d+\.\d+\.\d+"]),
    ({"torch": "1.13.1", "accelerator": "11.7", "gpus": ("9.0",)},
     ["needs torch ≥ 2.0.0 and CUDA ≥ 11.8", "use --torch 2.0.0 --cuda 11.8"]),
    ({"torch": "2.6.0", "accelerator": "11.8", "compiler": "gcc-13"},
     ["CUDA 11.8 accepts gcc ≤ 11", "the first CUDA that accepts gcc-13"]),
    ({"torch": "2.6.0", "accelerator": "cpu", "compiler": "gcc-7"},
     [r"needs GCC ≥ 9\.3", r"torch \d+\.\d+\.\d+ \(the last release that builds with gcc-7\)"]),
]  # fmt: skip


@pytest.mark.parametrize(("request_", "names"), REFUSALS, ids=lambda v: str(v)[:40])
def test_refusals_name_the_way_out_in_numbers(request_: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(PlanError) as info:
        plan(**request_)
    text = info.value.render()
    for wanted in names:
        assert re.search(wanted, text), (wanted, text)
    if "compiles it" in text or "dropped" in text:  # the CUDA facts come with their KB source
        assert "https://" in text or "@" in text


def test_build_stops_before_any_work_where_the_toolkit_cannot_be_had(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from torchsmith.commands import build

    def never(*_: object, **__: object) -> None:
        raise AssertionError("the build started")

    monkeypatch.setattr(build, "make_executor", never)
    argv = ["build", "--torch", "2.7.0", "--cuda", "12.8", "--gpu", "12.0",
            "--host-facts", str(RECORDED_HOSTS[0]), "--output-dir", str(tmp_path)]  # fmt: skip
    assert cli.main(argv) == NotReadyError.exit_code == 4
    err = capsys.readouterr().err
    assert "this machine cannot build it yet" in err and "cuda-toolkit-12-8" in err
    assert not any(tmp_path.iterdir())
