"""The signing key of ``sign_key`` (``--sign-key``, ``TORCHSMITH_SIGN_KEY``, spec key
``sign_key``): an unencrypted Ed25519 private key in PEM (``openssl genpkey -algorithm ed25519``)
that only its owner can read. One check for every layer (:func:`key_problem`, called by
:func:`torchsmith.spec_sources.resolve_spec`) and one loader for the attest step."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from torchsmith.errors import Problem, UsageError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

MAKE_ONE = "make one with `openssl genpkey -algorithm ed25519 -out KEY.pem && chmod 600 KEY.pem`"


def _read(path: Path) -> bytes | str:
    """The key file's bytes, or why it cannot be a signing key."""
    if not path.exists():
        return f"{path} does not exist"
    if not path.is_file():
        return f"{path} is not a file"
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return f"{path} can be read by others (mode {stat.S_IMODE(path.stat().st_mode):o})"
    try:
        return path.read_bytes()[: 1 << 16]
    except OSError as exc:
        return f"{path} cannot be read: {exc.strerror}"


def _parse(data: bytes, path: Path) -> Ed25519PrivateKey | str:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        return f"{path} is not an unencrypted PEM private key ({exc})"
    if not isinstance(key, Ed25519PrivateKey):
        return f"{path} holds a {type(key).__name__.lstrip('_')}, not an Ed25519 key"
    return key


def key_problem(text: str) -> str | None:
    """Why ``text`` (a path) cannot sign; None when it holds a usable Ed25519 key."""
    path = Path(text).expanduser()
    data = _read(path)
    if isinstance(data, str):
        return data
    found = _parse(data, path)
    return found if isinstance(found, str) else None


def sign_key_problems(sign_key: str | None) -> list[Problem]:
    """The signing key checked as every layer gives it (flag, ``TORCHSMITH_SIGN_KEY``, spec
    key): called once, by :func:`torchsmith.spec_sources.resolve_spec`."""
    found = None if sign_key is None else key_problem(sign_key)
    return [Problem(found, MAKE_ONE, field="sign_key")] if found else []


def load_key(text: str) -> Ed25519PrivateKey:
    """The Ed25519 private key at ``text`` (:class:`UsageError` naming the problem)."""
    path = Path(text).expanduser()
    data = _read(path)
    found = data if isinstance(data, str) else _parse(data, path)
    if isinstance(found, str):
        raise UsageError(f"sign_key: {found}", MAKE_ONE)
    return found


def load_public_key(path: Path) -> Ed25519PublicKey:
    """An Ed25519 public key (PEM) to check a signature with."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(path.read_bytes()[: 1 << 16])
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(
            f"{path}: not a readable PEM public key ({exc})",
            "give the public half: `openssl pkey -in KEY.pem -pubout -out KEY.pub`",
        ) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError(f"{path}: not an Ed25519 public key", MAKE_ONE)
    return key


def key_id(public: Ed25519PublicKey) -> str:
    """The DSSE ``keyid``: sha256 of the raw 32-byte public key, hex."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return hashlib.sha256(public.public_bytes(Encoding.Raw, PublicFormat.Raw)).hexdigest()
