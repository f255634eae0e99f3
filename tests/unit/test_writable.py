"""Issue 28 item 5: every output or cache directory the user names is checked once, up front,
with a clear error (trial C11, E14, S20) instead of an internal error at the step that writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import HostError, UsageError
from torchsmith.spec import BuildSpec
from torchsmith.workspace import check_cache_root
from torchsmith.writable import check_build_paths, writable_dir


def test_a_missing_directory_is_made(tmp_path: Path) -> None:
    assert writable_dir(tmp_path / "a" / "b", "-o", "fix").is_dir()


def test_a_file_is_named_as_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match=r"f is a file, not a directory") as caught:
        writable_dir(tmp_path / "f" / "sub", "--output-dir", "give a directory")
    assert caught.value.hint == "give a directory"


def test_an_unwritable_place_says_so(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--cache-dir /proc/nope/x: cannot make or write"):
        writable_dir(Path("/proc/nope/x"), "--cache-dir", "fix")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ({"output_dir": "/proc/nope"}, "the output directory"),  # S20
        ({"cache": {"dir": "/proc/nope"}}, "the compiler cache directory"),  # C11
    ],
)
def test_build_checks_the_named_directories_up_front(
    tmp_path: Path, spec: dict[str, object], said: str
) -> None:
    with pytest.raises(UsageError, match=said):
        built = BuildSpec.model_validate(spec)
        check_build_paths(built.output_dir, built.cache.dir, tmp_path / "cache")


def test_build_names_a_bad_cache_root_as_preflight_does(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("x")
    with pytest.raises(
        HostError, match=r"the cache root \(--cache-root or TORCHSMITH_CACHE_ROOT\)"
    ):
        check_build_paths("dist", None, tmp_path / "root")


def test_build_checks_the_good_ones_and_leaves_no_empty_output_dir(tmp_path: Path) -> None:
    """The output directory is checked by making it, then removed again (with its new
    parents): a build that fails later leaves no empty dist/ behind; the cache root stays."""
    spec = BuildSpec.model_validate({"output_dir": str(tmp_path / "out" / "dist")})
    check_build_paths(spec.output_dir, str(tmp_path / "cc"), tmp_path / "cache")
    assert (tmp_path / "cache").is_dir()
    assert not (tmp_path / "out").exists() and not (tmp_path / "cc").exists()


def test_an_existing_output_dir_is_kept(tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    check_build_paths(str(tmp_path / "dist"), None, tmp_path / "cache")
    assert (tmp_path / "dist").is_dir() and list((tmp_path / "dist").iterdir()) == []


def test_a_cache_root_that_is_a_file_is_a_host_error(tmp_path: Path) -> None:
    """E14: TORCHSMITH_CACHE_ROOT=/proc/x source fetch was FileNotFoundError, exit 70."""
    (tmp_path / "root").write_text("x")
    with pytest.raises(HostError, match=r"the cache root .*is a file"):
        check_cache_root(tmp_path / "root")
    with pytest.raises(HostError, match="cannot make or write"):
        check_cache_root(Path("/proc/x"))


@pytest.mark.parametrize("where", ["/proc/ctx", "FILE"])
def test_image_context_dir_is_refused_as_the_flag(tmp_path: Path, where: str) -> None:
    """I21 (-o /proc/ctx), I22 (-o REGULAR_FILE): the words image uses for -o."""
    (tmp_path / "FILE").write_text("x")
    path = tmp_path / where if where == "FILE" else Path(where)
    with pytest.raises(UsageError, match=r"^-o/--context-dir "):
        writable_dir(path, "-o/--context-dir", "give -o a directory you can write")
