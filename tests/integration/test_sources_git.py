"""The git provider against local repositories made in the test: a superproject with a
submodule whose URL says https://github.com/..., served from a local "mirror" through
``url.<mirror>.insteadOf`` (file://, or HTTPS with a password on 127.0.0.1). Through a mirror a
tag must be pinned: these tests pin ``v1.0`` to its commit through ``recorded_commit`` (the
stand-in for the knowledge base). Runs in a few seconds, no network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.planner.reproducible import EpochRule
from torchsmith.proc import HOST
from torchsmith.sources import fetch_source
from torchsmith.sources.base import SourceTree
from torchsmith.sources.epoch import commit_epoch, source_epoch
from torchsmith.sources.git import fetch_git

pytestmark = []


def _git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
        # local file:// submodules are refused by default since git 2.38.1
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always",
    }  # fmt: skip


def _git(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


class Upstream:
    """acme/super (tag v1.0) with submodule third_party/sub -> https://github.com/acme/sub.git;
    bare copies of both under ``mirror/acme/``."""

    def __init__(self, root: Path) -> None:
        self.env = _git_env(root / "home")
        (root / "home").mkdir()
        self.mirror = root / "mirror"
        sub, sup = root / "work-sub", root / "work-super"
        for repo in (sub, sup):
            repo.mkdir()
            _git(self.env, repo, "init", "-q", "-b", "main")
        (sub / "sub.txt").write_text("from the submodule\n")
        _git(self.env, sub, "add", ".")
        _git(self.env, sub, "commit", "-q", "-m", "sub")
        self.sub_commit = _git(self.env, sub, "rev-parse", "HEAD")
        (sup / "setup.py").write_text("print('super')\n")
        _git(self.env, sup, "add", ".")
        _git(self.env, sup, "commit", "-q", "-m", "first")
        _git(self.env, sup, "submodule", "add", "-q", f"file://{sub}", "third_party/sub")
        _git(self.env, sup, "config", "-f", ".gitmodules", "submodule.third_party/sub.url",
             "https://github.com/acme/sub.git")  # fmt: skip
        _git(self.env, sup, "commit", "-q", "-am", "add submodule")
        _git(self.env, sup, "tag", "v1.0")
        self.tag_commit = _git(self.env, sup, "rev-parse", "HEAD")
        (sup / "later.txt").write_text("after the tag\n")
        _git(self.env, sup, "add", ".")
        _git(self.env, sup, "commit", "-q", "-m", "after tag")
        self.work_sub, self.work_super = sub, sup
        self.publish("super")
        self.publish("sub")

    def publish(self, name: str) -> None:
        src = self.work_sub if name == "sub" else self.work_super
        dest = self.mirror / "acme" / f"{name}.git"
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(src), str(dest)], env=self.env,
                       check=True)  # fmt: skip


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return Upstream(tmp_path)


def _plan(upstream: Upstream, ref: str = "v1.0") -> SourcePlan:
    return SourcePlan(
        kind="git",
        location="https://github.com/acme/super.git",
        ref=ref,
        git_mirror=f"file://{upstream.mirror}",
        reason="test",
    )


def _fetch(
    upstream: Upstream,
    cache: Path,
    plan: SourcePlan | None = None,
    pin: str | None = None,
    lines: list[str] | None = None,
) -> SourceTree:
    """fetch_git with ``v1.0`` pinned to ``pin`` (default: the tag's real commit)."""
    commit = pin or upstream.tag_commit
    return fetch_git(
        plan or _plan(upstream),
        cache,
        upstream.env,
        runner=HOST,
        on_line=None if lines is None else lines.append,
        recorded_commit=lambda _plan: commit,
    )


def test_clone_by_tag_through_the_mirror_with_submodules(
    upstream: Upstream, tmp_path: Path
) -> None:
    tree = _fetch(upstream, tmp_path / "cache", lines=[])
    assert tree.kind == "git"
    assert tree.identity == upstream.tag_commit
    assert tree.version == "1.0"
    assert (tree.root / "setup.py").is_file()
    assert not (tree.root / "later.txt").exists()  # the tag, not the branch head
    assert (tree.root / "third_party/sub/sub.txt").read_text() == "from the submodule\n"
    assert tree.details["submodule:third_party/sub"] == upstream.sub_commit
    assert tree.details["fetched_from"] == f"file://{upstream.mirror}/acme/super.git"
    assert tree.details["pinned_by"] == "knowledge base"
    assert _git(upstream.env, tree.root, "rev-parse", "--is-shallow-repository") == "true"
    # the mirror went in through GIT_CONFIG_* variables: no git config was written anywhere
    assert not (tmp_path / "home" / ".gitconfig").exists()
    assert "insteadof" not in _git(upstream.env, tree.root, "config", "--list", "--local").lower()


def test_a_second_fetch_reuses_the_clone_without_running_git(
    upstream: Upstream, tmp_path: Path
) -> None:
    first = _fetch(upstream, tmp_path / "cache")
    lines: list[str] = []
    again = _fetch(upstream, tmp_path / "cache", lines=lines)
    assert again == first
    assert lines == []


def test_fetch_by_commit_sha(upstream: Upstream, tmp_path: Path) -> None:
    tree = fetch_source(
        _plan(upstream, upstream.tag_commit), tmp_path / "cache", upstream.env, runner=HOST
    )
    assert tree.identity == upstream.tag_commit
    assert (tree.root / "third_party/sub/sub.txt").is_file()


def test_an_interrupted_clone_continues_where_it_stopped(
    upstream: Upstream, tmp_path: Path
) -> None:
    sub_mirror = upstream.mirror / "acme" / "sub.git"
    sub_mirror.rename(tmp_path / "sub-away.git")  # the network "cuts" before the submodule
    with pytest.raises(SourceError, match="submodule update failed"):
        _fetch(upstream, tmp_path / "cache")
    [partial] = [p for p in (tmp_path / "cache" / "git").iterdir() if p.is_dir()]
    marker = partial / "tree" / ".git" / "kept-by-resume"
    marker.write_text("the partial clone is reused, not deleted")
    (tmp_path / "sub-away.git").rename(sub_mirror)  # the network is back
    tree = _fetch(upstream, tmp_path / "cache")
    assert marker.is_file()
    assert tree.root == partial / "tree"
    assert (tree.root / "third_party/sub/sub.txt").is_file()
    assert tree.identity == upstream.tag_commit


def test_an_unknown_tag_is_a_source_error(upstream: Upstream, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"git fetch of v9\.9 failed"):
        _fetch(upstream, tmp_path / "cache", _plan(upstream, "v9.9"))


# -- pinning: a mirror never decides on its own what a tag is ---------------------------------
def test_an_unrecorded_tag_through_a_mirror_is_refused_before_fetching(
    upstream: Upstream, tmp_path: Path
) -> None:
    with pytest.raises(SourceError, match="no commit recorded in the knowledge base"):
        fetch_source(
            _plan(upstream), tmp_path / "cache", upstream.env, runner=HOST
        )  # the real KB: no acme
    assert not (tmp_path / "cache" / "git").exists()


def test_a_tag_the_mirror_moved_is_refused_before_checkout(
    upstream: Upstream, tmp_path: Path
) -> None:
    moved = upstream.mirror / "acme" / "super.git"
    _git(upstream.env, moved, "tag", "-f", "v1.0", "main")  # the mirror re-points the tag
    forged = _git(upstream.env, moved, "rev-parse", "v1.0^{commit}")
    assert forged != upstream.tag_commit
    with pytest.raises(SourceError) as info:
        _fetch(upstream, tmp_path / "cache")
    assert f"is commit {forged}, but the knowledge base pins {upstream.tag_commit}" in str(
        info.value.message
    )
    [dest] = [p for p in (tmp_path / "cache" / "git").iterdir() if p.is_dir()]
    assert not (dest / "tree" / "setup.py").exists()  # nothing was checked out
    assert '"complete"' not in (dest / "torchsmith-source.json").read_text()


def test_a_cached_clone_of_another_commit_is_refused(upstream: Upstream, tmp_path: Path) -> None:
    _fetch(upstream, tmp_path / "cache")
    with pytest.raises(SourceError, match="the cached clone"):
        _fetch(upstream, tmp_path / "cache", pin="0" * 40)


@pytest.mark.parametrize("scheme", ["http", "git"])
def test_a_plain_text_mirror_is_refused_before_git_runs(
    upstream: Upstream, tmp_path: Path, scheme: str
) -> None:
    plan = _plan(upstream).model_copy(update={"git_mirror": f"{scheme}://127.0.0.1:9/m"})
    with pytest.raises(SourceError, match="plain-text"):
        _fetch(upstream, tmp_path / "cache", plan)
    assert not (tmp_path / "cache" / "git").exists()


def test_a_forged_pytorch_release_tag_is_refused_against_the_real_kb(
    upstream: Upstream, tmp_path: Path
) -> None:
    """The mirror serves a pytorch/pytorch whose v2.5.1 is some other commit."""
    forged = upstream.mirror / "pytorch" / "pytorch.git"
    forged.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.work_super), str(forged)],
                   env=upstream.env, check=True)  # fmt: skip
    _git(upstream.env, forged, "tag", "v2.5.1", "main")
    plan = SourcePlan(
        kind="git",
        location="https://github.com/pytorch/pytorch.git",
        ref="v2.5.1",
        git_mirror=f"file://{upstream.mirror}",
        reason="test",
    )
    spack = "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"  # the KB's v2.5.1 commit
    with pytest.raises(SourceError, match=f"knowledge base pins {spack}"):
        fetch_source(plan, tmp_path / "cache", upstream.env, runner=HOST)


