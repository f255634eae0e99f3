"""The CycloneDX SBOM: valid against CycloneDX 1.6's JSON schema (the library's own strict
validator), and holding what issue 29 asks it to list."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from torchsmith.attest.files import member_hashes, sbom_path
from torchsmith.attest.sbom import all_components, make_sbom, role_of, wheel_files
from torchsmith.attest.write import attest, build_time
from torchsmith.hashing import sha256_file

from .helpers import FILES, make_wheel, manifest, subject

WHEN = datetime.datetime(2025, 1, 27, tzinfo=datetime.timezone.utc)


def _sbom(tmp_path: Path) -> tuple[str, Path]:
    wheel = make_wheel(tmp_path)
    text = make_sbom(subject(wheel, manifest()), member_hashes(wheel), sha256_file(wheel), WHEN)
    return text, wheel


def test_the_sbom_validates_against_the_cyclonedx_schema(tmp_path: Path) -> None:
    text, _ = _sbom(tmp_path)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None


def _by_role(text: str) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for comp in all_components(json.loads(text)):
        found.setdefault(str(role_of(comp)), []).append(dict(comp))
    return found


def test_it_lists_source_submodules_fixes_toolchain_environment_and_bundled_libraries(
    tmp_path: Path,
) -> None:
    roles = _by_role(_sbom(tmp_path)[0])
    [source] = roles["source"]
    props = {p["name"]: p["value"] for p in source["properties"]}  # type: ignore[union-attr]
    assert props["torchsmith:tag"] == "v2.6.0" and props["torchsmith:commit"].startswith("1eba9b")
    assert [c["version"] for c in roles["submodule"]] == [
        "0c9fce2ffefecfdce794e1859584e25877b7b592"
    ]
    [fix] = roles["torchsmith-fix"]
    assert fix["name"] == "numpy-below-2" and fix["hashes"][0]["alg"] == "SHA-256"  # type: ignore[index]
    assert {c["name"]: c["version"] for c in roles["toolchain"]}[
        "cc"
    ] == "gcc (Debian 12.2.0-14) 12.2.0"
    versions = {c["name"]: c["version"] for c in roles["library-version"]}
    assert versions == {"CUDA_VERSION": "12.4", "CUDNN_VERSION": "9.1.0"}
    [numpy] = roles["build-environment"]
    assert numpy["purl"] == "pkg:pypi/numpy@1.26.4" and numpy["hashes"]
    assert [c["name"] for c in roles["bundled-by-repair"]] == ["torch.libs/libgomp-a34b3233.so.1"]


def test_every_file_of_the_wheel_is_listed_with_its_sha256(tmp_path: Path) -> None:
    text, wheel = _sbom(tmp_path)
    assert wheel_files(json.loads(text)) == member_hashes(wheel)
    assert set(member_hashes(wheel)) == set(FILES)


def test_a_wheel_of_thousands_of_files_is_attested_in_seconds(tmp_path: Path) -> None:
    """torch's wheels hold tens of thousands of files: the library's validation is quadratic in
    the top-level components, so the files are nested (a flat list took minutes)."""
    members = {f"torch/include/h{i}.h": "ab" * 32 for i in range(6000)}
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-linux_x86_64.whl"
    start = time.monotonic()
    text = make_sbom(subject(wheel, manifest()), members, "cd" * 32, WHEN)
    assert time.monotonic() - start < 30 and len(wheel_files(json.loads(text))) == 6000


def test_the_same_wheel_gets_the_same_sbom(tmp_path: Path) -> None:
    assert _sbom(tmp_path)[0] == _sbom(tmp_path)[0]


def test_the_sbom_time_is_the_builds_source_date_epoch() -> None:
    assert build_time(manifest()) == datetime.datetime(2025, 1, 27, tzinfo=datetime.timezone.utc)
    no_epoch = {**manifest(), "env": {}}
    assert build_time(no_epoch).isoformat() == "2026-11-27T08:00:00+00:00"
    own = build_time(manifest(), {"epoch": 1744368318})  # a companion's own source's epoch
    assert own.isoformat() == "2025-04-11T10:45:18+00:00"


def test_attest_writes_the_sbom_and_provenance_beside_the_wheel(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    written = attest(subject(wheel, manifest()), manifest(), None)
    assert [p.name for p in written] == [wheel.name + ".cdx.json", wheel.name + ".provenance.json"]
    assert sbom_path(wheel).is_file()
