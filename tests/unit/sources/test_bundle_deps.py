"""A Debian source is bundled without its build dependencies on the packing machine; the
machine that builds from the bundle checks them (round-3 trial X10)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from torchsmith.errors import HostError, SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources import fetch_source
from torchsmith.sources import hostdeps as hostdeps_mod
from torchsmith.sources.base import BUILD_DEPENDS, SourceTree
from torchsmith.sources.bundle import NOT_RECORDED, write_bundle


def _debian_tree(tmp_path: Path) -> SourceTree:
    root = tmp_path / "tree"
    root.mkdir(exist_ok=True)
    (root / "version.txt").write_text("1.13.0a0\n")
    details = {"package": "pytorch", BUILD_DEPENDS: "libopenblas-dev libprotobuf-dev"}
    return SourceTree("debian", root, "d" * 64, "1.13.1", True, details)


def test_fetch_source_skips_the_host_deps_check_for_a_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def provider(plan: SourcePlan, root: Path, env: object, **kw: Any) -> SourceTree:
        seen.append(kw)
        return dataclasses.replace(_debian_tree(tmp_path), details={})

    monkeypatch.setattr("torchsmith.sources.debian.fetch_debian", provider)
    monkeypatch.setattr("torchsmith.sources.check_identity", lambda tree, kb: NOT_RECORDED)
    plan = SourcePlan(kind="debian", location="x", ref="1.13.1+dfsg-4", reason="t")
    fetch_source(plan, tmp_path / "c", {}, runner=HOST, install_deps=True, check_deps=False)
    fetch_source(plan, tmp_path / "c", {}, runner=HOST)
    assert seen[0]["check_deps"] is False and "check_deps" not in seen[1]


def test_the_building_machine_checks_the_bundled_debian_deps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "b.tar.gz"
    write_bundle(_debian_tree(tmp_path), out)
    monkeypatch.setattr(hostdeps_mod, "missing_packages", lambda pkgs, env, runner: list(pkgs))
    monkeypatch.setattr("torchsmith.sources.bundle.check_identity", lambda t, k: NOT_RECORDED)
    monkeypatch.setattr("torchsmith.sources.check_identity", lambda tree, kb: NOT_RECORDED)
    plan = SourcePlan(kind="bundle", location=str(out), ref=str(out), reason="t")
    with pytest.raises(HostError, match=r"2 Debian package.*libopenblas-dev libprotobuf-dev"):
        fetch_source(plan, tmp_path / "airgap", {}, runner=HOST)


@pytest.mark.parametrize("name", ["-oDPkg::Pre-Invoke::=touch /tmp/x", "--allow-downgrades", "A"])
def test_a_forged_build_dependency_never_reaches_apt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    tree = _debian_tree(tmp_path)
    tree = dataclasses.replace(tree, details={**tree.details, BUILD_DEPENDS: f"cmake {name}"})
    out = tmp_path / "b.tar.gz"
    write_bundle(tree, out)
    asked: list[list[str]] = []
    monkeypatch.setattr(hostdeps_mod, "missing_packages", lambda pkgs, env: asked.append(pkgs))
    monkeypatch.setattr("torchsmith.sources.bundle.check_identity", lambda t, k: NOT_RECORDED)
    monkeypatch.setattr("torchsmith.sources.check_identity", lambda tree, kb: NOT_RECORDED)
    plan = SourcePlan(kind="bundle", location=str(out), ref=str(out), reason="t")
    with pytest.raises(SourceError, match="not a Debian package name"):
        fetch_source(plan, tmp_path / "airgap", {}, install_deps=True, runner=HOST)
    assert asked == []
