"""The ``git`` source provider: the release tag with its submodules, shallow where safe.

The clone is made with ``git init`` + ``git fetch`` rather than ``git clone``, so that a fetch cut
by the network leaves the repository in place and the same call continues it (``git clone``
deletes its directory on failure). Submodules are fetched ``--depth 1`` in parallel; when a
server refuses a shallow fetch of a pinned commit, they are fetched in full.

A mirror is used through per-command configuration
(``git -c url.<mirror>.insteadOf=https://github.com/``), which git passes on to the commands it
starts for submodules; the user's git configuration is never edited.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith import proc
from torchsmith.errors import SourceError, ToolError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import LineCallback
from torchsmith.sources import owned
from torchsmith.sources.base import SourceTree

GITHUB = "https://github.com/"
SUBMODULE_JOBS = 4
_SHA = re.compile(r"^[0-9a-f]{40}$")
_STATUS = re.compile(r"^[ +\-U]?([0-9a-f]{40,64}) (\S+)")
# Abort a stalled transfer (a cut network) instead of hanging: < 1 kB/s for 60 s.
_STALL = ("http.lowSpeedLimit=1000", "http.lowSpeedTime=60")


def mirror_config(mirror: str | None, prefix: str = GITHUB) -> list[str]:
    """``-c`` options that make every ``prefix`` URL go to ``mirror`` instead."""
    if not mirror:
        return []
    base = mirror if mirror.endswith("/") else mirror + "/"
    return ["-c", f"url.{base}.insteadOf={prefix}"]


def rewrite_url(url: str, mirror: str | None, prefix: str = GITHUB) -> str:
    """What git will fetch ``url`` from under :func:`mirror_config` (for messages/records)."""
    if not mirror or not url.startswith(prefix):
        return url
    base = mirror if mirror.endswith("/") else mirror + "/"
    return base + url[len(prefix) :]


def cache_key(url: str, ref: str) -> str:
    """A directory name for one URL and ref: readable tail plus a short hash."""
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1])
    digest = hashlib.sha256(f"{url}\n{ref}".encode()).hexdigest()[:12]
    return f"{tail.removesuffix('.git')}-{re.sub(r'[^A-Za-z0-9._-]+', '-', ref)}-{digest}"


@dataclass(frozen=True)
class Git:
    """git commands in one repository, with the mirror's configuration on every call."""

    repo: Path
    env: Mapping[str, str]
    config: tuple[str, ...]
    on_line: LineCallback | None

    def argv(self, *args: str) -> list[str]:
        stall = [x for opt in _STALL for x in ("-c", opt)]
        return ["git", *self.config, *stall, "-C", str(self.repo), *args]

    def run(self, *args: str, check: bool = True) -> proc.Completed:
        return proc.run(self.argv(*args), env=self.env, on_line=self.on_line, check=check)

    def out(self, *args: str) -> str:
        done = proc.run(self.argv(*args), env=self.env, check=True)
        return "\n".join(done.tail).strip()


def _say(on_line: LineCallback | None, text: str) -> None:
    if on_line is not None:
        on_line(f"git: {text}")


def _init(git: Git, url: str) -> None:
    if (git.repo / ".git").is_dir():
        git.run("remote", "set-url", "origin", url)
        return
    git.repo.mkdir(parents=True, exist_ok=True)
    git.run("init", "-q")
    git.run("remote", "add", "origin", url)


def _fetch_ref(git: Git, ref: str) -> str:
    """Fetch ``ref`` (tag or commit) shallowly, else in full; the ref to check out."""
    if _SHA.match(ref):
        target, refspec = ref, ref
    else:
        target, refspec = f"refs/tags/{ref}", f"+refs/tags/{ref}:refs/tags/{ref}"
    if git.run("fetch", "--depth", "1", "origin", refspec, check=False).returncode == 0:
        return target
    _say(git.on_line, f"shallow fetch of {ref} refused; fetching the full history")
    unshallow = ["--unshallow"] if (git.repo / ".git" / "shallow").exists() else []
    try:
        git.run("fetch", *unshallow, "--tags", "origin")
    except ToolError as exc:
        raise _fetch_failed(ref, " / ".join(exc.excerpt[-3:])) from exc
    if git.run("rev-parse", "--verify", "-q", f"{target}^{{commit}}", check=False).returncode:
        raise _fetch_failed(ref, "no such tag or commit in the repository")
    return target


