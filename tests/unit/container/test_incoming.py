"""The build inside a container publishes into a fresh incoming directory, not the mounted
output directory (security review f1b4bec N10: ``--output-dir ~`` mounted the whole home
read-write into a root container); the torchsmith outside moves the artifacts out by the
publish rules."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.unit.publish.test_conda_channel import _package
from torchsmith.container.incoming import PREFIX, discard, make_incoming, move_out
from torchsmith.errors import HostError

WHEEL = "torch-2.6.0-cp311-cp311-linux_x86_64.whl"
MANIFEST = "torch-2.6.0-cp311-cp311-linux_x86_64.manifest.json"


def _published(into: Path, plan: str, body: bytes = b"wheel bytes") -> None:
    (into / WHEEL).write_bytes(body)
    (into / MANIFEST).write_text(json.dumps({"plan_hash": plan, "artifacts": []}))


def test_the_artifacts_move_out_and_the_directory_goes(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    into = make_incoming(out)
    assert into.parent == out and into.name.startswith(PREFIX)
    assert stat.S_IMODE(into.stat().st_mode) == 0o700 and list(into.iterdir()) == []
    _published(into, "aaaa")
    assert move_out(into, out) == [WHEEL, MANIFEST]
    assert (out / WHEEL).read_bytes() == b"wheel bytes"
    assert json.loads((out / MANIFEST).read_text())["plan_hash"] == "aaaa"
    assert not into.exists()


def test_an_artifact_of_another_plan_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    first = make_incoming(out)
    _published(first, "aaaa")
    move_out(first, out)
    second = make_incoming(out)
    _published(second, "bbbb", b"other bytes")
    with pytest.raises(HostError, match="made by plan aaaa"):
        move_out(second, out)
    assert (out / WHEEL).read_bytes() == b"wheel bytes" and not second.exists()


def test_conda_packages_join_the_channel(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    into = make_incoming(out)
    (into / "conda-channel" / "linux-64").mkdir(parents=True)
    package = _package(tmp_path, "linux-64")
    package.rename(into / "conda-channel" / "linux-64" / package.name)
    assert move_out(into, out) == [package.name]
    assert (out / "conda-channel" / "linux-64" / package.name).is_file()
    assert (out / "conda-channel" / "linux-64" / "repodata.json").is_file()


def test_only_an_incoming_directory_is_discarded(tmp_path: Path) -> None:
    keep = tmp_path / "dist"
    keep.mkdir()
    discard(keep)
    assert keep.exists()


def test_the_container_build_mounts_the_incoming_directory_not_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """container/working.build's wiring, with the engine, the plan and the build inside
    replaced: the session mounts the cache root and a fresh incoming directory, the inner build
    is told to publish there, and what it published lands in the output directory."""
    import contextlib
    from types import SimpleNamespace

    from torchsmith.container import working as bc

    seen: dict[str, object] = {}

    def run_inside(ex: object, session: object, run: object, **kw: object) -> dict[str, str]:
        into = kw["into"]
        seen["mounts"] = session.mounts  # type: ignore[attr-defined]
        seen["inner"] = bc.inner_argv(into, run.cache_root, run.verify)  # type: ignore[arg-type,attr-defined]
        _published(into, "aaaa")  # type: ignore[arg-type]
        return {}

    monkeypatch.setattr(bc, "make_executor", lambda *a: contextlib.nullcontext(
        SimpleNamespace(run=lambda *a, **k: None)))  # fmt: skip
    monkeypatch.setattr(bc, "_start", lambda *a: "ctr")
    monkeypatch.setattr(bc, "_run_inside", run_inside)
    monkeypatch.setattr(bc, "_record", lambda *a: {})
    monkeypatch.setattr(bc, "_finish", lambda record, out, start: sorted(os.listdir(out)))
    out = tmp_path / "home"
    rs = SimpleNamespace(spec=SimpleNamespace(output_dir=str(out)))
    w = SimpleNamespace(engine=SimpleNamespace(
        probe=SimpleNamespace(path="/usr/bin/buildah", describe=lambda: "buildah"), reason="r",
        storage=SimpleNamespace(flags=lambda: [])), plan=SimpleNamespace(
        engine="buildah", base=SimpleNamespace(image="img", reason="r")))  # fmt: skip
    listed = bc.build(w, rs, tmp_path / "cache", pull="never", verify=True,  # type: ignore[arg-type]
                      say=SimpleNamespace(message=print))  # fmt: skip
    assert listed == [MANIFEST, WHEEL]  # moved out; the incoming directory is gone
    mounts = seen["mounts"]
    assert out not in mounts and mounts[0] == tmp_path / "cache"  # type: ignore[operator,index]
    into = mounts[1]  # type: ignore[index]
    assert into.parent == out and into.name.startswith(PREFIX)  # type: ignore[union-attr]
    inner = seen["inner"]
    assert inner[inner.index("--output-dir") + 1] == str(into)  # type: ignore[union-attr,index]
