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
from torchsmith.container.context import write_context
from torchsmith.container.images import load_images
from torchsmith.container.planning import ImagePlan, plan_container
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
SNAPSHOTS = ROOT / "tests" / "fixtures" / "container" / "dockerfiles"
CALLER = (1000, 1000)
SEEDS = {
    "seed-000-gpu-virtualisation": ({}, "nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04"),
    # conda packages are not made in a container (refused below): the wheels are
    "seed-001-official-conda": (
        {"outputs": ("wheel",)},
        "nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04",
    ),
    "seed-002-cresset-train-images": ({}, "nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04"),
    "seed-003-setup-py-install": ({}, "nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04"),
}
KNOWN_ARGS = {"BASE_IMAGE", "RUNTIME_IMAGE", "MAX_JOBS", "DEBIAN_FRONTEND", "USER_NAME",
              "USER_UID", "USER_GID"}  # fmt: skip


FILES = {"seed-002-cresset-train-images": "cresset-train-images"}
"""Seed 002 with its [[images]] tables (the seed's own file feeds the CI matrix, which takes
no tables)."""


def image_plan(seed: str, **cli: Any) -> ImagePlan:
    rs = resolve_spec(file=ROOT / "examples" / f"{FILES.get(seed, seed)}.toml", cli=cli)
    host = HostFacts.model_validate_json(HOST.read_text())
    return plan_container(rs, kb.load(), load_images(), host, CALLER)


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
    assert "FROM ${BASE_IMAGE} AS build" in text and "FROM scratch AS export" in text


def test_no_secret_in_any_layer_or_build_arg(tmp_path: Path) -> None:
    for seed in SEEDS:
        text = dockerfile(seed, tmp_path)
        assert set(re.findall(r"^ARG (\w+)=", text, re.M)) <= KNOWN_ARGS
        assert not re.search(r"(?i)token|password|secret|://[^/\s]+@", text)


def test_a_mirror_with_credentials_is_refused_before_anything_is_written() -> None:
    with pytest.raises(PlanError) as info:
        image_plan("seed-002-cresset-train-images", git_mirror="https://u:tok@git.example/")
    assert "git_mirror carries credentials" in info.value.render()


def test_conda_from_a_container_is_refused_clearly() -> None:
    with pytest.raises(PlanError) as info:
        image_plan("seed-001-official-conda")
    text = info.value.render()
    assert "conda packages are not made in a container build yet" in text
    assert "--backend local --output conda" in text


def test_the_compiler_cache_is_a_cache_mount_and_the_export_holds_only_wheels(
    tmp_path: Path,
) -> None:
    text = dockerfile("seed-002-cresset-train-images", tmp_path)
    assert "RUN --mount=type=cache,target=/root/.cache/ccache" in text
    export = text.split("FROM scratch AS export\n", 1)[1].split("\n\n", 1)[0]
    assert export.splitlines() == ["COPY --from=verify /out/ /", "COPY torchsmith/manifest.json /"]


def test_the_plan_is_resolved_against_the_image_not_the_host() -> None:
    ip = image_plan("seed-000-gpu-virtualisation")
    assert ip.plan.compiler.value == "gcc-5"  # Ubuntu 16.04's gcc 5.4, within CUDA 9.0's <= 6
    assert not any("not installed here" in w for w in ip.plan.warnings)
    assert [s.name for s in ip.plan.steps][-1] == "publish"


def test_seed_002_has_two_named_non_root_training_images(tmp_path: Path) -> None:
    text = dockerfile("seed-002-cresset-train-images", tmp_path)
    for name in ("train", "deploy"):
        stage = text.split(f"AS train-{name}\n", 1)[1].split("\nFROM ", 1)[0]
        assert "USER ${USER_NAME}" in stage and "ARG USER_UID=1000" in stage
        assert "--mount=type=bind,from=export" in stage
    assert "ENV TZ=Asia/Seoul" in text and "tmux" in text and "tqdm" in text
