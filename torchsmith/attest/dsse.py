"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1) of an in-toto
statement, signed with Ed25519 over the pre-authentication encoding
``DSSEv1 <len type> <type> <len body> <body>``."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from torchsmith.errors import VerifyError
from torchsmith.keyfile import key_id

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def sign(body: bytes, key: Ed25519PrivateKey) -> dict[str, Any]:
    """The envelope of ``body`` (an in-toto statement) with one Ed25519 signature."""
    signature = key.sign(pae(PAYLOAD_TYPE, body))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(body).decode(),
        "signatures": [
            {"keyid": key_id(key.public_key()), "sig": base64.b64encode(signature).decode()}
        ],
    }


def payload(envelope: Any) -> bytes:
    """The signed body of an envelope (:class:`VerifyError` when it is not one)."""
    try:
        return base64.b64decode(envelope["payload"], validate=True)
    except (KeyError, TypeError, binascii.Error) as exc:
        raise VerifyError("the DSSE envelope has no readable payload", _HINT) from exc


_HINT = "the envelope was damaged or is not torchsmith's: rebuild, or sign again with sign_key"


def check(envelope: Any, public: Ed25519PublicKey) -> str | None:
    """Why no signature of ``envelope`` verifies with ``public`` (None: one does)."""
    from cryptography.exceptions import InvalidSignature

    body, wanted = payload(envelope), key_id(public)
    sigs = [s for s in envelope.get("signatures", []) if isinstance(s, dict)]
    mine = [s for s in sigs if s.get("keyid") in (None, "", wanted)]
    if not mine:
        found = ", ".join(str(s.get("keyid")) for s in sigs) or "none"
        return f"no signature by key {wanted[:16]}… (signed by: {found})"
    for sig in mine:
        try:
            public.verify(
                base64.b64decode(str(sig.get("sig", ""))),
                pae(envelope.get("payloadType", ""), body),
            )
            return None
        except (InvalidSignature, binascii.Error, ValueError):
            continue
    return f"the signature by key {wanted[:16]}… does not verify: the statement was changed"
