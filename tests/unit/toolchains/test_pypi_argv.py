"""The pip command lines of the CUDA ``pypi`` provider: wheels only, hashes required when given."""

from __future__ import annotations

from pathlib import Path

from torchsmith.toolchains.cuda.pypi import download_argv, install_argv, requirement

PY = "/usr/bin/python3"
REQ = requirement("13.0")


def test_download_takes_wheels_only() -> None:
    argv = download_argv(PY, Path("/c/wheels"), REQ)
    assert argv[:4] == [PY, "-m", "pip", "download"]
    assert "--only-binary=:all:" in argv
    assert argv[argv.index("-d") + 1] == Path("/c/wheels")
    assert argv[-1] == REQ
    assert "--require-hashes" not in argv


def test_download_with_a_hashed_requirements_file_requires_hashes() -> None:
    argv = download_argv(PY, Path("/c/wheels"), REQ, hashed=Path("/c/req.txt"))
    assert "--only-binary=:all:" in argv
    assert argv[-3:] == ["--require-hashes", "-r", Path("/c/req.txt")]
    assert REQ not in argv  # every wheel comes from the pinned file


def test_install_uses_only_the_downloaded_wheels() -> None:
    argv = install_argv(PY, Path("/c/wheels"), Path("/c/site"), REQ)
    assert argv[:4] == [PY, "-m", "pip", "install"]
    for flag in ("--only-binary=:all:", "--no-index", "--no-compile"):
        assert flag in argv
    assert argv[argv.index("--find-links") + 1] == Path("/c/wheels")
    assert argv[argv.index("--target") + 1] == Path("/c/site")
    assert argv[-1] == REQ
