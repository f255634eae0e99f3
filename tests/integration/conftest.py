"""Shared, expensive integration fixtures, made once per test session and cached on disk
between runs under ``$TORCHSMITH_TEST_CACHE`` (default ``<repo>/.cache/test``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEBIAN_SRC_LIST = (
    "deb-src http://deb.debian.org/debian bookworm main\n"
    "deb-src http://deb.debian.org/debian trixie main\n"
)


def test_cache() -> Path:
    root = Path(os.environ.get("TORCHSMITH_TEST_CACHE", REPO / ".cache" / "test"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _apt_source(workdir: Path, package: str) -> None:
    lists = workdir / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    srclist = workdir / "sources.list"
    srclist.write_text(DEBIAN_SRC_LIST)
    opts = [
        f"-oDir::Etc::SourceList={srclist}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={lists}",
    ]
    subprocess.run(["apt-get", *opts, "-qq", "update"], check=True)
    # --download-only: 1.13.1's debian.tar.xz is 404 on the mirror; the .orig tarball is there.
    subprocess.run(
        ["apt-get", *opts, "source", "--download-only", package],
        cwd=workdir,
        check=False,
    )


@pytest.fixture(scope="session")
def debian_pytorch_1131_orig() -> Path:
    """The real ``pytorch_1.13.1+dfsg.orig.tar.xz`` from Debian's archive (18 MB, once)."""
    if shutil.which("apt-get") is None:
        pytest.skip("apt-get not available")
    cache = test_cache() / "debian-pytorch-1.13.1"
    tarball = cache / "pytorch_1.13.1+dfsg.orig.tar.xz"
    if not tarball.exists():
        cache.mkdir(parents=True, exist_ok=True)
        _apt_source(cache, "pytorch=1.13.1+dfsg-4")
    if not tarball.exists():
        pytest.fail("could not download pytorch_1.13.1+dfsg.orig.tar.xz from deb.debian.org")
    return tarball


@pytest.fixture(scope="session")
def source_cache() -> Path:
    """A cache root for source providers, kept between runs (downloads happen once)."""
    root = test_cache() / "sources"
    root.mkdir(parents=True, exist_ok=True)
    return root
