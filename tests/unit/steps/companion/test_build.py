"""A companion's fetch and compile steps resume from their markers: a finished step is not
run again for the same tree, and a compile of another tree (the source changed) runs again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.steps.companion.rig import companion_rig
from torchsmith.errors import InternalError
from torchsmith.steps.companion import build


def fetched(
    rig_tmp: Path, identity: str = "orig-sha256:aa", epoch: int | None = 1671062400
) -> dict[str, object]:
    tree = rig_tmp / "sources" / "vision"
    tree.mkdir(parents=True, exist_ok=True)
    return {"root": str(tree), "identity": identity, **({"epoch": epoch} if epoch else {})}


def test_a_fetched_tree_is_taken_from_the_marker(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    rig.ctx.workspace.mark_done("torchvision-fetch", fetched(tmp_path))
    build.run_fetch(rig.ctx, rig.state, "torchvision")
    assert rig.state.companions is not None
    assert rig.state.companions.of("torchvision").source["identity"] == "orig-sha256:aa"
    assert rig.executor.ran == [] and "fetched by an earlier run" in rig.reporter.lines[-1]
    assert rig.state.companions.of("torchvision").source["epoch"] == 1671062400  # as recorded


def test_a_tree_fetched_before_its_epoch_was_recorded_gets_it_once(tmp_path: Path) -> None:
    """A marker of an older run: the epoch is resolved (Debian's orig without its packaging
    tarball: the plan's fallback, torch 1.13.1's date) and recorded for the next resume."""
    rig = companion_rig(tmp_path)
    rig.ctx.workspace.mark_done("torchvision-fetch", fetched(tmp_path, epoch=None))
    build.run_fetch(rig.ctx, rig.state, "torchvision")
    marker = json.loads(rig.ctx.workspace.marker("torchvision-fetch").read_text())
    assert marker["epoch"] == 1671062400 and "fallback" in marker["epoch_from"]
    assert rig.executor.ran == []


def test_a_compiled_wheel_of_the_same_tree_is_not_compiled_again(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    assert rig.state.companions is not None
    made = rig.state.companions.of("torchvision")
    made.source = fetched(tmp_path)
    wheel = tmp_path / "earlier.whl"
    wheel.write_bytes(b"")
    cache = {"kind": "ccache", "hits": 43, "misses": 0, "hit_rate": 1.0}
    rig.ctx.workspace.mark_done(
        "torchvision-compile", {**made.source, "wheel": str(wheel), "compiler_cache": cache}
    )
    build.run_compile(rig.ctx, rig.state, "torchvision")
    assert (made.built, made.wheel, made.compiler_cache) == (wheel, wheel, cache)
    assert rig.executor.ran == []


def test_another_tree_is_compiled_and_recorded(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    assert rig.state.companions is not None
    made = rig.state.companions.of("torchvision")
    made.source = fetched(tmp_path, "orig-sha256:bb")
    (Path(made.source["root"]) / "setup.py").write_text("")
    old = tmp_path / "earlier.whl"
    old.write_bytes(b"")
    rig.ctx.workspace.mark_done("torchvision-compile", {**fetched(tmp_path), "wheel": str(old)})
    build.run_compile(rig.ctx, rig.state, "torchvision")
    [pip] = [argv for argv in rig.executor.ran if "wheel" in argv]
    assert pip[1:7] == ["-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps"]
    marker = json.loads(rig.ctx.workspace.marker("torchvision-compile").read_text())
    assert marker["identity"] == "orig-sha256:bb" and marker["wheel"] == str(made.built)
    assert made.built is not None and made.built.parent.name == "wheels"


def test_compile_before_fetch_is_an_ordering_bug(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    with pytest.raises(InternalError, match="before the companion's 'fetch' step"):
        build.run_compile(rig.ctx, rig.state, "torchvision")


def test_a_companion_is_built_with_the_plans_epoch_and_no_repository(tmp_path: Path) -> None:
    """Issue 29: torchvision from Debian's orig gets the epoch its fetch resolved (its
    changelog's date, else the plan's fallback: torch 1.13.1's release date) and GIT_DIR (its
    tree is no repository)."""
    rig = companion_rig(tmp_path)
    assert rig.ctx.plan.companion_build is not None
    [comp] = rig.ctx.plan.companion_build.builds
    env = build.reproducible(rig.ctx, comp, fetched(tmp_path))
    assert env == {"SOURCE_DATE_EPOCH": "1671062400", "GIT_DIR": "/dev/null"}  # 2022-12-15
    changelog = build.reproducible(rig.ctx, comp, {"epoch": 1744368318})  # its changelog's
    assert changelog["SOURCE_DATE_EPOCH"] == "1744368318"
