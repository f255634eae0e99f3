"""Conda packages into a channel directory (placeholder until the conda step lands)."""

from __future__ import annotations

from pathlib import Path

from torchsmith.errors import UsageError
from torchsmith.publish.model import Published


def publish_packages(files: list[Path], channel: Path) -> list[Published]:
    raise UsageError(
        f"conda-channel:{channel}: publishing conda packages is not carried out yet",
        "publish wheels to a PyPI-compatible index (--to pypi-index:URL)",
    )
