"""Issue 29: what makes two builds of one plan give the same bytes is planned, with reasons —
SOURCE_DATE_EPOCH from the release's recorded date, ar's deterministic mode for CMake's static
archives, and a note when no compiler cache makes the objects' paths relative."""

from __future__ import annotations

from pathlib import Path

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith import kb
from torchsmith.plan import resolve
from torchsmith.planner.reproducible import ZIP_EPOCH, date_epoch
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.repair import plan_epoch


def test_the_epoch_is_the_release_date_from_the_kb() -> None:
    plan = resolve(resolve_spec(cli={"torch": "2.6.0", "accelerator": "cpu"}), kb.load(), ci_host())
    [epoch] = [e for e in plan.env if e.name == "SOURCE_DATE_EPOCH"]
    assert epoch.value == "1738108800" == str(date_epoch("2025-01-29"))
    assert "2025-01-29" in epoch.reason and "releases.toml" in epoch.reason
    assert "pypi.org/project/torch/2.6.0" in epoch.reason  # the date's own source
    assert plan_epoch(plan) == 1738108800


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
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    env = plan.env_dict()
    assert env["SOURCE_DATE_EPOCH"] == str(ZIP_EPOCH)
    assert date_epoch("1970-01-02") == ZIP_EPOCH  # never before what a zip entry holds


def test_static_archives_in_ar_deterministic_mode() -> None:
    plan = resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu"}), mini_kb(), ci_host())
    env = {e.name: e for e in plan.env}
    assert env["CMAKE_CXX_ARCHIVE_CREATE"].value == "<CMAKE_AR> qcD <TARGET> <LINK_FLAGS> <OBJECTS>"
    assert env["CMAKE_C_ARCHIVE_FINISH"].value == "<CMAKE_RANLIB> -D <TARGET>"
    assert "setup_helpers/cmake.py" in env["CMAKE_C_ARCHIVE_APPEND"].reason


def test_legacy_releases_do_not_forward_cmake_variables() -> None:
    spec = resolve_spec(cli={"torch": "1.1.0", "accelerator": "cpu", "python": "3.7"})
    env = resolve(spec, mini_kb(), ci_host()).env_dict()
    assert "SOURCE_DATE_EPOCH" in env and not any("ARCHIVE" in k for k in env)


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
