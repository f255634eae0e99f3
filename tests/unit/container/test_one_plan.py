"""One container plan (issue 22 item 1): `plan --backend docker --json` shows, step for step, what
`build --backend docker` runs — the plan the torchsmith inside the container makes from the
``TORCHSMITH_*`` variables it is given, against the image's facts — and what the generated
Dockerfile's build stage runs. No engine runs: the recorded CI host stands for this machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchsmith import kb
from torchsmith.cli import main
from torchsmith.container import inside, routes
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan, facts_in
from torchsmith.container.working import plan_of
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec_sources import ResolvedSpec, resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
CASES = {  # the case: 8 steps on trixie shown, 10 on bookworm run
    "git-cpu": ["--torch", "2.5.1", "--cpu"],
    "debian-trixie": ["--torch", "2.6.0", "--cpu", "--source", "debian"],
    "git-cuda": ["--torch", "2.3.1", "--cuda", "11.8", "--gpu", "8.6"],
}


def _flags(argv: list[str]) -> dict[str, Any]:
    argv = [a for a in argv if a != "--cpu"]
    pairs = zip(argv[::2], argv[1::2], strict=True)
    cli = {k.removeprefix("--").replace("-", "_"): v for k, v in pairs if k != "--cpu"}
    cli["accelerator"] = cli.pop("cuda", "cpu")
    cli["gpus"] = (cli.pop("gpu"),) if "gpu" in cli else ()
    return {k: v for k, v in cli.items() if v != ()}


def _shown(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["plan", *argv, "--backend", "docker", "--host-facts", str(HOST), "--json"])
    text = capsys.readouterr().out
    assert code == 0, text
    data: dict[str, Any] = json.loads(text)
    return data


def _inside(cp: ContainerPlan, env: dict[str, str], host: HostFacts) -> BuildPlan:
    """The plan the torchsmith inside makes: the spec from its environment, this image."""
    rs = resolve_spec(env=env)
    return resolve(rs, kb.load(), facts_in(cp.base, rs.spec.cuda, host))


def _steps(steps: list[Any]) -> list[tuple[str | None, str, str]]:
    """(subject, name, what) of each step, from the JSON or the plan."""
    rows = [s if isinstance(s, dict) else s.model_dump(mode="json") for s in steps]
    return [(r.get("subject"), r["name"], r["what"]) for r in rows]


def _same_build(a: BuildPlan, b: BuildPlan) -> None:
    """The same build, whatever the reasons say (the inside reads its values from its
    environment, so each reason names another origin, and the hash holds the reasons)."""
    assert _steps(a.steps) == _steps(b.steps)
    assert a.env_dict() == b.env_dict() and [f.id for f in a.fixes] == [f.id for f in b.fixes]
    assert (a.torch.value, a.python.value, a.compiler.value, a.source) == (
        b.torch.value, b.python.value, b.compiler.value, b.source,
    )  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_shows_the_steps_build_runs_inside(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = CASES[case]
    shown = _shown(argv, capsys)
    rs = resolve_spec(cli={**_flags(argv), "backend": "docker"})
    host = HostFacts.model_validate_json(HOST.read_text())
    cp = plan_of(rs, host)  # what build --backend docker plans, then runs inside
    inner = _inside(cp, inside.spec_env(rs), host)
    assert _steps(shown["steps"]) == _steps(cp.plan.steps)
    assert shown["plan_hash"] == cp.plan.plan_hash()
    _same_build(cp.plan, inner)
    assert shown["container"]["base_image"] == cp.base.image
    assert shown["container"]["runs"] == "working-container"


def test_the_dockerfile_runs_the_plan_that_plan_shows(capsys: pytest.CaptureFixture[str]) -> None:
    spec = ROOT / "examples" / "cresset-train-images.toml"
    shown = _shown(["--spec", str(spec)], capsys)
    assert shown["container"]["runs"] == "dockerfile"
    host = HostFacts.model_validate_json(HOST.read_text())
    rs: ResolvedSpec = resolve_spec(file=spec)
    cp = routes.for_dockerfile(rs, kb.load(), load_images(), host, (1000, 1000))
    inner = _inside(cp, dict(cp.inside_env), host)  # the Dockerfile's ENV lines
    assert _steps(shown["steps"]) == _steps(cp.plan.steps)
    assert shown["plan_hash"] == cp.plan.plan_hash()
    _same_build(cp.plan, inner)
    names = [s["name"] for s in shown["steps"]]
    assert names[0] == "fetch" and names.count("publish") == 3  # torch, torchvision, torchaudio
    assert {s.get("subject") for s in shown["steps"]} == {None, "torchvision", "torchaudio"}
