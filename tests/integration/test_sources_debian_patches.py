"""Debian's own patch series, for real: pytorch 2.6.0+dfsg-7 (trixie), whose packaging tarball
is on the mirror. 27.4 MB download once (cached under $TORCHSMITH_TEST_CACHE/sources), then
dpkg-source -x and 17 patches with dry runs: about 10 s when the download is cached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.resources import require_tool
from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources.debian import fetch_debian
from torchsmith.sources.patches import apply_series, read_series


@pytest.fixture(autouse=True)
def _needs_dpkg_source() -> None:
    require_tool("dpkg-source", "apt-get install dpkg-dev (scripts/setup-system-deps)")


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}


@pytest.mark.network
@pytest.mark.slow
def test_debian_2_6_tree_has_all_17_patches_applied(source_cache: Path) -> None:
    plan = SourcePlan(kind="debian", location="pytorch", ref="2.6.0+dfsg-7", reason="test")
    tree = fetch_debian(plan, source_cache, _env(), runner=HOST, check_deps=False)
    assert tree.version == "2.6.0"
    assert tree.details["patches"] == "17 Debian patch(es) applied from debian/patches/series"
    assert len(read_series(tree.root)) == 17
    deps = (tree.root / "cmake" / "Dependencies.cmake").read_text()
    assert "find_library(HTTPLIB_LIBRARY cpp-httplib REQUIRED)" in deps  # 1050-use-system-httplib
    assert (tree.root / "debian" / "pocketfft").exists()


def test_a_patch_that_does_not_apply_stops_before_touching_the_tree(tmp_path: Path) -> None:
    (tmp_path / "debian" / "patches").mkdir(parents=True)
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "debian" / "patches" / "good.patch").write_text(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    )
    (tmp_path / "debian" / "patches" / "bad.patch").write_text(
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n uno\n-dos\n+DOS\n"
    )
    (tmp_path / "debian" / "patches" / "series").write_text("good.patch\nbad.patch\n")
    with pytest.raises(SourceError, match=r"bad\.patch does not apply \(dry run\)"):
        apply_series(tmp_path, _env(), runner=HOST)
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\n"  # good applied, bad left nothing
    assert not list(tmp_path.glob("a.txt.*"))  # no .rej/.orig left behind
