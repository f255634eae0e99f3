"""An OCI image archive (``oci-archive:`` as skopeo, buildah and podman write it) pushed to a
registry with skopeo, then read back by digest. Credentials go to skopeo in a containers
``auth.json`` held in memory only (``memfd_create``), inherited as ``/dev/fd/N``: never in its
argv (``--dest-creds`` would show them in ``/proc/*/cmdline``) and never on disk, so nothing is
left behind when the run is killed (a file in /tmp outlived SIGTERM: security review f1b4bec,
N11). skopeo 1.9.3 reads it there (checked against a recording registry on loopback).
Idempotent: the tag already pointing at the same manifest digest is a no-op, at another one
the push is refused. Plain http (``--tls-verify=false``) only to a loopback registry."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from torchsmith.errors import HostError, PublishError, UsageError
from torchsmith.hashing import sha256_file
from torchsmith.publish.credentials import Secret
from torchsmith.publish.model import Outcome, Published
from torchsmith.runner import Runner
from torchsmith.transport import is_loopback

SKOPEO = "skopeo"


def split_reference(ref: str) -> tuple[str, str, str]:
    """``REGISTRY/REPO:TAG`` → (registry, repo, tag)."""
    registry, slash, rest = ref.partition("/")
    repo, colon, tag = rest.rpartition(":")
    if not slash or not colon or not repo or not tag or "/" in tag or "@" in ref:
        raise UsageError(
            f"oci:{ref}: not REGISTRY/REPO:TAG", "e.g. oci:registry.example/team/torch:2.6.0"
        )
    return registry, repo, tag


def _registry(ref: str) -> str:
    return ref.partition("/")[0]


def _tls(registry: str) -> list[str]:
    host = registry.rsplit(":", 1)[0] if registry.count(":") == 1 else registry
    return ["--tls-verify=false"] if is_loopback(host.strip("[]")) else []


FD_DIR = Path("/dev/fd")


@contextlib.contextmanager
def auth_file(registry: str, secret: Secret | None, username: str) -> Iterator[Path | None]:
    """A containers-auth.json(5) holding only this registry's credential, as ``/dev/fd/N`` of
    an in-memory file (closed on exit; the kernel frees it with the last process holding it)."""
    if secret is None:
        yield None
        return
    token = base64.b64encode(f"{username}:{secret.reveal()}".encode()).decode()
    fd = os.memfd_create("auth.json", os.MFD_CLOEXEC)
    try:
        os.write(fd, json.dumps({"auths": {registry: {"auth": token}}}).encode())
        os.lseek(fd, 0, os.SEEK_SET)
        yield FD_DIR / str(fd)
    finally:
        os.close(fd)


def _fds(argv: list[str]) -> list[int]:
    """The descriptors an argv names as ``/dev/fd/N`` (inherited by the command)."""
    return [int(a.rsplit("/", 1)[1]) for a in argv if a.startswith(f"{FD_DIR}/")]


def _query(argv: list[str], env: Mapping[str, str], runner: Runner) -> tuple[int, str]:
    try:
        done = runner.capture(argv, env=env, timeout=300, pass_fds=_fds(argv))
    except FileNotFoundError:
        raise HostError("skopeo is not installed", "apt-get install skopeo") from None
    return done.returncode, done.stdout + done.stderr


def remote_digest(
    ref: str, auth: Path | None, env: Mapping[str, str], runner: Runner
) -> str | None:
    """The manifest digest the tag points at (None when the registry has no such tag)."""
    argv = [SKOPEO, "inspect", "--raw", *_tls(_registry(ref))]
    argv += ["--authfile", str(auth)] if auth else ["--no-creds"]
    code, out = _query([*argv, f"docker://{ref}"], env, runner)
    if code == 0:
        return "sha256:" + hashlib.sha256(out.encode()).hexdigest()
    if "manifest unknown" in out or "name unknown" in out or "not found" in out.lower():
        return None
    raise PublishError(
        f"oci:{ref}: skopeo inspect failed: {out.strip()[-300:]}",
        "check the registry address and the credentials",
    )


def local_digest(archive: Path, env: Mapping[str, str], runner: Runner) -> str:
    code, out = _query([SKOPEO, "inspect", "--raw", f"oci-archive:{archive}"], env, runner)
    if code != 0:
        raise UsageError(
            f"{archive}: not an OCI image archive ({out.strip()[-200:]})",
            "give an oci-archive (skopeo copy … oci-archive:FILE)",
        )
    return "sha256:" + hashlib.sha256(out.encode()).hexdigest()


def push_image(
    archive: Path,
    ref: str,
    secret: Secret | None,
    username: str,
    env: Mapping[str, str],
    *,
    runner: Runner,
) -> Published:
    """``archive`` to ``ref`` unless the tag already holds it; refuse another image there."""
    registry, repo, _tag = split_reference(ref)
    mine = local_digest(archive, env, runner)
    with auth_file(registry, secret, username) as auth:
        theirs = remote_digest(ref, auth, env, runner)
        if theirs is not None and theirs != mine:
            raise PublishError(
                f"oci:{ref} already points at {theirs}; this image is {mine}",
                "push under a new tag, or delete the old tag on the registry first",
            )
        if theirs is None:
            _copy(archive, ref, auth, env, runner)
    where = f"{registry}/{repo}@{mine}"
    outcome: Outcome = "uploaded" if theirs is None else "already-there"
    return Published(archive.name, sha256_file(archive), outcome, where)


def _copy(
    archive: Path, ref: str, auth: Path | None, env: Mapping[str, str], runner: Runner
) -> None:
    dest_tls = [f"--dest-{a.removeprefix('--')}" for a in _tls(_registry(ref))]
    argv = [SKOPEO, "copy", "--quiet", "--preserve-digests", *dest_tls]
    argv += ["--dest-authfile", str(auth)] if auth else ["--dest-no-creds"]
    code, out = _query([*argv, f"oci-archive:{archive}", f"docker://{ref}"], env, runner)
    if code != 0:
        raise PublishError(
            f"oci:{ref}: skopeo copy failed: {out.strip()[-300:]}",
            "check the registry address and the credentials",
        )
