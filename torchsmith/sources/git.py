"""The ``git`` source provider: the release tag with its submodules, shallow where safe.

The clone is made with ``git init`` + ``git fetch`` rather than ``git clone``, so that a fetch cut
by the network leaves the repository in place and the same call continues it (``git clone``
deletes its directory on failure). Submodules are fetched ``--depth 1`` in parallel; when a
server refuses a shallow fetch of a pinned commit, they are fetched in full.

A mirror is used through per-command configuration (``url.<mirror>.insteadOf=https://github.com/``)
given in the ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` environment
variables, which git passes on to the commands it starts for submodules; the user's git
configuration is never edited. Credentials in an https mirror URL never reach a command line
(``/proc/<pid>/cmdline`` is world-readable, a process's environment is not): they are taken out
of the URL (git would pass the rewritten URL to ``git-remote-https`` as an argument) and handed
to git by a credential helper that reads them from the environment.

Pinning: a tag must resolve to the commit the knowledge base records for it (a commit ref pins
itself); a mismatch is refused before anything is checked out. Through a mirror, a tag the KB has
no commit for is refused too: the mirror would be the only witness of what the tag is. Mirrors
speaking plain-text protocols (``http://``, ``git://``) are refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from torchsmith import kb
from torchsmith.errors import SourceError, ToolError
from torchsmith.mirror_url import mirror_refusal
from torchsmith.plan_model import SourcePlan
from torchsmith.redact import redact_url
from torchsmith.runner import Completed, LineCallback, Runner
from torchsmith.sources import owned
from torchsmith.sources.base import SourceTree

GITHUB = "https://github.com/"
PYTORCH_REPO = "pytorch/pytorch"
SUBMODULE_JOBS = 4
_SHA = re.compile(r"^[0-9a-f]{40}$")
_STATUS = re.compile(r"^[ +\-U]?([0-9a-f]{40,64}) (\S+)")
# Abort a stalled transfer (a cut network) instead of hanging: < 1 kB/s for 60 s.
_STALL = ("http.lowSpeedLimit=1000", "http.lowSpeedTime=60")
# git runs it as `sh -c '<this> get'`: the secret is read from the environment, never argv.
CREDENTIAL_HELPER = (
    '!f() { test "$1" = get || return 0; printf "username=%s\\npassword=%s\\n" '
    '"$TORCHSMITH_GIT_USERNAME" "$TORCHSMITH_GIT_PASSWORD"; }; f'
)


def check_mirror(mirror: str) -> None:
    """Refuse a mirror URL git would fetch over a plain-text or unknown transport."""
    refusal = mirror_refusal(mirror)
    if refusal is not None:
        raise SourceError(*refusal)


def split_credentials(mirror: str) -> tuple[str, dict[str, str]]:
    """(``mirror`` without user-info, {username, password}) for an https URL that has them."""
    parts = urlsplit(mirror)
    if parts.scheme.lower() != "https" or "@" not in parts.netloc:
        return mirror, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    bare = urlunsplit(parts._replace(netloc=host))
    return bare, {"username": unquote(user), "password": unquote(password)}


def mirror_config(mirror: str | None, prefix: str = GITHUB) -> list[tuple[str, str]]:
    """git configuration (key, value) that makes every ``prefix`` URL go to ``mirror``. URL
    credentials are left out: git would put the rewritten URL into the argv of its
    ``git-remote-https`` helper; :data:`CREDENTIAL_HELPER` gives them to git instead."""
    if not mirror:
        return []
    bare, credentials = split_credentials(mirror)
    base = bare if bare.endswith("/") else bare + "/"
    pairs = [(f"url.{base}.insteadOf", prefix)]
    if credentials:
        parts = urlsplit(bare)
        context = f"credential.{parts.scheme}://{parts.netloc}"
        # "" first: no other helper of the user's is asked, or told to store the password
        pairs += [(f"{context}.helper", ""), (f"{context}.helper", CREDENTIAL_HELPER)]
    return pairs


def mirror_env(env: Mapping[str, str], mirror: str | None) -> dict[str, str]:
    """``env`` for git through ``mirror``: the configuration in ``GIT_CONFIG_*`` and the URL's
    credentials in variables only :data:`CREDENTIAL_HELPER` reads (a process's environment is
    private to its user; its command line is not)."""
    out = config_env(env, mirror_config(mirror))
    credentials = split_credentials(mirror)[1] if mirror else {}
    if credentials:
        out |= {
            "TORCHSMITH_GIT_USERNAME": credentials["username"],
            "TORCHSMITH_GIT_PASSWORD": credentials["password"],
            "GIT_TERMINAL_PROMPT": "0",
        }
    return out


def config_env(env: Mapping[str, str], pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``env`` plus ``pairs`` as ``GIT_CONFIG_KEY_n``/``VALUE_n`` after those already in it."""
    out = dict(env)
    try:
        first = int(env.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        raise SourceError(
            f"GIT_CONFIG_COUNT={env['GIT_CONFIG_COUNT']!r} is not a number",
            "unset GIT_CONFIG_COUNT or fix it",
        ) from None
    for index, (key, value) in enumerate(pairs, start=first):
        out[f"GIT_CONFIG_KEY_{index}"], out[f"GIT_CONFIG_VALUE_{index}"] = key, value
    if pairs:
        out["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return out


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


# -- pinning ---------------------------------------------------------------------------------
def kb_commit(plan: SourcePlan) -> str | None:
    """The commit the knowledge base records for ``plan.ref`` of pytorch/pytorch, if any."""
    if plan.location.removeprefix(GITHUB).removesuffix(".git") != PYTORCH_REPO:
        return None
    return next((r.commit for r in kb.load().releases if r.tag == plan.ref), None)


def expected_commit(ref: str, recorded: str | None, mirror: str | None) -> str | None:
    """The commit ``ref`` must resolve to: itself when it is a commit, else the KB's record;
    None (unpinned) only without a mirror, which alone would vouch for the tag."""
    if _SHA.match(ref):
        return ref
    if recorded or not mirror:
        return recorded
    raise SourceError(
        f"{ref} has no commit recorded in the knowledge base, so the mirror "
        f"{redact_url(mirror)} would be the only witness of what it is",
        "through --git-mirror only pinned refs are fetched: give the commit (--torch <40-hex "
        "sha>), fetch from github.com without the mirror, or record the tag's commit "
        "(scripts/refresh_commits.py)",
    )


def unpinned_warning(ref: str, commit: str) -> str:
    """What a fetch of a ref no commit pins says (security review f1b4bec M2)."""
    return (
        f"WARNING: {ref} is not pinned (no commit recorded in the knowledge base): fetched commit "
        f"{commit}, unverified, recorded in the manifest (pinned_by: nothing)"
    )


def check_pin(ref: str, commit: str, expected: str | None, where: str) -> None:
    """Refuse ``commit`` (what ``ref`` resolved to in ``where``) unless it is ``expected``."""
    if expected is None or commit == expected:
        return
    pinned_by = "the ref itself" if ref == expected else "the knowledge base"
    raise SourceError(
        f"{ref} from {redact_url(where)} is commit {commit}, but {pinned_by} pins {expected}",
        "the tag was moved, or the mirror/network serves other history: use another mirror "
        "or none; refresh the knowledge base (scripts/refresh_commits.py) only if the release "
        "tag itself was re-pointed upstream",
    )


@dataclass(frozen=True)
class Git:
    """git commands in one repository; ``env`` carries the mirror configuration, and every
    line shown or put into an error has URL credentials redacted."""

    repo: Path
    env: Mapping[str, str]
    on_line: LineCallback | None
    runner: Runner

    def argv(self, *args: str) -> list[str]:
        stall = [x for opt in _STALL for x in ("-c", opt)]
        return ["git", *stall, "-C", str(self.repo), *args]

    def run(self, *args: str, check: bool = True) -> Completed:
        on_line = None if self.on_line is None else _redacting(self.on_line)
        try:
            return self.runner.run(self.argv(*args), env=self.env, on_line=on_line, check=check)
        except ToolError as exc:
            raise _redacted(exc) from None

    def out(self, *args: str) -> str:
        try:
            done = self.runner.run(self.argv(*args), env=self.env, check=True)
        except ToolError as exc:
            raise _redacted(exc) from None
        return "\n".join(done.tail).strip()


def _redacting(on_line: LineCallback) -> LineCallback:
    return lambda line: on_line(redact_url(line))


def _redacted(exc: ToolError) -> ToolError:
    return ToolError(
        redact_url(exc.message),
        redact_url(exc.hint),
        log_path=exc.log_path,
        excerpt=[redact_url(line) for line in exc.excerpt],
        returncode=exc.returncode,
    )


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


def _details(
    plan: SourcePlan, commit: str, subs: Mapping[str, str], expected: str | None
) -> dict[str, str]:
    details = {"url": plan.location, "ref": plan.ref, "commit": commit}
    details["pinned_by"] = (
        "nothing" if expected is None else "ref" if expected == plan.ref else "knowledge base"
    )
    if plan.git_mirror:
        details["mirror"] = redact_url(plan.git_mirror)
        details["fetched_from"] = redact_url(rewrite_url(plan.location, plan.git_mirror))
    details["submodules"] = str(len(subs))
    details |= {f"submodule:{path}": sha for path, sha in subs.items()}
    return details


def fetch_git(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    runner: Runner,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
    jobs: int = SUBMODULE_JOBS,
    recorded_commit: Callable[[SourcePlan], str | None] = kb_commit,
) -> SourceTree:
    """Clone (or continue cloning) ``plan.location`` at ``plan.ref`` with submodules; the ref
    must resolve to its pinned commit (``recorded_commit``: the knowledge base's record)."""
    del install_deps  # nothing to install for git
    if not plan.ref:
        raise SourceError("no git tag or commit given", "the plan names the tag, e.g. v2.5.1")
    if plan.git_mirror:
        check_mirror(plan.git_mirror)
    expected = expected_commit(plan.ref, recorded_commit(plan), plan.git_mirror)
    base = owned.claim(cache_root / "git", {"purpose": "git clones"})
    dest = owned.claim(base / cache_key(plan.location, plan.ref), {"url": plan.location})
    git = Git(dest / "tree", mirror_env(env, plan.git_mirror), on_line, runner)
    with owned.locked(dest, f"the git clone {dest.name}", on_line):  # one writer per clone
        info = owned.read_info(dest)
        if info.get("complete") and (dest / "tree").is_dir():
            commit, subs = info["commit"], dict(info.get("submodules", {}))
            check_pin(plan.ref, commit, expected, f"the cached clone {dest}")
        else:
            commit, subs = _clone(git, plan, expected, jobs)
            owned.update_info(dest, complete=True, commit=commit, submodules=subs)
    if expected is None:
        _say(on_line, unpinned_warning(plan.ref, commit))
    return SourceTree(
        kind="git",
        root=dest / "tree",
        identity=commit,
        version=plan.ref.removeprefix("v"),
        owned=True,
        details=_details(plan, commit, subs, expected),
    )


def _clone(
    git: Git, plan: SourcePlan, expected: str | None, jobs: int
) -> tuple[str, dict[str, str]]:
    _say(git.on_line, f"fetching {plan.location} {plan.ref} (shallow)")
    _init(git, plan.location)
    target = _fetch_ref(git, plan.ref)
    where = rewrite_url(plan.location, plan.git_mirror)
    check_pin(plan.ref, git.out("rev-parse", f"{target}^{{commit}}"), expected, where)
    commit = _checkout(git, target, plan.ref)
    _say(git.on_line, f"submodules ({jobs} parallel jobs)")
    _submodules(git, jobs)
    return commit, submodule_commits(git)
