"""Issue 29: what makes two builds of one plan give the same bytes is planned, with reasons —
SOURCE_DATE_EPOCH from the source (a git commit's date, Debian's changelog) or the release's
recorded date, ar's deterministic mode for CMake's static
archives, and a note when no compiler cache makes the objects' paths relative."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith import kb
from torchsmith.errors import InternalError
from torchsmith.plan import resolve
from torchsmith.plan_model import EnvSetting
from torchsmith.planner.reproducible import (
    ZIP_EPOCH,
    EpochRule,
    build_epoch,
    date_epoch,
    epoch_rule,
    plan_epoch,
)
from torchsmith.spec_sources import resolve_spec

TARBALL = "tarball:https://example.invalid/pytorch-v2.6.0.tar.gz#sha256=" + "0" * 64


def _epoch(cli: dict[str, str], kbase: kb.KnowledgeBase | None = None) -> EnvSetting:
    plan = resolve(resolve_spec(cli=cli), kbase or kb.load(), ci_host())
    [epoch] = [e for e in plan.env if e.name == "SOURCE_DATE_EPOCH"]
    return epoch


def test_a_tarball_gets_the_release_date_from_the_kb() -> None:
    plan = resolve(
        resolve_spec(cli={"torch": "2.6.0", "accelerator": "cpu", "source": TARBALL}),
        kb.load(),
        ci_host(),
    )
    epoch = plan.env_dict()["SOURCE_DATE_EPOCH"]
    assert epoch == "1738108800" == str(date_epoch("2025-01-29"))
    reason = next(e.reason for e in plan.env if e.name == "SOURCE_DATE_EPOCH")
    assert "2025-01-29" in reason and "releases.toml" in reason
    assert "pypi.org/project/torch/2.6.0" in reason  # the date's own source
    assert plan_epoch(plan, None) == 1738108800  # no fetched record needed


def test_a_git_source_plans_the_fetched_commits_date() -> None:
    """Two commits of main get two epochs: the plan says how, the fetch step resolves it."""
    epoch = _epoch({"torch": "2.6.0", "accelerator": "cpu", "source": "git"})
    assert epoch.value == "commit-date"
    assert "git show -s --format=%ct" in epoch.reason and "two commits" in epoch.reason


def test_a_debian_source_plans_its_changelogs_date_else_the_release_date() -> None:
    epoch = _epoch({"torch": "1.13.1", "accelerator": "cpu", "source": "debian"})
    release = date_epoch(str(kb.load().release("1.13.1").date))
    assert epoch_rule(epoch.value) == EpochRule("debian-changelog", release)
    assert epoch.value == f"debian-changelog else {release}"
    assert "dpkg-parsechangelog -STimestamp" in epoch.reason and "releases.toml" in epoch.reason


def test_the_build_epoch_is_the_plans_number_or_the_fetched_sources() -> None:
    assert build_epoch("1738108800", {"epoch": 5}) == 1738108800
    assert build_epoch("commit-date", {"epoch": 1795780808}) == 1795780808
    assert build_epoch("debian-changelog else 7", {"epoch": 1744368318}) == 1744368318
    assert build_epoch(None, None) == ZIP_EPOCH  # a plan written before the variable
    with pytest.raises(InternalError, match="resolved when the source is fetched"):
        build_epoch("commit-date", {})
    with pytest.raises(InternalError, match="no epoch rule"):
        epoch_rule("yesterday")


def test_each_companion_plans_its_own_sources_epoch() -> None:
    """torchvision from git: its own commit's date; from Debian: its changelog's."""
    for source, value in (("git", "commit-date"), ("debian", "debian-changelog else 1738108800")):
        cli = {"torch": "2.6.0", "accelerator": "cpu", "companions": "torchvision",
               "source": source}  # fmt: skip
        plan = resolve(resolve_spec(cli=cli), kb.load(), ci_host())
        assert plan.companion_build is not None
        [comp] = plan.companion_build.builds
        [epoch] = [v for v in comp.env if v.name == "SOURCE_DATE_EPOCH"]
        assert epoch.value == value, source


def test_the_same_spec_plans_the_same_env_wherever_and_whenever(tmp_path: Path) -> None:
    """Nothing of the machine's clock or of where things go enters the plan's variables."""

    def at(where: str) -> dict[str, str]:
        return {"torch": "2.6.0", "accelerator": "cpu", "output_dir": str(tmp_path / where),
                "cache.dir": str(tmp_path / where / "ccache")}  # fmt: skip

    one = resolve(resolve_spec(cli=at("a")), kb.load(), ci_host())
    two = resolve(resolve_spec(cli=at("b")), kb.load(), ci_host())
    assert one.env == two.env and one.plan_hash() == two.plan_hash()
    assert not any(str(tmp_path) in e.value for e in one.env)


def test_a_release_without_a_date_gets_the_zip_floor() -> None:
    cli = {"torch": "2.5.1", "accelerator": "cpu", "source": TARBALL}
    plan = resolve(resolve_spec(cli=cli), mini_kb(), ci_host())
    env = plan.env_dict()
    assert env["SOURCE_DATE_EPOCH"] == str(ZIP_EPOCH)
    assert date_epoch("1970-01-02") == ZIP_EPOCH  # never before what a zip entry holds


def test_static_archives_in_ar_deterministic_mode() -> None:
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    env = {e.name: e for e in plan.env}
    assert env["CMAKE_CXX_ARCHIVE_CREATE"].value == "<CMAKE_AR> qcD <TARGET> <LINK_FLAGS> <OBJECTS>"
    assert env["CMAKE_C_ARCHIVE_FINISH"].value == "<CMAKE_RANLIB> -D <TARGET>"
    assert "setup_helpers/cmake.py" in env["CMAKE_C_ARCHIVE_APPEND"].reason


def test_the_build_trees_rpath_is_relative_to_origin() -> None:
    """The linker's build-id hashes the build tree's RUNPATH, and CMake's install pads its
    length into .dynstr: an absolute build directory changes every shared library."""
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    rpath = next(e for e in plan.env if e.name == "CMAKE_BUILD_RPATH_USE_ORIGIN")
    assert rpath.value == "ON"
    assert "build-id" in rpath.reason and "setup_helpers/cmake.py" in rpath.reason


def test_setup_pys_own_extensions_map_the_tree_in_their_debug_info() -> None:
    """torch._C's stub is compiled by setuptools with -g: its DWARF names the tree, mapped
    through CPPFLAGS (which CMake never reads); the plan writes the tree as a placeholder."""
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    flags = next(e for e in plan.env if e.name == "CPPFLAGS")
    assert flags.value == "-fdebug-prefix-map={tree}=."
    assert "setuptools" in flags.reason and "CMake never reads it" in flags.reason


def test_the_aten_config_names_no_workspace() -> None:
    """share/cmake/ATen/ATenConfig.cmake: the headers beside the file, not the install prefix
    (the workspace's torch/), through the plan's fixes."""
    spec = resolve_spec(cli={"torch": "1.13.1", "accelerator": "cpu", "source": "debian"})
    fixes = {f.id: f for f in resolve(spec, kb.load(), ci_host()).fixes}
    [edit] = fixes["aten-config-relative-include"].edits
    assert edit["path"] == "aten/src/ATen/CMakeLists.txt"
    assert "CMAKE_INSTALL_PREFIX" in edit["find"]
    assert "CMAKE_INSTALL_PREFIX" not in edit["replace"]
    assert '"\\${CMAKE_CURRENT_LIST_DIR}/../../../${AT_INSTALL_INCLUDE_DIR}"' in edit["replace"]


def test_legacy_releases_do_not_forward_cmake_variables() -> None:
    spec = resolve_spec(cli={"torch": "1.1.0", "accelerator": "cpu", "python": "3.7"})
    env = resolve(spec, mini_kb(), ci_host()).env_dict()
    assert "SOURCE_DATE_EPOCH" in env and not any("ARCHIVE" in k for k in env)
    assert "CMAKE_BUILD_RPATH_USE_ORIGIN" not in env and "CPPFLAGS" not in env


def test_no_compiler_cache_is_said_to_leave_workspace_paths() -> None:
    spec = resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu", "cache.kind": "none"})
    plan = resolve(spec, mini_kb(), ci_host())
    assert any("__FILE__" in w and "another workspace" in w for w in plan.warnings)
    cached = resolve(
        resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host()
    )
    assert not any("__FILE__" in w for w in cached.warnings)


def test_a_tree_in_no_repository_never_asks_the_one_around_the_workspace() -> None:
    """torch/version.py's git_version: git must not find the repository a cache root lies in."""
    debian = resolve_spec(cli={"torch": "1.13.1", "accelerator": "cpu", "source": "debian"})
    env = {e.name: e for e in resolve(debian, kb.load(), ci_host()).env}
    assert env["GIT_DIR"].value == "/dev/null"
    assert "generate_torch_version.py" in env["GIT_DIR"].reason
    git = resolve_spec(cli={"torch": "1.13.1", "accelerator": "cpu", "source": "git"})
    assert "GIT_DIR" not in resolve(git, kb.load(), ci_host()).env_dict()  # its own .git


def test_the_plan_text_says_how_the_epoch_is_got(capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.report.plan_view import print_plan

    spec = resolve_spec(cli={"torch": "2.6.0", "accelerator": "cpu", "source": "git"})
    print_plan(resolve(spec, kb.load(), ci_host()))
    lines = capsys.readouterr().out.splitlines()  # rows too wide for a table: one per line
    at = lines.index("  SOURCE_DATE_EPOCH")
    assert lines[at + 1] == "    value: commit-date"
    assert lines[at + 2].startswith("    why: the committer date of the commit fetched (git show")
