"""`torchsmith publish DIST --to TARGET`: wheels to a PyPI-compatible index, conda packages to a
channel directory. Credentials only from --token-env, --token-file (mode 600) or --keyring."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any

from torchsmith.console import print_json, print_table, shown, table
from torchsmith.errors import UsageError
from torchsmith.proc import HOST
from torchsmith.publish import Published, credentials
from torchsmith.publish.target import Target, parse_target
from torchsmith.writable import writable_dir

SUFFIXES = {
    "pypi-index": (".whl",),
    "conda-channel": (".conda", ".tar.bz2"),
    "oci": (".tar",),  # an oci-archive (skopeo/buildah/podman write one)
    "wheel-dir": (".whl",),  # with the attestations beside each wheel
}


def artifacts(dist: Path, target: Target) -> list[Path]:
    """The files of ``dist`` (a file or a directory) that ``target`` takes."""
    suffixes = SUFFIXES[target.kind]
    if dist.is_file():
        found = [dist] if dist.name.endswith(suffixes) else []
    elif dist.is_dir():
        found = sorted(p for p in dist.iterdir() if p.is_file() and p.name.endswith(suffixes))
    else:
        raise UsageError(f"{dist}: no such file or directory", "give a built artifact or dist/")
    if not found:
        raise UsageError(
            f"{dist}: no {' / '.join(suffixes)} to publish to {target.kind}",
            "build one first (torchsmith build … --output wheel / conda)",
        )
    return found


def _routes(args: argparse.Namespace) -> list[str]:
    return [r for r in ("token_env", "token_file", "keyring") if getattr(args, r)]


def secret_of(args: argparse.Namespace, service: str) -> credentials.Secret:
    """The token from the one credential route the user named."""
    if len(_routes(args)) != 1:
        raise UsageError(
            "pypi-index needs exactly one of --token-env VAR, --token-file FILE, --keyring",
            "a token never goes on the command line: export it in a variable, keep it in a "
            "file only you can read (chmod 600), or store it with `keyring set`",
        )
    if args.token_env:
        return credentials.from_environment(os.environ.get(args.token_env), args.token_env)
    if args.token_file:
        return credentials.from_file(Path(args.token_file).expanduser())
    return credentials.from_keyring(service, args.username or credentials.TOKEN_USER)


def check_up_front(target: Target, files: list[Path]) -> None:
    """What the user gave, checked before anything is sent or written (issue 28 item 5): each
    wheel is one (P21, P22), a conda channel is a directory this user can write (P28, P29)."""
    if target.kind in {"pypi-index", "wheel-dir"}:
        from torchsmith.publish.wheel_file import check_wheel

        for wheel in files:
            check_wheel(wheel)
    if target.kind in {"conda-channel", "wheel-dir"}:
        writable_dir(
            Path(target.where).expanduser(),
            f"{target.kind}:",
            f"give {target.kind}: a directory you can write (it is made when missing)",
        )


# the flags each kind of target reads; a flag given for a target that never reads it is refused
# (trial P39: --username with conda-channel: was dropped without a word)
_READS = {
    "pypi-index": {"token_env", "token_file", "keyring", "username", "index_url"},
    "oci": {"token_env", "token_file", "keyring", "username"},
    "conda-channel": set(),
    "wheel-dir": set(),
}


def check_flags(args: argparse.Namespace, target: Target) -> None:
    flags = ("token_env", "token_file", "keyring", "username", "index_url")
    unused = [k for k in flags if getattr(args, k) and k not in _READS[target.kind]]
    if unused:
        named = ", ".join("--" + k.replace("_", "-") for k in unused)
        raise UsageError(
            f"{named}: not read for a {target.kind} target, which would drop it without a word",
            f"drop {named} (a conda channel is a directory: no credentials, no index)"
            if target.kind == "conda-channel"
            else f"drop {named}",
        )


def _publish(args: argparse.Namespace, target: Target, files: list[Path]) -> list[Published]:
    check_up_front(target, files)
    user = args.username or credentials.TOKEN_USER
    if target.kind == "pypi-index":
        from torchsmith.publish.pypi import publish_wheel
        from torchsmith.publish.wheel_dir import attestation_rows

        secret = secret_of(args, target.where)
        done = [publish_wheel(f, target.where, secret, user, args.index_url) for f in files]
        return done + attestation_rows(files)  # named, never dropped silently
    if target.kind == "wheel-dir":
        from torchsmith.publish.wheel_dir import publish_wheels

        return publish_wheels(files, Path(target.where).expanduser())
    if target.kind == "oci":
        return _publish_images(args, target, files)
    from torchsmith.publish.conda_channel import publish_packages

    return publish_packages(files, Path(target.where).expanduser())


def _publish_images(args: argparse.Namespace, target: Target, files: list[Path]) -> list[Published]:
    """One image archive to one tag (anonymous when no credential route is named)."""
    from torchsmith.publish.oci import push_image, split_reference

    if len(files) != 1:
        raise UsageError(f"oci: {len(files)} image archives for one tag", "give one archive")
    registry = split_reference(target.where)[0]
    secret = secret_of(args, registry) if _routes(args) else None
    env = dict(os.environ)
    user = args.username or credentials.TOKEN_USER
    return [push_image(files[0], target.where, secret, user, env, runner=HOST)]


def _handler(args: argparse.Namespace) -> int:
    target = parse_target(args.to)
    check_flags(args, target)
    done = _publish(args, target, artifacts(Path(args.dist), target))
    if args.json:
        print_json({"target": target.shown(), "artifacts": [dataclasses.asdict(p) for p in done]})
        return 0
    grid = table(f"publish to {shown(target.shown())}", "artifact", "result", "sha256")
    for item in done:
        grid.add_row(shown(item.artifact), item.outcome, item.sha256[:16])
    print_table(grid)
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("publish", help="upload built artifacts (index, channel, registry)")
    parser.add_argument("dist", help="an artifact or a directory of them (dist/)")
    parser.add_argument(
        "--to",
        required=True,
        help="pypi-index:UPLOAD_URL (https://upload.pypi.org/legacy/, a pypiserver's /), "
        "conda-channel:DIR, oci:REGISTRY/REPO:TAG (an oci-archive .tar) or wheel-dir:DIR "
        "(wheels with their SBOM, provenance and signature; a package index takes none of "
        "those: they are listed as not uploaded)",
    )
    creds = parser.add_argument_group("credentials (never on the command line)")
    creds.add_argument("--token-env", metavar="VAR", help="environment variable holding it")
    creds.add_argument("--token-file", metavar="FILE", help="file holding it (mode 600)")
    creds.add_argument("--keyring", action="store_true", help="from the keyring, service=URL")
    creds.add_argument(
        "--username",
        help=f"user name sent with the token (default {credentials.TOKEN_USER})",
    )
    parser.add_argument(
        "--index-url",
        help="the simple index checked before uploading (default: beside the upload URL)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handler)
