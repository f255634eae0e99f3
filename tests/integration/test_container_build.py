"""CI, real: `torchsmith image` with buildah (overlay storage, chroot isolation; no daemon, no
registry) makes two named training images from one set of wheels — the official torch
2.13.0+cpu wheel the other integration tests download once (no extra download) — on a Debian 12
base made by ``debootstrap --variant=minbase`` (the rootfs tarball test_readme_fresh_debian
caches once per test cache) and imported with ``buildah from scratch`` + ``add`` + ``commit``.
Each image is checked by running inside it: ``id -u``/``id -g``/``id -un``, ``date +%Z`` and
``import torch``; ``--output wheel`` lands the wheels and the manifest in the output
directory (the export stage); each image is exported as an oci-archive by skopeo, and one of
them (``--sif-image train``: the route is the same for every image) is turned into an Apptainer
SIF by sid's apptainer in a trixie working container (``--sif``); the other gets none.

Cost (Debian 12 dev machine, 2 cores, 2026-11-24): 6 min 25 s for the module, of which
`torchsmith image` (2 images, export stage, 2 oci-archives, 2 SIFs) 279 s — the SIFs ~170 s of
it (apptainer from sid in the builder, mksquashfs of two ~1 GB images) — and the in-image
checks ~90 s; the rootfs tarballs are shared with test_readme_fresh_debian and
test_build_in_container (made once per test cache). One SIF since issue 23 (docs/testing.md has
the measured before/after).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.test_build_in_container import trixie_tarball  # noqa: F401 (fixture)
from tests.integration.test_readme_fresh_debian import rootfs_tarball  # noqa: F401 (fixture)
from tests.resources import require_root, require_tool
from torchsmith.container.build import storage_under

pytestmark = pytest.mark.slow
BASE = "localhost/torchsmith-test/bookworm:latest"
SIF_BUILDER = "localhost/torchsmith-test/trixie:latest"
IMAGES = {  # name -> (TZ, user, uid, gid, expected `date +%Z` in November)
    "train": ("Asia/Seoul", "ada", 1234, 2345, "KST"),
    "serve": ("Europe/Berlin", "bob", 1500, 1600, "CET"),
}
SIF_IMAGE = "train"  # the one image made into a SIF (--sif-image)


def _run(*argv: str | Path, timeout: float = 900) -> str:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{argv}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _network_trust(flags: list[str | Path], container: str) -> None:
    """The host's network trust (a TLS-inspecting proxy's CA, pip's cert setting), as the
    fresh-Debian test does: the images' apt and pip reach the same mirrors the host does."""
    local_cas = Path("/usr/local/share/ca-certificates")
    if local_cas.is_dir() and any(local_cas.iterdir()):
        _run("buildah", *flags, "copy", container, local_cas, str(local_cas))
        chroot = ("--isolation", "chroot")
        _run("buildah", *flags, "run", *chroot, container, "--", "update-ca-certificates")
    if Path("/etc/pip.conf").is_file():
        _run("buildah", *flags, "copy", container, "/etc/pip.conf", "/etc/pip.conf")


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory,
    rootfs_tarball: Path,  # noqa: F811
    trixie_tarball: Path,  # noqa: F811
) -> Path:
    """A private image store (the driver torchsmith picks: overlay here) holding the Debian 12
    base image."""
    require_root("buildah with chroot isolation")
    require_tool("buildah")
    root = tmp_path_factory.mktemp("containers")
    flags = [*storage_under(root).flags()]
    start = time.monotonic()
    container = _run("buildah", *flags, "from", "scratch").strip()
    _run("buildah", *flags, "add", container, rootfs_tarball, "/")
    _network_trust(flags, container)
    _run("buildah", *flags, "commit", "-q", "--rm", container, BASE)
    builder = _run("buildah", *flags, "from", "scratch").strip()  # the SIF builder: plain trixie
    _run("buildah", *flags, "add", builder, trixie_tarball, "/")
    _run("buildah", *flags, "commit", "-q", "--rm", builder, SIF_BUILDER)
    print(f"base image imported: {time.monotonic() - start:.0f} s")
    return root


