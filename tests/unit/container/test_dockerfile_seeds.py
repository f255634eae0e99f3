"""The generated Dockerfiles of seeds 000-003, snapshot-tested (hadolint runs over the same
snapshots in tests/integration/test_container_dockerfile_lint.py). Update after a deliberate
change with ``TORCHSMITH_UPDATE_SNAPSHOTS=1 pytest tests/unit/container``, then review the diff."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from torchsmith import kb
from torchsmith.container import routes
from torchsmith.container.context import write_context
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
SNAPSHOTS = ROOT / "tests" / "fixtures" / "container" / "dockerfiles"
CALLER = (1000, 1000)
VISION_030 = "tarball:https://github.com/pytorch/vision/archive/refs/tags/v0.3.0.tar.gz"
SEEDS = {
    # the pipeline builds a companion from Debian's source package or a source of its own;
    # NVIDIA deleted the 9.0 images: the recipe stage starts from Ubuntu 16.04 (test_recipes.py)
    "seed-000-gpu-virtualisation": (
        {"companion_source.torchvision": VISION_030},
        "library/ubuntu:16.04",
    ),
    "seed-001-official-conda": ({}, "nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04"),
    "seed-002-cresset-train-images": ({}, "nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04"),
    "seed-003-setup-py-install": ({}, "library/ubuntu:16.04"),
}
KNOWN_ARGS = {"BASE_IMAGE", "RUNTIME_IMAGE", "DEBIAN_FRONTEND", "USER_NAME", "USER_UID",
              "USER_GID"}  # fmt: skip


FILES = {"seed-002-cresset-train-images": "cresset-train-images"}
"""Seed 002 with its [[images]] tables (the seed's own file feeds the CI matrix, which takes
no tables)."""


def image_plan(seed: str, **cli: Any) -> ContainerPlan:
    rs = resolve_spec(file=ROOT / "examples" / f"{FILES.get(seed, seed)}.toml", cli=cli)
    host = HostFacts.model_validate_json(HOST.read_text())
    return routes.for_dockerfile(rs, kb.load(), load_images(), host, CALLER)


def dockerfile(seed: str, tmp: Path) -> str:
    cli, _ = SEEDS[seed]
    path = write_context(image_plan(seed, **cli), load_images().tool("uv"), tmp / seed)
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seed_dockerfile_matches_its_snapshot(seed: str, tmp_path: Path) -> None:
    text = dockerfile(seed, tmp_path)
    snapshot = SNAPSHOTS / f"{seed}.Dockerfile"
    if os.environ.get("TORCHSMITH_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(text, encoding="utf-8")
    assert text == snapshot.read_text(encoding="utf-8")


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_seed_dockerfile_builds_from_the_right_nvidia_cuda_tag(seed: str, tmp_path: Path) -> None:
    text = dockerfile(seed, tmp_path)
    assert f"ARG BASE_IMAGE=docker.io/{SEEDS[seed][1]}\n" in text
    build = "FROM cuda AS build" if "ubuntu:16.04" in SEEDS[seed][1] else "FROM ${BASE_IMAGE} AS"
    assert build in text and "FROM scratch AS export" in text


def test_no_secret_in_any_layer_or_build_arg(tmp_path: Path) -> None:
    for seed in SEEDS:
        text = dockerfile(seed, tmp_path)
        assert set(re.findall(r"^ARG (\w+)=", text, re.M)) <= KNOWN_ARGS
        assert not re.search(r"(?i)token|password|secret|://[^/\s]+@", text)


def test_a_mirror_with_credentials_is_refused_before_anything_is_written() -> None:
    with pytest.raises(PlanError) as info:
        image_plan("seed-002-cresset-train-images", git_mirror="https://u:tok@git.example/")
    assert "git_mirror carries credentials" in info.value.render()


def test_the_build_stage_runs_torchsmith_build_inside_with_the_spec(tmp_path: Path) -> None:
    text = dockerfile("seed-002-cresset-train-images", tmp_path)
    build = text.split("AS build\n", 1)[1].split("\nFROM ", 1)[0]
    assert "COPY torchsmith/lib/ /opt/torchsmith/lib/" in build
    assert "-m torchsmith build --install-deps --cache-root /var/cache/torchsmith" in build
    assert "RUN --mount=type=cache,target=/var/cache/torchsmith" in build
    assert "TORCHSMITH_COMPANIONS=torchvision==0.10.1,torchaudio==0.9.1" in build
    assert "TORCHSMITH_GPUS='RTX 3090'" in build and "TORCHSMITH_BACKEND=local" in build
    assert "git clone" not in text and "apply_fixes" not in text and "setup.py" not in text
    context = tmp_path / "seed-002-cresset-train-images" / "torchsmith"
    assert (context / "lib" / "torchsmith" / "cli.py").is_file()
    assert (context / "lib" / "torchsmith" / "kb" / "data").is_dir()  # the commits it pins
    assert "pydantic" in (context / "requirements.txt").read_text()
    assert not (context / "fixes.json").exists()


def test_the_mirror_and_the_commit_pin_reach_the_build_inside(tmp_path: Path) -> None:
    mirror = "https://mirror.example/"
    cp = image_plan("seed-000-gpu-virtualisation", git_mirror=mirror, companions=())
    assert ("TORCHSMITH_GIT_MIRROR", mirror) in cp.inside_env
    assert cp.plan.source.git_mirror == mirror  # the plan the torchsmith inside makes and pins
    text = write_context(cp, load_images().tool("uv"), tmp_path).read_text()
    assert f"TORCHSMITH_GIT_MIRROR={mirror}" in text


def test_conda_from_a_container_is_made_by_the_pipeline_inside(tmp_path: Path) -> None:
    cp = image_plan("seed-001-official-conda")
    assert cp.plan.outputs == ["conda"] and ("TORCHSMITH_OUTPUTS", "conda") in cp.inside_env
    assert "COPY --from=build /out/ /" in dockerfile("seed-001-official-conda", tmp_path)


def test_an_image_whose_python_cannot_run_torchsmith_gets_one_from_uv(tmp_path: Path) -> None:
    text = dockerfile("seed-000-gpu-virtualisation", tmp_path)  # Ubuntu 16.04: Python 3.5
    assert "uv venv --seed --python 3.12 /opt/torchsmith/venv" in text
    assert "ENV PATH" not in text.split("AS build\n", 1)[1].split("\nFROM ", 1)[0]


def test_the_plan_is_resolved_against_the_image_not_the_host() -> None:
    ip = image_plan("seed-000-gpu-virtualisation", **SEEDS["seed-000-gpu-virtualisation"][0])
    assert ip.plan.compiler.value == "gcc-5"  # Ubuntu 16.04's gcc 5.4, within CUDA 9.0's <= 6
    assert not any("not installed here" in w for w in ip.plan.warnings)
    assert [s.name for s in ip.plan.steps][-2:] == ["publish", "attest"]


def test_seed_002_has_two_named_non_root_training_images(tmp_path: Path) -> None:
    text = dockerfile("seed-002-cresset-train-images", tmp_path)
    for name in ("train", "deploy"):
        stage = text.split(f"AS train-{name}\n", 1)[1].split("\nFROM ", 1)[0]
        assert "USER ${USER_NAME}" in stage and "ARG USER_UID=1000" in stage
        assert "--mount=type=bind,from=export" in stage
    assert "ENV TZ=Asia/Seoul" in text and "tmux" in text and "tqdm" in text
