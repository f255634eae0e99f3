"""Issue 30, real tools, small: the shell the base-image recipe stage runs
(container/recipe_stage.py) does what it says — with the real gpg, curl, bash and apt, on a flat
apt repository served from 127.0.0.1 and signed by a key made here (the shape of NVIDIA's CUDA
repositories: ``deb [signed-by=KEYRING] URL /``):

* the key is fetched, its fingerprint checked (a key of another fingerprint stops the stage,
  naming both), dearmored into the entry's only keyring, and real ``apt-get update`` accepts the
  repository's signed InRelease through it and ``apt-get download`` fetches its package;
* the CUDA checks of a ``--base-image``: ``nvcc --version`` (the recorded real output of 11.8's,
  tests/fixtures/toolchains/seed004) and the cudart soname among ``ldconfig -p``'s libraries
  (a stub ``ldconfig`` first on PATH lists them).

The whole-image route (buildah, the CUDA 12.4 toolkit from trixie, a kernel compiled inside) is
not here: docs/containers.md says what was measured. Cost: ~3 s (gpg key generation, apt)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from tests.resources import require_tool
from torchsmith.container.recipe_stage import keyed_source, nvcc_check, soname_check
from torchsmith.container.recipes import AptSource

ROOT = Path(__file__).resolve().parents[2]
NVCC_118 = ROOT / "tests" / "fixtures" / "toolchains" / "seed004" / "nvcc-version.txt"


def _run(argv: list[str | Path], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv],
        capture_output=True, text=True, env=env, cwd=cwd, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def signed_repo(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(repository URL, key fingerprint, environment with GNUPGHOME) of a flat repository
    holding one package, signed with a fresh ed25519 key, served on 127.0.0.1."""
    for tool in ("gpg", "curl", "apt-get", "dpkg-deb", "dpkg-scanpackages"):
        require_tool(tool)
    tmp = tmp_path_factory.mktemp("repo")
    env = {**os.environ, "GNUPGHOME": str(tmp / "gnupg")}
    (tmp / "gnupg").mkdir(mode=0o700)
    _run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "repo@test", "ed25519"], env)
    colons = _run(["gpg", "--batch", "--with-colons", "--fingerprint", "repo@test"], env)
    fpr = next(line.split(":")[9] for line in colons.splitlines() if line.startswith("fpr:"))
    repo = tmp / "www"
    _package(tmp / "pkg", repo)
    _index(repo, env)
    _run(["gpg", "--batch", "--armor", "-o", repo / "key.asc", "--export", "repo@test"], env)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(repo))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", fpr, env
    finally:
        server.shutdown()
        server.server_close()


def _package(work: Path, repo: Path) -> None:
    (work / "DEBIAN").mkdir(parents=True)
    (work / "DEBIAN" / "control").write_text(
        "Package: torchsmith-probe\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: test <t@example.org>\nDescription: probe\n",
        encoding="utf-8",
    )
    repo.mkdir()
    subprocess.run(["dpkg-deb", "--build", work, repo / "probe_1.0_all.deb"], check=True)


def _index(repo: Path, env: dict[str, str]) -> None:
    packages = subprocess.run(
        ["dpkg-scanpackages", "--multiversion", "."], cwd=repo, check=True, capture_output=True
    ).stdout
    (repo / "Packages").write_bytes(packages)
    (repo / "Packages.gz").write_bytes(gzip.compress(packages))
    lines = ["Origin: test", "Label: test", "Date: Fri, 27 Nov 2026 00:00:00 UTC", "SHA256:"]
    for name in ("Packages", "Packages.gz"):
        data = (repo / name).read_bytes()
        lines.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} {name}")
    (repo / "Release").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _run(["gpg", "--batch", "--clearsign", "-o", repo / "InRelease", repo / "Release"], env)


def _apt(state: Path) -> list[str]:
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    return [
        f"-oDir::Etc::SourceList={state / 'cuda.list'}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={state / 'lists'}",
        f"-oDir::Cache={state / 'cache'}",
        "-oDir::State::status=/dev/null",
        "-oDebug::NoLocking=1",
    ]


def _stage(source: AptSource, state: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (state / "keyrings").mkdir(parents=True, exist_ok=True)
    commands = keyed_source(
        source, 0, str(state / "keyrings"), str(state / "cuda.list"), str(state)
    )
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", " && ".join(commands)],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip


def test_the_key_is_checked_and_apt_takes_the_repository_through_it(
    signed_repo: tuple[str, str, dict[str, str]], tmp_path: Path
) -> None:
    url, fpr, env = signed_repo
    done = _stage(AptSource(url, "/", f"{url}key.asc", fpr), tmp_path, env)
    assert done.returncode == 0, done.stderr
    entry = (tmp_path / "cuda.list").read_text()
    assert entry == f"deb [signed-by={tmp_path}/keyrings/torchsmith-cuda-0.gpg] {url} /\n"
    _run(["apt-get", *_apt(tmp_path), "-q", "update"], env)  # fails on a bad signature
    _run(["apt-get", *_apt(tmp_path), "-q", "download", "torchsmith-probe"], env, tmp_path)
    assert (tmp_path / "torchsmith-probe_1.0_all.deb").is_file()


def test_a_key_of_another_fingerprint_stops_the_stage(
    signed_repo: tuple[str, str, dict[str, str]], tmp_path: Path
) -> None:
    url, _fpr, env = signed_repo
    other = "EB693B3035CD5710E231E123A4B469963BF863CC"
    done = _stage(AptSource(url, "/", f"{url}key.asc", other), tmp_path, env)
    assert done.returncode == 1
    assert f"torchsmith: the key at {url}key.asc is not {other}" in done.stderr
    assert not (tmp_path / "cuda.list").exists()


def _stub(bin_dir: Path, name: str, output: str) -> None:
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\n", encoding="utf-8")
    tool.chmod(0o755)


def _check(
    commands: list[str], nvcc_output: str, tmp: Path, libraries: str = ""
) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    _stub(bin_dir, "nvcc", nvcc_output)
    _stub(bin_dir, "ldconfig", libraries)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", " && ".join(commands)],
        capture_output=True, text=True, env=env, check=False, timeout=60,
    )  # fmt: skip


def test_the_base_images_nvcc_is_measured(tmp_path: Path) -> None:
    recorded = NVCC_118.read_text(encoding="utf-8")  # real nvcc --version output (11.8)
    assert _check(nvcc_check("11.8", "the --base-image"), recorded, tmp_path).returncode == 0
    done = _check(nvcc_check("12.4", "the --base-image"), recorded, tmp_path)
    assert done.returncode == 1
    assert "torchsmith: the --base-image is not CUDA 12.4 (nvcc --version below)" in done.stderr
    assert "release 11.8" in done.stderr


def test_the_base_images_cuda_runtime_is_measured(tmp_path: Path) -> None:
    listed = "\tlibcudart.so.12 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudart.so.12\n"
    check = soname_check("12.4", "the --base-image")
    assert _check(check, "", tmp_path, listed).returncode == 0
    older = listed.replace("so.12", "so.11.0")
    done = _check(check, "", tmp_path, older)
    assert done.returncode == 1
    assert "torchsmith: the --base-image has no libcudart.so.12 (CUDA 12.4)" in done.stderr