def _spec(tmp: Path) -> Path:
    # Python 3.11 is bookworm's own: no uv image needed (no registry here)
    lines = ['torch = "2.13.0"', 'python = "3.11"', 'accelerator = "cpu"', 'backend = "docker"']
    lines += ['outputs = ["wheel", "docker-image"]', 'engine = "buildah"', f'base_image = "{BASE}"']
    for name, (tz, user, uid, gid, _) in IMAGES.items():
        lines += ["[[images]]", f'name = "{name}"', f'tz = "{tz}"', f'user = "{user}"']
        lines += [f"uid = {uid}", f"gid = {gid}", 'workdir = "/work"']
    spec = tmp / "images.toml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return spec


def _inside(store: Path, image: str, *command: str) -> str:
    flags = [*storage_under(store).flags()]
    container = _run("buildah", *flags, "from", "--pull-never", f"localhost/{image}").strip()
    try:
        return _run("buildah", *flags, "run", "--isolation", "chroot", container, "--", *command)
    finally:
        _run("buildah", *flags, "rm", container)


@pytest.fixture(scope="module")
def built(store: Path, cpu_torch_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("skopeo")
    tmp = tmp_path_factory.mktemp("image")
    wheels = tmp / "wheels"
    wheels.mkdir()
    shutil.copy2(cpu_torch_wheel, wheels / cpu_torch_wheel.name)
    argv = [sys.executable, "-m", "torchsmith", "image", "--spec", _spec(tmp), "--wheels", wheels]
    argv += ["--storage-root", store, "--pull", "never", "-o", tmp / "ctx"]
    argv += ["--output-dir", tmp / "dist", "--oci-archive", tmp / "oci"]
    argv += ["--sif", tmp / "sif", "--sif-image", SIF_IMAGE, "--sif-builder", SIF_BUILDER]
    start = time.monotonic()
    _run(*argv, timeout=1500)
    print(f"torchsmith image (2 images, export, OCI, 1 SIF): {time.monotonic() - start:.0f} s")
    return tmp


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_each_training_image_has_its_user_tz_and_torch(store: Path, built: Path, name: str) -> None:
    """One working container per image (with vfs, each `buildah from` copied the ~1 GB image)."""
    _tz, user, uid, gid, zone = IMAGES[name]
    torch = "python -c 'import torch; print(torch.__version__)'"
    probe = f"id -u; id -g; id -un; date +%Z; pwd; {torch}"
    out = _inside(store, name, "sh", "-c", probe)
    assert out.split() == [str(uid), str(gid), user, zone, "/work", "2.13.0+cpu"]


def test_the_wheels_and_manifest_land_in_the_output_directory(built: Path) -> None:
    names = sorted(p.name for p in (built / "dist").iterdir())
    assert names == ["manifest.json", "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"]
    manifest = json.loads((built / "dist" / "manifest.json").read_text())
    assert manifest["base_image"] == BASE and manifest["plan"]["torch"]["value"] == "2.13.0"
    assert {i["name"]: i["uid"] for i in manifest["images"]} == {"train": 1234, "serve": 1500}


def test_the_images_are_oci_archives(built: Path) -> None:
    for name, (tz, user, *_rest) in IMAGES.items():
        archive = built / "oci" / f"{name}.oci.tar"
        config = json.loads(_run("skopeo", "inspect", "--config", f"oci-archive:{archive}"))
        assert config["config"]["User"] == user and f"TZ={tz}" in config["config"]["Env"]


def test_the_chosen_image_is_an_apptainer_sif(built: Path) -> None:
    """Built by sid's apptainer in a trixie working container (CAP_MKNOD: the images' /dev);
    only the image --sif-image names (the other's SIF would take the same route again)."""
    sifs = sorted(p.name for p in (built / "sif").glob("*.sif"))
    assert sifs == [f"{SIF_IMAGE}.sif"]
    sif = built / "sif" / f"{SIF_IMAGE}.sif"
    with sif.open("rb") as f:
        head = f.read(64)
    assert head.startswith(b"#!/usr/bin/env run-singularity\n") and b"SIF_MAGIC" in head
    assert sif.stat().st_size > 150_000_000  # the squashed image holds torch (191 MB wheel)
