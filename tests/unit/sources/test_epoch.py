"""Issue 29: the epoch of a fetched source — a git commit's committer date, the top entry of
Debian's changelog (as dpkg-parsechangelog -STimestamp reads it), else the plan's fallback —
from recorded real output (tests/fixtures/sources/README.md)."""

from __future__ import annotations

import datetime as dt
import io
import subprocess
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from torchsmith.errors import InternalError, SourceError
from torchsmith.planner.reproducible import ZIP_EPOCH, EpochRule
from torchsmith.proc import Completed, LineCallback
from torchsmith.sources.epoch import (
    changelog_epoch,
    commit_time,
    source_epoch,
    tarball_changelog,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sources"
CHANGELOG = (FIXTURES / "changelog-pytorch-2.6.0+dfsg-7-top.txt").read_text(encoding="utf-8")
DPKG_TIMESTAMP = 1744368318
"""``dpkg-parsechangelog -STimestamp`` of that changelog (dpkg 1.21.22, recorded)."""
COMMIT = "d0829c5816fa42811bcdb9cd3eb3741ceb225e8e"


class GitShow:
    """A runner that answers ``git show`` with its recorded output."""

    def __init__(self) -> None:
        self.ran: list[list[str]] = []

    def run(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        log_path: Path | None = None,
        on_line: LineCallback | None = None,
        check: bool = True,
        stdin_text: str | None = None,
    ) -> Completed:
        self.ran.append([str(a) for a in argv])
        out = (FIXTURES / "git-show-ct.txt").read_text().splitlines()
        return Completed(tuple(self.ran[-1]), 0, 0.0, log_path, tuple(out))

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.CompletedProcess[str]:
        raise AssertionError("no query expected")


def test_the_changelog_date_is_dpkg_parsechangelogs_timestamp() -> None:
    found = changelog_epoch(CHANGELOG, "debian/changelog")
    assert found.epoch == DPKG_TIMESTAMP
    assert found.epoch == dt.datetime(2025, 4, 11, 10, 45, 18, tzinfo=dt.timezone.utc).timestamp()
    assert found.epoch_from == (
        "debian/changelog: pytorch 2.6.0+dfsg-7, Fri, 11 Apr 2025 06:45:18 -0400"
    )  # the top entry, not the one of 2.6.0+dfsg-6 below it


@pytest.mark.parametrize(
    "text",
    ["", "pytorch (2.6.0+dfsg-7) unstable; urgency=medium\n\n  * x\n",
     CHANGELOG.replace("Fri, 11 Apr 2025 06:45:18 -0400", "someday")],
)  # fmt: skip
def test_a_changelog_without_a_dated_entry_is_refused_by_name(text: str) -> None:
    with pytest.raises(SourceError, match=r"debian/changelog: .*SOURCE_DATE_EPOCH"):
        changelog_epoch(text, "debian/changelog")


def test_the_commit_time_is_git_shows_ct() -> None:
    assert commit_time((FIXTURES / "git-show-ct.txt").read_text(), COMMIT) == 1795780808
    with pytest.raises(SourceError, match="not a time"):
        commit_time("fatal: bad object", COMMIT)


def test_a_git_source_asks_git_for_the_fetched_commits_date(tmp_path: Path) -> None:
    runner = GitShow()
    found = source_epoch(EpochRule("commit-date"), tmp_path, {"commit": COMMIT}, {}, runner)
    assert found.epoch == 1795780808 and COMMIT in found.epoch_from
    [argv] = runner.ran
    assert argv[-4:] == ["show", "-s", "--format=%ct", COMMIT]
    assert argv[argv.index("-C") + 1] == str(tmp_path)
    with pytest.raises(InternalError, match="no git tree"):
        source_epoch(EpochRule("commit-date"), tmp_path, {}, {}, runner)


def test_a_debian_tree_gives_its_changelogs_date(tmp_path: Path) -> None:
    (tmp_path / "debian").mkdir()
    (tmp_path / "debian" / "changelog").write_text(CHANGELOG, encoding="utf-8")
    found = source_epoch(EpochRule("debian-changelog", 1738108800), tmp_path, {}, {}, GitShow())
    assert found.epoch == DPKG_TIMESTAMP


def _packaging_tarball(path: Path) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        data = CHANGELOG.encode()
        member = tarfile.TarInfo("debian/changelog")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return path


def test_an_orig_tree_reads_the_packaging_tarballs_changelog(tmp_path: Path) -> None:
    tarball = _packaging_tarball(tmp_path / "pytorch-vision_0.21.0-3.debian.tar.xz")
    details = {"debian_tarball": str(tarball)}
    found = source_epoch(EpochRule("debian-changelog", 1), tmp_path, details, {}, GitShow())
    assert found.epoch == DPKG_TIMESTAMP
    assert found.epoch_from.startswith("pytorch-vision_0.21.0-3.debian.tar.xz:debian/changelog")


def test_without_a_changelog_the_plans_fallback_is_said(tmp_path: Path) -> None:
    """pytorch 1.13.1+dfsg-4: the mirror serves no packaging tarball (404)."""
    found = source_epoch(EpochRule("debian-changelog", 1671062400), tmp_path, {}, {}, GitShow())
    assert found.epoch == 1671062400
    assert "fallback" in found.epoch_from and "packaging tarball" in found.epoch_from
    empty = tmp_path / "empty.tar.xz"
    with tarfile.open(empty, "w:xz"):
        pass
    assert tarball_changelog(empty) is None


def test_a_fixed_epoch_is_the_plans_and_runs_nothing(tmp_path: Path) -> None:
    runner = GitShow()
    found = source_epoch(EpochRule("fixed", 1738108800), tmp_path, {"commit": COMMIT}, {}, runner)
    assert (found.epoch, runner.ran) == (1738108800, [])
    assert source_epoch(EpochRule("fixed", ZIP_EPOCH), tmp_path, {}, {}, runner).epoch == ZIP_EPOCH
