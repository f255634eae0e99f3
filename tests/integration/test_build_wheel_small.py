"""The whole `torchsmith build` pipeline down to a published wheel, in seconds: a small real
CMake + setuptools project stands in for a torch tree (`--source path:DIR`), built with the
plan of torch 2.5.1 (frontend `setup.py`: `setup.py build --cmake-only`, `cmake --build`,
`setup.py bdist_wheel`). Real cmake, ninja, compiler, ccache and pip (the isolated build env
installs setuptools and wheel from PyPI). About 30-60 s on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.unit.attest.helpers import key_pair
from torchsmith.cli import main
from torchsmith.verify.attestation import attestation_checks

from .small_tree import MANIFEST, WHEEL, args, make_tree

pytestmark = [pytest.mark.slow, pytest.mark.network]


def _manifest(dist: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(next(dist.glob("*.manifest.json")).read_text())
    return data


def test_builds_publishes_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = make_tree(tmp_path / "tree")
    dist = tmp_path / "dist"
    argv = args(tree, tmp_path / "cache", dist)
    assert main(argv) == 0
    wheel = dist / WHEEL
    attested = [wheel.name + ".cdx.json", wheel.name + ".provenance.json"]
    assert sorted(p.name for p in dist.iterdir()) == sorted([MANIFEST, wheel.name, *attested])
    manifest = _manifest(dist)
    assert manifest["kind"] == "wheel"
    assert manifest["artifacts"] == [
        {
            "name": wheel.name,
            "size": wheel.stat().st_size,
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        }
    ]
    assert {"fetch", "environment", "configure", "compile", "package"} <= set(manifest["stages"])
    assert manifest["ninja"]["edges_total"] == 4  # three objects and the link
    assert manifest["env"]["PYTORCH_BUILD_VERSION"] == "2.5.1+cpu"
    assert manifest["cmake_cache"]["CMAKE_C_COMPILER"] == manifest["env"]["CC"]
    assert "sha256" in capsys.readouterr().out
    assert tree.joinpath("build").exists() is False  # the user's tree is never built in

    key, public = key_pair(tmp_path)  # signing does not change the plan: the same build
    assert main([*argv, "--sign-key", str(key)]) == 0  # again: nothing left to compile
    again = _manifest(dist)
    assert again["ninja"]["edges_total"] == 0
    assert "configure" not in again["stages"]
    signed = [*attested, wheel.name + ".provenance.dsse.json"]
    assert sorted(p.name for p in dist.iterdir()) == sorted([wheel.name, MANIFEST, *signed])
    _attestations_hold(wheel, dist / MANIFEST, public)
    _rebuilt_identical(dist / MANIFEST, tmp_path / "again", capsys)


def _attestations_hold(wheel: Path, manifest: Path, public: Path) -> None:
    """The attest step's SBOM is valid CycloneDX 1.6 and every check of verify passes, the
    signature with the public key included."""
    sbom = wheel.with_name(wheel.name + ".cdx.json").read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(sbom) is None
    checks = attestation_checks(wheel, json.loads(manifest.read_text()), public)
    assert [(c.name, c.ok) for c in checks] == [
        ("SBOM ↔ wheel", True),
        ("provenance ↔ wheel", True),
        ("provenance ↔ manifest", True),
        ("provenance signature", True),
    ]


def _rebuilt_identical(manifest: Path, again: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """torchsmith rebuild: the recorded plan built cold in another cache root (another
    workspace path, an empty compiler cache) gives the same wheel, byte for byte."""
    code = main(["rebuild", str(manifest), "--cache-root", str(again), "--no-verify"])
    said = capsys.readouterr().out
    assert code == 0, said
    assert f"identical: {WHEEL}" in " ".join(said.split())


def test_a_compile_error_names_stage_line_and_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path / "tree", broken=True)
    assert main(args(tree, tmp_path / "cache", tmp_path / "dist")) == 10
    err = capsys.readouterr().err
    assert "stage 'compile' failed" in err
    assert "b.c:1:" in err and "error" in err
    assert "ninja: build stopped" not in err.split("relevant lines:")[1].split("full log:")[0]
    assert "logs/compile.log" in err
    assert not (tmp_path / "dist").exists()


def test_a_wheel_that_fails_verification_is_not_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path / "user-tree")
    dist = tmp_path / "dist"
    code = main(args(tree, tmp_path / "cache", dist, verify=True))
    err = capsys.readouterr().err
    assert code in {11, 12}, err  # VerifyError / InspectError: the fake wheel holds no torch
    assert "Traceback" not in err
    assert not list(dist.glob("*.whl")) if dist.exists() else True
