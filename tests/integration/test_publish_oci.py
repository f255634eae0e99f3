"""Issue 13 part 4, registry side, for real: Debian's ``docker-registry`` (distribution 2.8) on
127.0.0.1 with htpasswd auth (a bcrypt hash of a canary token), a tiny OCI image this test
writes itself (one layer holding one file, as an ``oci-archive``), ``torchsmith publish
ARCHIVE --to oci:127.0.0.1:PORT/team/tiny:1.0 --token-env VAR`` as a real process while a thread
reads every ``/proc/*/cmdline``, then the image pulled back *by digest* with skopeo and its file
compared. Again is a no-op; another image under the tag is refused; the canary is in no file of
the registry's storage (the image layers), the dist directory or the command's output. ~5 s."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.canary import files_holding
from tests.resources import require_tool

from .small_tree import cli_env
from .test_publish_pypi import CANARY, _free_port, _publish

pytestmark = [pytest.mark.slow]


def _blob(layout: Path, data: bytes, media: str) -> dict[str, object]:
    digest = hashlib.sha256(data).hexdigest()
    (layout / "blobs" / "sha256" / digest).write_bytes(data)
    return {"mediaType": media, "digest": f"sha256:{digest}", "size": len(data)}


def oci_archive(dest: Path, text: str) -> Path:
    """An OCI image (image-spec 1.0) with one layer holding /hello.txt, as an oci-archive."""
    layout = dest.with_suffix(".d")
    (layout / "blobs" / "sha256").mkdir(parents=True)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = len(text.encode())
        tar.addfile(info, io.BytesIO(text.encode()))
    diff_id = "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()
    layer = _blob(
        layout,
        gzip.compress(raw.getvalue(), mtime=0),
        "application/vnd.oci.image.layer.v1.tar+gzip",
    )
    config = {
        "architecture": "amd64",
        "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "config": {},
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": _blob(
            layout, json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json"
        ),
        "layers": [layer],
    }
    entry = _blob(layout, json.dumps(manifest).encode(), manifest["mediaType"])  # type: ignore[arg-type]
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [entry]}))
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    with tarfile.open(dest, "w") as tar:
        for path in sorted(layout.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(layout)), recursive=False)
    return dest


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    """docker-registry on 127.0.0.1, every request needs the canary (bcrypt htpasswd)."""
    binary = require_tool("docker-registry")
    htpasswd = require_tool("htpasswd")
    made = subprocess.run(
        [htpasswd, "-Bin", "__token__"], input=CANARY, capture_output=True, text=True, check=True
    )  # the password from stdin, never argv
    (tmp_path / "htpasswd").write_text(made.stdout)
    port = _free_port()
    config = {
        "version": 0.1,
        "log": {"level": "warn"},
        "storage": {"filesystem": {"rootdirectory": str(tmp_path / "storage")}},
        "http": {"addr": f"127.0.0.1:{port}"},
        "auth": {"htpasswd": {"realm": "test", "path": str(tmp_path / "htpasswd")}},
    }
    (tmp_path / "registry.yml").write_text(json.dumps(config))  # JSON is YAML
    with (tmp_path / "registry.log").open("w") as log:
        server = subprocess.Popen(
            [binary, "serve", str(tmp_path / "registry.yml")], stdout=log, stderr=subprocess.STDOUT
        )
    try:
        _wait(port, server)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, "docker-registry exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail("docker-registry did not listen within 30 s")


def _pull_by_digest(ref: str, dest: Path, authfile: Path) -> str:
    """skopeo copy REG/REPO@DIGEST into an OCI layout; the text of its hello.txt."""
    subprocess.run(
        [
            "skopeo",
            "copy",
            "--quiet",
            "--src-tls-verify=false",
            "--src-authfile",
            str(authfile),
            f"docker://{ref}",
            f"oci:{dest}:pulled",
        ],
        check=True,
    )
    index = json.loads((dest / "index.json").read_text())
    manifest_digest = index["manifests"][0]["digest"].split(":")[1]
    manifest = json.loads((dest / "blobs" / "sha256" / manifest_digest).read_bytes())
    layer = dest / "blobs" / "sha256" / manifest["layers"][0]["digest"].split(":")[1]
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer.read_bytes()))) as tar:
        member = tar.extractfile("hello.txt")
        assert member is not None
        return member.read().decode()


def test_publish_an_image_to_a_local_registry_and_pull_it_back_by_digest(
    tmp_path: Path, registry: str
) -> None:
    require_tool("skopeo")
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = oci_archive(dist / "tiny.oci.tar", "hello from torchsmith\n")
    env = cli_env({"REG_TOKEN": CANARY})
    ref = f"{registry}/team/tiny:1.0"

    first = _publish(
        [str(archive), "--to", f"oci:{ref}", "--token-env", "REG_TOKEN", "--json"], env
    )
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)["artifacts"][0]
    assert result["outcome"] == "uploaded"
    pinned = result["where"]
    assert pinned.startswith(f"{registry}/team/tiny@sha256:")
    again = _publish(
        [str(archive), "--to", f"oci:{ref}", "--token-env", "REG_TOKEN", "--json"], env
    )
    assert again.returncode == 0 and json.loads(again.stdout)["artifacts"][0]["outcome"] == (
        "already-there"
    ), again.stderr
    anonymous = _publish([str(archive), "--to", f"oci:{ref}"], env)
    assert anonymous.returncode != 0  # the registry wants the token

    other = oci_archive(tmp_path / "other.oci.tar", "another image\n")
    clash = _publish([str(other), "--to", f"oci:{ref}", "--token-env", "REG_TOKEN"], env)
    assert clash.returncode == 13 and "already points at" in clash.stderr, clash.stderr

    secrets = tmp_path / "secrets"
    secrets.mkdir(mode=0o700)
    authfile = secrets / "auth.json"
    token = base64.b64encode(f"__token__:{CANARY}".encode()).decode()
    authfile.write_text(json.dumps({"auths": {registry: {"auth": token}}}))
    assert _pull_by_digest(pinned, tmp_path / "pulled", authfile) == "hello from torchsmith\n"

    skip = {authfile}
    roots = [tmp_path / "storage", dist, tmp_path / "registry.log", tmp_path / "pulled"]
    assert files_holding(CANARY, roots, skip) == []
