"""Wheels into a plain directory (``wheel-dir:DIR``: what ``pip install --find-links DIR``
reads), each with the attestations beside it (SBOM, provenance, signature: written by the
build's ``attest`` step), copied atomically. Idempotent: a file of the same name with the same
sha256 is a no-op, another one is refused. The other targets' handling of attestations:
:func:`attestation_rows`."""

from __future__ import annotations

from pathlib import Path

from torchsmith.atomic import copy_file
from torchsmith.attest.files import attestations_of
from torchsmith.errors import PublishError
from torchsmith.hashing import sha256_file
from torchsmith.publish.model import Outcome, Published

NOT_TO_PYPI = (
    "not uploaded: a package index takes distributions only (PyPI's own attestations, PEP 740, "
    "are Sigstore bundles it makes itself); kept beside the wheel — publish them with "
    "--to wheel-dir:DIR"
)


def _copy(src: Path, directory: Path) -> Published:
    sha, dest = sha256_file(src), directory / src.name
    outcome: Outcome = "already-there"
    if dest.exists():
        theirs = sha256_file(dest)
        if theirs != sha:
            raise PublishError(
                f"{dest} already exists with sha256 {theirs}; this file is {sha}",
                "publish into another directory, or remove the old file first",
            )
    else:
        copy_file(src, dest)
        outcome = "uploaded"
    return Published(src.name, sha, outcome, str(directory))


def publish_wheels(files: list[Path], directory: Path) -> list[Published]:
    """Each wheel, then its attestations, into ``directory`` (made when missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    return [_copy(p, directory) for wheel in files for p in [wheel, *attestations_of(wheel)]]


def attestation_rows(files: list[Path]) -> list[Published]:
    """The attestations a package index cannot take, each named with what happened to it."""
    return [
        Published(p.name, sha256_file(p), "not-uploaded", NOT_TO_PYPI)
        for wheel in files
        for p in attestations_of(wheel)
    ]
