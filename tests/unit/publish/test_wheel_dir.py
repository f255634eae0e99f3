"""Attestations at publish time: a wheel-dir target takes each wheel with its SBOM, provenance
and signature; a package index cannot, and each such file is named as not uploaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.attest.helpers import make_wheel, manifest, subject
from torchsmith.attest.write import attest
from torchsmith.cli import main
from torchsmith.errors import PublishError
from torchsmith.publish.target import parse_target
from torchsmith.publish.wheel_dir import NOT_TO_PYPI, attestation_rows, publish_wheels


def _dist(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    dist.mkdir()
    wheel = make_wheel(dist)
    attest(subject(wheel, manifest()), manifest(), None)
    return wheel


def test_a_wheel_dir_gets_the_wheel_and_its_attestations(tmp_path: Path) -> None:
    wheel = _dist(tmp_path)
    done = publish_wheels([wheel], tmp_path / "site")
    assert [(p.artifact, p.outcome) for p in done] == [
        (wheel.name, "uploaded"),
        (wheel.name + ".cdx.json", "uploaded"),
        (wheel.name + ".provenance.json", "uploaded"),
    ]
    again = publish_wheels([wheel], tmp_path / "site")
    assert {p.outcome for p in again} == {"already-there"}


def test_another_file_of_the_same_name_is_refused(tmp_path: Path) -> None:
    wheel = _dist(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / (wheel.name + ".cdx.json")).write_text("{}")
    with pytest.raises(PublishError, match="already exists with sha256"):
        publish_wheels([wheel], site)


def test_an_index_target_names_each_attestation_it_cannot_take(tmp_path: Path) -> None:
    wheel = _dist(tmp_path)
    rows = attestation_rows([wheel])
    assert [(r.artifact, r.outcome) for r in rows] == [
        (wheel.name + ".cdx.json", "not-uploaded"),
        (wheel.name + ".provenance.json", "not-uploaded"),
    ]
    assert rows[0].where == NOT_TO_PYPI and "wheel-dir:DIR" in NOT_TO_PYPI


def test_the_publish_command_takes_a_wheel_dir_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = _dist(tmp_path)
    assert parse_target(f"wheel-dir:{tmp_path / 'site'}").kind == "wheel-dir"
    assert main(["publish", str(wheel.parent), "--to", f"wheel-dir:{tmp_path / 'site'}"]) == 0
    assert (tmp_path / "site" / (wheel.name + ".provenance.json")).is_file()