def test_an_unpinned_tag_is_fetched_with_a_warning_naming_the_commit(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Security review f1b4bec M2: a tag no commit pins (the KB's newest releases) is taken
    from github.com only, loudly, and the manifest records what came and that nothing pinned it
    (here the clone the mirror filled, reused without a mirror: its submodules point at github)."""
    _fetch(upstream, tmp_path / "cache")
    lines: list[str] = []
    tree = fetch_git(
        _plan(upstream).model_copy(update={"git_mirror": None}), tmp_path / "cache",
        upstream.env, runner=HOST, on_line=lines.append, recorded_commit=lambda _plan: None,
    )  # fmt: skip
    assert tree.identity == upstream.tag_commit
    assert tree.details["pinned_by"] == "nothing" and tree.details["commit"] == tree.identity
    assert lines == [
        "git: WARNING: v1.0 is not pinned (no commit recorded in the knowledge base): fetched "
        f"commit {upstream.tag_commit}, unverified, recorded in the manifest (pinned_by: nothing)"
    ]


def test_the_epoch_of_a_fetched_commit_is_its_committer_date(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Issue 29: SOURCE_DATE_EPOCH of a git source is ``git show -s --format=%ct`` of the
    commit fetched, answered by the shallow clone itself; another commit, another date."""
    tree = _fetch(upstream, tmp_path / "cache")
    found = source_epoch(EpochRule("commit-date"), tree.root, tree.details, upstream.env, HOST)
    shown = _git(upstream.env, upstream.work_super, "show", "-s", "--format=%ct", "v1.0")
    assert found.epoch == int(shown) and upstream.tag_commit in found.epoch_from
    dated = {**upstream.env, "GIT_COMMITTER_DATE": "@1744368318 +0000"}
    _git(dated, upstream.work_super, "commit", "-q", "--allow-empty", "-m", "dated")
    later = _git(upstream.env, upstream.work_super, "rev-parse", "HEAD")
    assert commit_epoch(upstream.work_super, later, upstream.env, HOST).epoch == 1744368318
