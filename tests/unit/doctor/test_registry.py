"""Registry and base-image failures (issue 30 item 4): docker, BuildKit, podman/buildah/skopeo
wordings are each diagnosed, and the fix names the recipe route or --base-image. Lines are copied
from the public threads named beside them."""

from __future__ import annotations

import pytest

from torchsmith.doctor import diagnose

CASES = {
    # https://github.com/NVIDIA/nvidia-docker/issues/1768 (podman/buildah, containers/image)
    "buildah-manifest-unknown": (
        "Error: error creating build container: initializing source docker://nvidia/cuda:10.2-"
        "cudnn7-devel-ubuntu18.04: reading manifest 10.2-cudnn7-devel-ubuntu18.04 in "
        "docker.io/nvidia/cuda: manifest unknown: manifest unknown",
        "base-image-tag-not-found",
    ),
    # https://github.com/NVlabs/instant-ngp/issues/1406 (docker daemon)
    "docker-manifest-unknown": (
        "Error response from daemon: manifest for nvidia/cuda:10.2-devel-ubuntu18.04 not found: "
        "manifest unknown: manifest unknown",
        "base-image-tag-not-found",
    ),
    # https://github.com/isl-org/MiDaS/issues/281 (BuildKit)
    "buildkit-not-found": (
        "ERROR: failed to solve: nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04: failed to resolve "
        "source metadata for docker.io/nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04: "
        "docker.io/nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04: not found",
        "base-image-tag-not-found",
    ),
    # https://github.com/harsh-bothra/Bheem/issues/35
    "pull-access-denied": (
        "Error response from daemon: pull access denied for xavier99909/hacktools_bheem, "
        "repository does not exist or may require 'docker login': denied: requested access to "
        "the resource is denied",
        "registry-pull-access-denied",
    ),
    # https://github.com/kata-containers/tests/issues/3832
    "rate-limit": (
        "19:28:33 toomanyrequests: You have reached your pull rate limit. You may increase the "
        "limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
        "registry-pull-rate-limit",
    ),
    # https://github.com/microsoft/vscode-remote-release/issues/9748 (podman: pinging registry)
    "podman-pinging": (
        "WARN[0000] Failed, retrying in 2s ... (1/3). Error: initializing source "
        "docker://localhost/hub.docker.corp.net/my_repo/base:latest: pinging container registry "
        'localhost: Get "https://localhost/v2/": dial tcp [::1]:443: connect: connection refused',
        "registry-unreachable",
    ),
    # https://github.com/docker/for-linux/issues/1078 (docker classic builder)
    "docker-timeout": (
        "Get https://registry-1.docker.io/v2/: net/http: request canceled while waiting for "
        "connection (Client.Timeout exceeded while awaiting headers)",
        "registry-unreachable",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_registry_failure_is_named_with_the_base_image_way_out(name: str) -> None:
    line, rule = CASES[name]
    diagnosis = diagnose([line])
    assert diagnosis.top is not None and diagnosis.top.rule_id == rule
    assert diagnosis.top.category == "registry" and diagnosis.top.stage == "image"
    assert "--base-image" in diagnosis.top.fix


def test_a_deleted_tag_names_the_recipe_route() -> None:
    diagnosis = diagnose([CASES["buildah-manifest-unknown"][0]])
    assert diagnosis.top is not None and "--base-recipe" in diagnosis.top.fix


def test_a_go_module_fetch_failing_is_not_a_registry_failure() -> None:
    line = 'go: Get "https://proxy.golang.org/github.com/x/y/@v/list": dial tcp: i/o timeout'
    assert all(f.rule_id != "registry-unreachable" for f in diagnose([line]).findings)
