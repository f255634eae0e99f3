"""Issue 30 items 1-3: base-image recipes as decisions of the one container plan (NVIDIA's CUDA
apt repository for the deleted 9.0 images, Debian trixie's nvidia-cuda-toolkit for 12.4), their
Dockerfile stages snapshot-tested (hadolint runs over the same snapshots in
tests/integration/test_container_dockerfile_lint.py), their refusals; any CUDA with
--base-image, its CUDA measured inside it; conda from `torchsmith image`. Update the snapshots
with ``TORCHSMITH_UPDATE_SNAPSHOTS=1 pytest tests/unit/container``, then review the diff."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.unit.container.test_dockerfile_seeds import (
    HOST,
    ROOT,
    SNAPSHOTS,
    VISION_030,
    image_plan,
)
from torchsmith import cli, kb
from torchsmith.container import routes
from torchsmith.container.base import choose_base
from torchsmith.container.context import write_context
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan
from torchsmith.container.recipe_stage import cudart_soname
from torchsmith.container.recipes import choose_recipe
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.spec_sources import resolve_spec

KB = load_images()
UV = KB.tool("uv")
CUDA_124 = {"torch": "2.6.0", "accelerator": "12.4", "python": "3.11", "gpus": ("8.6",)}
NVIDIA_1604 = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1604/x86_64/"
RECIPES = {
    # seed -> CLI values: 001 and 002's images are kept by NVIDIA (x.y.z tags): asked
    "seed-001-official-conda": {"base_recipe": "nvidia"},
    "seed-002-cresset-train-images": {"base_recipe": "nvidia"},
}


def plan_124(**cli: Any) -> ContainerPlan:
    values = {**CUDA_124, "backend": "docker", "outputs": ("docker-image",), **cli}
    rs = resolve_spec(cli=values)
    host = HostFacts.model_validate_json(HOST.read_text())
    return routes.for_dockerfile(rs, kb.load(), KB, host, (1000, 1000))


def _snapshot(name: str, text: str) -> None:
    snapshot = SNAPSHOTS / f"{name}.Dockerfile"
    if os.environ.get("TORCHSMITH_UPDATE_SNAPSHOTS"):
        snapshot.write_text(text, encoding="utf-8")
    assert text == snapshot.read_text(encoding="utf-8")


def _wheel(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "torch-2.6.0+cu124-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch/__init__.py", "")
    return folder


# --- decisions -----------------------------------------------------------------------------


def test_a_deleted_image_is_replaced_by_nvidias_repository_with_the_reason() -> None:
    recipe = choose_recipe(KB, "9.0", "auto")
    assert recipe is not None and recipe.kind == "nvidia" and recipe.os.id == "ubuntu16.04"
    assert recipe.sources[0].url == NVIDIA_1604
    assert recipe.reason.startswith("recipe: NVIDIA deleted its CUDA 9.0 images (2023-07)")
    assert "libcudnn7=7.0.5.15-1+cuda9.0" in recipe.packages
    assert "libnccl2=2.1.4-1+cuda9.0" in recipe.packages


def test_an_unrecorded_release_takes_debians_packages() -> None:
    recipe = choose_recipe(KB, "12.4", "auto")
    assert recipe is not None and recipe.describe() == "debian trixie nvidia-cuda-toolkit 12.4"
    assert recipe.reason.startswith("recipe: no nvidia/cuda image of CUDA 12.4 is recorded")
    assert "nvidia-cuda-toolkit" in recipe.packages and "libcudart12" in recipe.packages


def test_a_kept_image_is_used_unless_a_recipe_is_asked_for() -> None:
    assert choose_recipe(KB, "11.8", "auto") is None and choose_recipe(KB, "9.0", "image") is None
    asked = choose_recipe(KB, "11.8", "debian")
    assert asked is not None and asked.os.codename == "bookworm"
    assert "asked (--base-recipe debian)" in asked.reason


def test_the_mirror_replaces_the_recipes_repository() -> None:
    recipe = choose_recipe(KB, "12.4", "debian", "http://127.0.0.1:8080/debian")
    assert recipe is not None and recipe.sources[0].url == "http://127.0.0.1:8080/debian"
    assert recipe.mirrored


def test_base_image_still_overrides_the_recipe() -> None:
    base = choose_base(KB, "9.0", None, "registry.example/cuda:9.0", ("auto", None))
    assert base.recipe is None and base.image == "registry.example/cuda:9.0"
    assert base.measured == "9.0"


@pytest.mark.parametrize(
    ("cuda", "mode", "said"),
    [
        ("12.4", "nvidia", "--base-recipe nvidia: NVIDIA's CUDA apt repository is recorded"),
        ("9.0", "debian", "--base-recipe debian: no Debian suite packages CUDA 9.0"),
        ("12.8", "auto", "no nvidia/cuda image of CUDA 12.8 is recorded, and no recipe"),
    ],
)
def test_a_recipe_that_cannot_be_made_is_refused_naming_the_way_out(
    cuda: str, mode: Any, said: str
) -> None:
    with pytest.raises(PlanError) as info:
        choose_recipe(KB, cuda, mode)
    assert said in info.value.render() and "--base-image" in info.value.render()


def test_system_nccl_on_a_recipe_without_nccl_is_refused() -> None:
    with pytest.raises(PlanError) as info:
        plan_124(**{"linking.nccl": "dynamic", "features.system_nccl": True})
    text = info.value.render()
    assert "links the system's NCCL, and the debian trixie nvidia-cuda-toolkit 12.4" in text
    assert "--link nccl=static" in text


def test_asked_cudnn_on_debians_recipe_is_refused_and_left_to_default_is_a_warning() -> None:
    with pytest.raises(PlanError) as info:
        plan_124(**{"features.cudnn": True})
    assert "the plan asks for cuDNN, and the debian trixie" in info.value.render()
    assert any("has no cuDNN: torch is built without it" in w for w in plan_124().plan.warnings)


def test_the_working_container_route_refuses_a_recipe() -> None:
    rs = resolve_spec(cli={**CUDA_124, "backend": "docker", "base_recipe": "debian"})
    host = HostFacts.model_validate_json(HOST.read_text())
    with pytest.raises(PlanError) as info:
        routes.for_working_container(rs, kb.load(), KB, host)
    assert "is a stage of the Dockerfile `torchsmith image` writes" in info.value.render()


def test_recipe_keys_on_a_local_build_are_refused() -> None:
    rs = resolve_spec(cli={**CUDA_124, "base_recipe": "debian"})
    with pytest.raises(PlanError) as info:
        from torchsmith.planner import resolve

        resolve(rs, kb.load(), HostFacts.model_validate_json(HOST.read_text()))
    assert "base_recipe (--base-recipe) applies to container builds" in info.value.render()


def test_a_mirror_with_credentials_or_a_query_is_refused_at_load() -> None:
    for bad in ("http://u:p@mirror.example/debian", "http://m.example/debian?x=1", "ftp://m/x"):
        with pytest.raises(Exception, match="is not a repository URL"):
            resolve_spec(cli={"apt_mirror": bad})


@pytest.mark.parametrize(
    ("cuda", "soname"),
    [("9.0", "libcudart.so.9.0"), ("11.1", "libcudart.so.11.0"), ("12.4", "libcudart.so.12")],
)
def test_cudart_soname_per_release(cuda: str, soname: str) -> None:
    assert cudart_soname(cuda) == soname


# --- Dockerfiles (hadolint: tests/integration/test_container_dockerfile_lint.py) ------------


@pytest.mark.parametrize("seed", ["seed-000-gpu-virtualisation", "seed-003-setup-py-install"])
def test_seeds_of_deleted_images_get_the_recipe_stage(seed: str, tmp_path: Path) -> None:
    text = (SNAPSHOTS / f"{seed}.Dockerfile").read_text(encoding="utf-8")
    assert "ARG BASE_IMAGE=docker.io/library/ubuntu:16.04\n" in text
    assert "FROM ${BASE_IMAGE} AS cuda" in text and "FROM cuda AS build" in text
    assert f"deb [signed-by=/usr/share/keyrings/torchsmith-cuda-0.gpg] {NVIDIA_1604} /" in text
    assert "grep -qF 'release 9.0,'" in text and "RUNTIME_IMAGE" not in text


@pytest.mark.parametrize("seed", sorted(RECIPES))
def test_seed_recipe_dockerfile_matches_its_snapshot(seed: str, tmp_path: Path) -> None:
    cp = image_plan(seed, **RECIPES[seed])
    assert cp.base.recipe is not None and cp.base.recipe.kind == "nvidia"
    _snapshot(f"{seed}.nvidia-recipe", write_context(cp, UV, tmp_path).read_text())


def test_cuda_124_wheels_on_debians_recipe_snapshot(tmp_path: Path) -> None:
    cp = plan_124()
    text = write_context(cp, UV, tmp_path, _wheel(tmp_path / "in")).read_text()
    assert "FROM cuda AS train-torch" in text and "AS build" not in text
    _snapshot("cuda-12.4-wheels.debian-recipe", text)


def test_the_debian_mirror_replaces_the_images_sources(tmp_path: Path) -> None:
    cp = plan_124(apt_mirror="http://127.0.0.1:8080/debian")
    text = write_context(cp, UV, tmp_path, _wheel(tmp_path / "in")).read_text()
    assert "rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*" in text
    assert 'echo "deb [signed-by=$key]" http://127.0.0.1:8080/debian \'trixie main' in text


# --- any CUDA with --base-image, and `image --wheels` of CUDA 12.4 wheels ------------------


def test_any_cuda_with_base_image_is_measured_inside_it(tmp_path: Path) -> None:
    cp = plan_124(base_image="registry.example/cuda:12.4.1-runtime-ubuntu22.04")
    assert cp.plan.cuda.value == "12.4" and cp.base.measured == "12.4"
    text = write_context(cp, UV, tmp_path, _wheel(tmp_path / "in")).read_text()
    assert "grep -qF libcudart.so.12 || { echo 'torchsmith: the --base-image has no" in text
    build = write_context(cp, UV, tmp_path / "b").read_text()
    assert "grep -qF 'release 12.4,'" in build.split("AS build\n", 1)[1]


def _image(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(["image", *argv, "--dockerfile-only", "--host-facts", str(HOST), "--json"])
    return code, capsys.readouterr().out


def test_image_wheels_of_cuda_124_records_a_cuda_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheels = _wheel(tmp_path / "wheels")
    argv = ["--torch", "2.6.0", "--cuda", "12.4", "--python", "3.11", "--gpu", "8.6"]
    argv += ["--output", "docker-image", "--wheels", str(wheels), "-o", str(tmp_path / "c")]
    for extra in ([], ["--base-image", "registry.example/cuda:12.4.1-runtime-ubuntu22.04"]):
        code, out = _image([*argv, *extra], capsys)
        assert code == 0, out
        manifest = json.loads((tmp_path / "c" / "torchsmith" / "manifest.json").read_text())
        assert manifest["plan"]["cuda"]["value"] == "12.4"
    assert json.loads(out)["base_recipe"] is None  # the image given replaces the recipe


def test_seed_000_plan_names_nvidias_repository(capsys: pytest.CaptureFixture[str]) -> None:
    spec = ROOT / "examples" / "seed-000-gpu-virtualisation.toml"
    vision = "torchvision=tarball:https://github.com/pytorch/vision/archive/refs/tags/v0.3.0.tar.gz"
    code = cli.main(["plan", "--spec", str(spec), "--companion-source", vision, "--json",
                     "--host-facts", str(HOST)])  # fmt: skip
    recipe = json.loads(capsys.readouterr().out)["container"]["base_recipe"]
    assert code == 0 and recipe["kind"] == "nvidia" and NVIDIA_1604 in recipe["repositories"]


def test_conda_from_image_is_accepted_with_the_conda_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "examples" / "seed-001-official-conda.toml"
    code, out = _image(["--spec", str(spec), "-o", str(tmp_path)], capsys)
    assert code == 0, out
    assert "conda" in [s["name"] for s in json.loads(out)["plan"]["steps"]]


def test_a_recipe_asked_by_name_starts_from_the_base_image_given() -> None:
    """Your registry's copy of debian:trixie (or a local one: the integration test's)."""
    base = choose_base(KB, "12.4", None, "localhost/trixie:latest", ("debian", None))
    assert base.recipe is not None and base.image == "localhost/trixie:latest"
    assert base.reason.endswith("on --base-image localhost/trixie:latest (standing for "
                                "docker.io/library/debian:trixie)")  # fmt: skip


NVIDIA_2004 = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2004/x86_64/"
SEED_REPOS = {
    "seed-000-gpu-virtualisation": ({"companion_source.torchvision": VISION_030}, NVIDIA_1604),
    "seed-001-official-conda": (RECIPES["seed-001-official-conda"], NVIDIA_2004),
    "seed-002-cresset-train-images": (RECIPES["seed-002-cresset-train-images"], NVIDIA_2004),
    "seed-003-setup-py-install": ({}, NVIDIA_1604),
}


@pytest.mark.parametrize("seed", sorted(SEED_REPOS))
def test_each_seeds_plan_names_nvidias_repository_its_image_stops_at(seed: str) -> None:
    """On a network without NVIDIA's repository `image` stops at its first download from
    there (the key's curl in the cuda stage): the plan names that repository first."""
    cli, repository = SEED_REPOS[seed]
    recipe = image_plan(seed, **cli).base.recipe
    assert recipe is not None and recipe.sources[0].url == repository
    assert recipe.sources[0].key_url == f"{repository}3bf863cc.pub"
