"""Writes one wheel's attestations beside it: the SBOM, the provenance statement and, with a
key, the DSSE envelope of that statement. Files are written atomically."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchsmith import atomic
from torchsmith.attest import dsse
from torchsmith.attest.files import envelope_path, member_hashes, provenance_path, sbom_path
from torchsmith.attest.provenance import make_statement, statement_bytes
from torchsmith.attest.sbom import make_sbom
from torchsmith.attest.subject import Subject
from torchsmith.hashing import sha256_file

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def build_time(
    manifest: Mapping[str, Any], source: Mapping[str, Any] | None = None
) -> datetime.datetime:
    """The SBOM's time: the wheel's SOURCE_DATE_EPOCH — its source's (``epoch``, resolved at
    fetch: a companion's may be its own commit's date), else the build's variable — else the
    manifest's."""
    epoch = str((source or {}).get("epoch") or manifest.get("env", {}).get("SOURCE_DATE_EPOCH", ""))
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc)
    created = str(manifest.get("created", "1970-01-01T00:00:00Z"))
    try:
        return datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc
        )
    except ValueError:
        return datetime.datetime.fromtimestamp(0, tz=datetime.timezone.utc)


def attest(
    subject: Subject, manifest: Mapping[str, Any], key: Ed25519PrivateKey | None
) -> list[Path]:
    """Write ``subject``'s SBOM, provenance and (with ``key``) envelope; their paths."""
    digest = sha256_file(subject.wheel)
    when = build_time(manifest, subject.source)
    sbom = make_sbom(subject, member_hashes(subject.wheel), digest, when)
    written = [atomic.write_text(sbom_path(subject.wheel), sbom)]
    sbom_sha = hashlib.sha256(sbom.encode()).hexdigest()
    body = statement_bytes(make_statement(subject, digest, manifest, sbom_sha))
    written.append(atomic.write_bytes(provenance_path(subject.wheel), body))
    stale = envelope_path(subject.wheel)
    if key is not None:
        written.append(atomic.write_json(stale, dsse.sign(body, key)))
    elif stale.is_file():  # an envelope of an earlier statement would not verify
        stale.unlink()
    return written