def _fetch_failed(ref: str, why: str) -> SourceError:
    return SourceError(
        f"git fetch of {ref} failed: {why}",
        "check the URL, the tag and the network; run the same command again to "
        "continue (what was fetched is kept); --git-mirror URL uses a mirror",
    )


def _submodules(git: Git, jobs: int) -> None:
    if not (git.repo / ".gitmodules").is_file():
        return
    git.run("submodule", "sync", "--recursive")
    base = ["submodule", "update", "--init", "--recursive", "--jobs", str(jobs)]
    if git.run(*base, "--depth", "1", check=False).returncode == 0:
        return
    _say(git.on_line, "shallow submodule fetch failed; fetching the pinned commits in full")
    try:
        git.run(*base)
    except ToolError as exc:
        raise SourceError(
            f"git submodule update failed: {' / '.join(exc.excerpt[-3:])}",
            "run the same command again to continue (finished submodules are kept); "
            "--git-mirror URL uses a mirror for github.com",
        ) from exc


def submodule_commits(git: Git) -> dict[str, str]:
    """``path -> commit`` of every (recursive) submodule."""
    text = git.out("submodule", "status", "--recursive")
    return dict(_parse_status_line(line) for line in text.splitlines() if line.strip())


def _parse_status_line(line: str) -> tuple[str, str]:
    """`` 81e1…40 third_party/sub (heads/main)`` (or ``-``/``+``/``U`` first) -> (path, sha)."""
    match = _STATUS.match(line)
    if match is None:
        raise SourceError(f"cannot read git submodule status line {line!r}")
    return match[2], match[1]


def _checkout(git: Git, target: str, ref: str) -> str:
    git.run("-c", "advice.detachedHead=false", "checkout", "-q", "--force", "--detach", target)
    commit = git.out("rev-parse", "HEAD")
    wanted = git.out("rev-parse", f"{target}^{{commit}}")
    if commit != wanted:
        raise SourceError(f"checked out {commit}, but {ref} is {wanted}")
    return commit


def _details(plan: SourcePlan, commit: str, subs: Mapping[str, str]) -> dict[str, str]:
    details = {"url": plan.location, "ref": plan.ref, "commit": commit}
    if plan.git_mirror:
        details["mirror"] = plan.git_mirror
        details["fetched_from"] = rewrite_url(plan.location, plan.git_mirror)
    details["submodules"] = str(len(subs))
    details |= {f"submodule:{path}": sha for path, sha in subs.items()}
    return details


def fetch_git(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
    jobs: int = SUBMODULE_JOBS,
) -> SourceTree:
    """Clone (or continue cloning) ``plan.location`` at ``plan.ref`` with submodules."""
    del install_deps  # nothing to install for git
    if not plan.ref:
        raise SourceError("no git tag or commit given", "the plan names the tag, e.g. v2.5.1")
    base = owned.claim(cache_root / "git", {"purpose": "git clones"})
    dest = owned.claim(base / cache_key(plan.location, plan.ref), {"url": plan.location})
    info = owned.read_info(dest)
    git = Git(dest / "tree", env, tuple(mirror_config(plan.git_mirror)), on_line)
    if info.get("complete") and (dest / "tree").is_dir():
        commit, subs = info["commit"], dict(info.get("submodules", {}))
    else:
        commit, subs = _clone(git, plan, jobs)
        owned.update_info(dest, complete=True, commit=commit, submodules=subs)
    return SourceTree(
        kind="git",
        root=dest / "tree",
        identity=commit,
        version=plan.ref.removeprefix("v"),
        owned=True,
        details=_details(plan, commit, subs),
    )


def _clone(git: Git, plan: SourcePlan, jobs: int) -> tuple[str, dict[str, str]]:
    _say(git.on_line, f"fetching {plan.location} {plan.ref} (shallow)")
    _init(git, plan.location)
    commit = _checkout(git, _fetch_ref(git, plan.ref), plan.ref)
    _say(git.on_line, f"submodules ({jobs} parallel jobs)")
    _submodules(git, jobs)
    return commit, submodule_commits(git)
