"""L6: a tree's build requirements reach pip only as PEP 508 requirements, whichever file they
come from (pyproject's build-system.requires or requirements.txt)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.steps.environment import read_build_requirements

HOSTILE = [
    "--index-url=http://evil.example/simple",
    "--extra-index-url http://evil.example/simple",
    "--trusted-host=evil.example",
    "-i http://evil.example/simple",
    "-f http://evil.example/wheels",
    "--find-links=/tmp/x",
    "-e git+https://evil.example/x.git#egg=x",
    "-r other.txt",
    "numpy --index-url=http://evil.example/simple",
    "pyyaml --trusted-host evil.example",
]
GOOD = ["setuptools", "numpy>=1.21", "typing_extensions; python_version < '3.11'"]


def _pyproject(tree: Path, entries: list[str]) -> None:
    array = json.dumps(entries)  # a JSON array of ASCII strings is a TOML array
    tree.joinpath("pyproject.toml").write_text(f"[build-system]\nrequires = {array}\n")


def _requirements_txt(tree: Path, entries: list[str]) -> None:
    tree.joinpath("requirements.txt").write_text("\n".join(entries) + "\n# a comment\n\n")


@pytest.mark.parametrize("write", [_pyproject, _requirements_txt])
def test_pip_options_are_dropped_from_both_sources(tmp_path: Path, write: object) -> None:
    write(tmp_path, [*HOSTILE, *GOOD])  # type: ignore[operator]
    assert read_build_requirements(tmp_path) == GOOD
