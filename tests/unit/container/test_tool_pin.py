"""Tool images a generated Dockerfile copies from (security review f1b4bec N18: uv was pulled by
tag): pulled by digest when the knowledge base records one; otherwise the plan of `torchsmith
image` warns, naming the tag and how to record the digest. scripts/refresh_tool_images.py
writes the digest and its source into the data file."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from tests.unit.container.test_dockerfile_seeds import image_plan
from torchsmith.container import layers
from torchsmith.container.base import choose_base
from torchsmith.container.images import ImageKb, ToolImage, load_images

ROOT = Path(__file__).resolve().parents[3]
DIGEST = "sha256:" + "ab" * 32
SOURCES = {"image": "https://docs.astral.sh/uv/guides/integration/docker/"}


def _uv(digest: str | None) -> ToolImage:
    url = "https://ghcr.io/v2/astral-sh/uv/manifests/0.13.9 (skopeo inspect --raw, 2026-11-27)"
    extra = {"digest": url} if digest else {}
    return ToolImage.model_validate(
        {"name": "uv", "image": "ghcr.io/astral-sh/uv:0.13.9", "digest": digest,
         "sources": {**SOURCES, **extra}}
    )  # fmt: skip


def _kb(tool: ToolImage) -> ImageKb:
    return dataclasses.replace(load_images(), tools=(tool,))


def test_a_recorded_digest_is_what_the_dockerfile_copies_from() -> None:
    kb = _kb(_uv(DIGEST))
    assert kb.tool("uv") == f"ghcr.io/astral-sh/uv:0.13.9@{DIGEST}"
    assert kb.tool_warning("uv") is None
    base = choose_base(load_images(), None, "3.12")
    assert f"COPY --from=ghcr.io/astral-sh/uv:0.13.9@{DIGEST} /uv" in "\n".join(
        layers.python_layer(base, kb.tool("uv"))
    )


def test_a_digest_must_be_a_sha256() -> None:
    with pytest.raises(ValueError, match="digest"):
        _uv("latest")


def test_a_tag_alone_is_a_plan_warning_of_the_dockerfile_route() -> None:
    assert load_images().tool("uv") == "ghcr.io/astral-sh/uv:0.13.9"  # no digest recorded yet
    warnings = image_plan("seed-003-setup-py-install").plan.warnings  # Ubuntu 16.04: uv's Python
    (said,) = [w for w in warnings if "tool image" in w]
    assert "ghcr.io/astral-sh/uv:0.13.9 is pulled by tag" in said
    assert "scripts/refresh_tool_images.py" in said


def test_the_refresh_script_writes_the_digest_and_its_source() -> None:
    spec = importlib.util.spec_from_file_location(
        "refresh_tool_images", ROOT / "scripts" / "refresh_tool_images.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = (
        '[[tool_image]]\nname = "uv"\nimage = "ghcr.io/astral-sh/uv:0.13.9"\nnotes = "n"\n'
        '[tool_image.sources]\nimage = "https://x"\n'
    )
    once = script._with_digest(text, "ghcr.io/astral-sh/uv:0.13.9", DIGEST)
    assert f'image = "ghcr.io/astral-sh/uv:0.13.9"\ndigest = "{DIGEST}"\n' in once
    assert (
        '[tool_image.sources]\ndigest = "https://ghcr.io/v2/astral-sh/uv/manifests/0.13.9 (' in once
    )
    assert script._with_digest(once, "ghcr.io/astral-sh/uv:0.13.9", DIGEST) == once
    assert [m["image"] for m in script.RECORD.finditer(text)] == ["ghcr.io/astral-sh/uv:0.13.9"]
