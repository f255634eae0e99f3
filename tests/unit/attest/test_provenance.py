"""The in-toto statement with its SLSA provenance predicate, and its DSSE envelope."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from torchsmith.attest import dsse
from torchsmith.attest.files import envelope_path, provenance_path
from torchsmith.attest.provenance import BUILD_TYPE, PREDICATE_TYPE, STATEMENT_TYPE
from torchsmith.attest.write import attest
from torchsmith.errors import UsageError
from torchsmith.hashing import sha256_file
from torchsmith.keyfile import key_problem, load_key, load_public_key

from .helpers import key_pair, make_wheel, manifest, subject


def test_the_statement_names_the_wheel_the_plan_and_the_sources(tmp_path: Path) -> None:
    wheel, data = make_wheel(tmp_path), manifest()
    attest(subject(wheel, data), data, None)
    statement = json.loads(provenance_path(wheel).read_text())
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    assert statement["subject"] == [{"name": wheel.name, "digest": {"sha256": sha256_file(wheel)}}]
    build = statement["predicate"]["buildDefinition"]
    assert build["buildType"] == BUILD_TYPE and build["externalParameters"]["plan"] == data["plan"]
    deps = {d["name"]: d["digest"] for d in build["resolvedDependencies"]}
    assert deps["torch-source"] == {"gitCommit": data["source"]["identity"]}
    assert deps["submodule:third_party/fmt"]["gitCommit"].startswith("0c9fce2")


def test_a_signed_statement_verifies_with_its_public_key_only(tmp_path: Path) -> None:
    wheel, data = make_wheel(tmp_path), manifest()
    private, public = key_pair(tmp_path)
    attest(subject(wheel, data), data, load_key(str(private)))
    envelope = json.loads(envelope_path(wheel).read_text())
    assert dsse.payload(envelope) == provenance_path(wheel).read_bytes()
    assert dsse.check(envelope, load_public_key(public)) is None
    other = key_pair(tmp_path / "..")[1]
    assert "no signature by key" in str(dsse.check(envelope, load_public_key(other)))


def test_a_changed_statement_does_not_verify(tmp_path: Path) -> None:
    wheel, data = make_wheel(tmp_path), manifest()
    private, public = key_pair(tmp_path)
    attest(subject(wheel, data), data, load_key(str(private)))
    envelope = json.loads(envelope_path(wheel).read_text())
    body = dsse.payload(envelope).replace(b"cp311", b"cp312")
    forged = {**envelope, "payload": base64.b64encode(body).decode()}
    assert "does not verify" in str(dsse.check(forged, load_public_key(public)))


def test_pae_is_dsse_v1() -> None:
    assert dsse.pae("t", b"body") == b"DSSEv1 1 t 4 body"


def test_a_key_others_can_read_or_of_another_kind_is_refused(tmp_path: Path) -> None:
    private, public = key_pair(tmp_path)
    assert key_problem(str(private)) is None
    private.chmod(0o644)
    assert "can be read by others" in str(key_problem(str(private)))
    public.chmod(0o600)
    assert "not an unencrypted PEM private key" in str(key_problem(str(public)))
    assert "does not exist" in str(key_problem(str(tmp_path / "none.pem")))
    with pytest.raises(UsageError, match=r"sign_key: .*does not exist"):
        load_key(str(tmp_path / "none.pem"))
