"""Apptainer SIF images for clusters without Docker, made from the OCI archives of the training
images. Apptainer is packaged for Debian sid only (1.4.5, needs glibc 2.38), so it runs in a
working container of a builder image (default: Debian trixie) with sid's ``apptainer`` installed
from sid there — never on the host. Unpacking an image's ``/dev`` nodes needs ``CAP_MKNOD`` in
that container (measured: ``dev/console: mknod: operation not permitted`` without it)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from torchsmith.errors import Problem

BUILDER = "docker.io/library/debian:trixie"
SID_LIST = "/etc/apt/sources.list.d/torchsmith-sid.list"
CAPS = ("CAP_MKNOD",)
# the container's own mirror (one-line or deb822 sources), sid from the same place; the mirror's
# sid Release can be older than its Valid-Until: check-valid-until=no (measured here)
_ADD_SID = (
    "m=$(sed -n 's/^URIs: *//p;s/^deb  *\\([^ []*\\) .*/\\1/p' /etc/apt/sources.list "
    "/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1); "
    'echo "deb [check-valid-until=no] ${m:-http://deb.debian.org/debian} sid main" > ' + SID_LIST
)


def setup_commands() -> list[list[str]]:
    """sid's apptainer in the builder container."""
    apt = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
    return [
        ["sh", "-c", _ADD_SID],
        [*apt, "update", "-q"],
        [*apt, "install", "-y", "-q", "--no-install-recommends", "-t", "sid", "apptainer"],
    ]


def build_argv(sif: Path, archive: Path) -> list[str]:
    return ["apptainer", "build", "--force", str(sif), f"oci-archive:{archive}"]


def refusals(oci_archive: Path | None, engine: str | None) -> list[Problem]:
    """--sif needs the OCI archives it is made from, and buildah to run apptainer in."""
    problems = []
    if oci_archive is None:
        problems.append(
            Problem(
                "--sif builds each SIF from the image's OCI archive, and none is written",
                "add --oci-archive DIR (the archives are kept there too)",
                "sif",
            )
        )
    if engine is not None and engine != "buildah":
        problems.append(
            Problem(
                f"--sif with engine {engine}: apptainer runs in a buildah working container "
                "only yet (podman run fails here: setrlimit)",
                "install buildah and pass --engine buildah",
                "sif",
            )
        )
    return problems


def chosen(images: Sequence[str], wanted: Sequence[str]) -> list[str]:
    """The images made into SIFs, in the spec's order: those ``--sif-image`` names, or all."""
    return [name for name in images if not wanted or name in wanted]


def choice_refusals(
    images: Sequence[str], wanted: Sequence[str], sif: Path | None
) -> list[Problem]:
    """``--sif-image`` names an image of the spec, and comes with ``--sif``."""
    problems = [_unknown(name, images) for name in dict.fromkeys(wanted) if name not in images]
    if wanted and sif is None:
        problems.append(
            Problem("--sif-image without --sif: no SIF is made", "add --sif DIR", "sif-image")
        )
    return problems


def _unknown(name: str, images: Sequence[str]) -> Problem:
    close = difflib.get_close_matches(name, list(images), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    known = ", ".join(images) or "none ([[images]] tables of the spec file)"
    return Problem(
        f"--sif-image {name!r}: the spec has no training image of that name",
        f"{hint}name one of the spec's images: {known}",
        "sif-image",
    )
