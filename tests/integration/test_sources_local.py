"""tarball, path and bundle providers on a real tree: a subset of Debian's pytorch 1.13.1 DFSG
source (cmake/, c10/, third_party/ with its empty submodule directories, setup.py, version.txt),
taken from the debian provider's cached tree. About 5 s after the Debian fetch is cached."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.resources import require_tool
from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources import fetch_source
from torchsmith.sources.bundle import TREE, write_bundle
from torchsmith.sources.debian import fetch_debian
from torchsmith.sources.hashing import tree_manifest

pytestmark = [
    pytest.mark.network,  # only the first run: the Debian tree is cached afterwards
]


@pytest.fixture(autouse=True)
def _needs_apt_get() -> None:
    require_tool("apt-get", "a Debian/Ubuntu host")


SUBSET = ("setup.py", "version.txt", "CMakeLists.txt", "cmake", "c10", "third_party")


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
    }  # fmt: skip


@pytest.fixture(scope="module")
def real_subset(source_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    plan = SourcePlan(kind="debian", location="pytorch", ref="1.13.1+dfsg-4", reason="test")
    tree = fetch_debian(
        plan, source_cache, {"PATH": os.environ.get("PATH", "")}, runner=HOST, check_deps=False
    )
    dest = tmp_path_factory.mktemp("subset") / "pytorch-1.13.1"
    dest.mkdir()
    for name in SUBSET:
        src = tree.root / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True)
        else:
            shutil.copy2(src, dest / name)
    return dest


def _plan(kind: str, location: str, **extra: object) -> SourcePlan:
    return SourcePlan.model_validate(
        {"kind": kind, "location": location, "ref": "", "reason": "test", **extra}
    )


def test_tarball_from_a_file_checks_and_records_sha256(real_subset: Path, tmp_path: Path) -> None:
    archive = tmp_path / "pytorch-1.13.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(real_subset, arcname="pytorch-1.13.1")
    digest = sha256_file(archive)
    cache = tmp_path / "cache"
    tree = fetch_source(
        _plan("tarball", f"{archive}#sha256={digest}"), cache, _env(tmp_path), runner=HOST
    )
    assert (tree.identity, tree.version, tree.kind) == (digest, "1.13.1", "tarball")
    assert tree.root.name == "pytorch-1.13.1"
    assert tree_manifest(tree.root) == tree_manifest(real_subset)
    assert (tree.root / "third_party" / "pocketfft").is_dir()
    with pytest.raises(SourceError, match="not the expected"):
        fetch_source(
            _plan("tarball", f"{archive}#sha256={'0' * 64}"), cache, _env(tmp_path), runner=HOST
        )
    # unpinned, the location has its own cache entry (a pinned one is keyed by its sha256,
    # sources/tarball.entry_name): its first fetch is recorded, later bytes must match it
    fetch_source(_plan("tarball", str(archive)), cache, _env(tmp_path), runner=HOST)
    with tarfile.open(archive, "w:gz") as tar:  # the same location, other bytes
        tar.add(real_subset / "setup.py", arcname="pytorch-1.13.1/setup.py")
    with pytest.raises(SourceError, match="changed since torchsmith first fetched it"):
        fetch_source(_plan("tarball", str(archive)), cache, _env(tmp_path), runner=HOST)


def test_path_source_never_modifies_the_users_tree(real_subset: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "pytorch"
    shutil.copytree(real_subset, user, symlinks=True)
    env = _env(tmp_path)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "import"]):
        subprocess.run(["git", "-C", str(user), *args], env=env, check=True)
    (user / "build").mkdir()
    (user / "build" / "CMakeCache.txt").write_text("old build\n")
    before = tree_manifest(user)
    mtimes = {p: p.stat().st_mtime_ns for p in user.rglob("*")}
    tree = fetch_source(_plan("path", str(user)), tmp_path / "cache", env, runner=HOST)
    # "build preparation": what the fixes step does to the tree it is given
    (tree.root / "cmake" / "Dependencies.cmake").write_text("patched\n")
    (tree.root / "build").mkdir()
    assert tree.owned
    assert tree.root != user
    assert not (tree.root / "build" / "CMakeCache.txt").exists()  # build/ is left out
    assert tree_manifest(user) == before
    assert {p: p.stat().st_mtime_ns for p in user.rglob("*")} == mtimes
    head = subprocess.run(["git", "-C", str(user), "rev-parse", "HEAD"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    assert tree.identity == head
    assert tree.details["dirty"] == "false"


def test_path_identity_marks_a_dirty_tree_and_in_place_is_the_tree_itself(
    real_subset: Path, tmp_path: Path
) -> None:
    user = tmp_path / "user"
    shutil.copytree(real_subset, user, symlinks=True)
    env = _env(tmp_path)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "import"]):
        subprocess.run(["git", "-C", str(user), *args], env=env, check=True)
    clean = fetch_source(
        _plan("path", str(user), in_place=True), tmp_path / "cache", env, runner=HOST
    )
    (user / "new_file.py").write_text("# untracked\n")
    untracked = fetch_source(
        _plan("path", str(user), in_place=True), tmp_path / "cache", env, runner=HOST
    )
    (user / "setup.py").write_text("# local change\n")
    tree = fetch_source(
        _plan("path", str(user), in_place=True), tmp_path / "cache", env, runner=HOST
    )
    assert tree.root == user
    assert not tree.owned
    assert "+dirty." not in clean.identity
    assert untracked.identity.startswith(clean.identity + "+dirty.")
    assert tree.identity.startswith(clean.identity + "+dirty.")
    assert len({clean.identity, untracked.identity, tree.identity}) == 3
    assert not (tmp_path / "cache" / "path").exists()


def test_bundle_round_trip_verifies_every_hash(real_subset: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    source = fetch_source(_plan("path", str(real_subset)), tmp_path / "cache", env, runner=HOST)
    out = tmp_path / "pytorch-1.13.1.bundle.tar.gz"
    digest = write_bundle(source, out)
    assert digest == sha256_file(out)
    offline = fetch_source(
        _plan("bundle", f"{out}#sha256={digest}"), tmp_path / "airgap", env, runner=HOST
    )
    # a path tree's identity cannot be checked against the KB: recorded as the bundle's claim
    assert (offline.kind, offline.identity) == ("bundle", f"claimed:{source.identity}")
    assert offline.details["bundle_pinned"] == "sha256"
    assert offline.version == "1.13.0a0"
    assert tree_manifest(offline.root) == tree_manifest(source.root)
    assert (offline.root / "third_party" / "pocketfft").is_dir()  # empty dirs survive
    assert offline.details["original_kind"] == "path"


def test_a_tampered_bundle_is_refused(real_subset: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    source = fetch_source(_plan("path", str(real_subset)), tmp_path / "cache", env, runner=HOST)
    good = tmp_path / "good.tar.gz"
    write_bundle(source, good)
    unpacked = tmp_path / "unpacked"
    with tarfile.open(good) as tar:
        tar.extractall(unpacked, filter="data")
    (unpacked / "source" / "setup.py").write_text("evil\n")
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        for entry in sorted(unpacked.iterdir()):
            tar.add(entry, arcname=entry.name)
    with pytest.raises(SourceError, match="does not match its manifest"):
        fetch_source(_plan("bundle", str(bad)), tmp_path / "airgap", env, runner=HOST)
    assert not (tmp_path / "airgap" / "bundle").exists() or not any(
        (p / TREE).exists() for p in (tmp_path / "airgap" / "bundle").iterdir() if p.is_dir()
    )


def test_cli_bundle_then_offline_fetch(
    real_subset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from torchsmith.cli import main

    common = ["--torch", "1.13.1", "--cpu", "--json"]
    out = tmp_path / "dir with spaces" / "src.bundle.tar.gz"
    out.parent.mkdir()
    code = main(["source", "bundle", *common, "--source", f"path:{real_subset}",
                 "--cache-root", str(tmp_path / "online"), "-o", str(out)])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    written = json.loads(captured.out)  # stdout is only the JSON (progress went to stderr)
    assert "bundle: " in captured.err
    assert written["bundle_sha256"] == sha256_file(out)
    assert written["source"] == f"bundle:{out}#sha256={written['bundle_sha256']}"
    code = main(["source", "fetch", *common, "--quiet", "--source", written["source"],
                 "--cache-root", str(tmp_path / "offline")])  # fmt: skip
    assert code == 0
    fetched = json.loads(capsys.readouterr().out)
    assert fetched["kind"] == "bundle"
    assert fetched["identity"] == f"claimed:{written['identity']}"
    assert fetched["root"].startswith(str(tmp_path / "offline" / "sources" / "bundle"))
    code = main(["source", "bundle", *common[:-1], "--quiet", "--source", f"path:{real_subset}",
                 "--cache-root", str(tmp_path / "online"), "-o", str(out)])  # fmt: skip
    assert code == 0
    said = capsys.readouterr().out
    assert said.endswith(f"--source {shlex.quote(written['source'])}\n")  # the same bytes again


def test_tarball_from_a_url_with_a_stale_partial_download(
    real_subset: Path, tmp_path: Path
) -> None:
    import functools
    import http.server

    from torchsmith.sources.tarball import entry_name

    from .https_server import serve_https

    served = tmp_path / "www"
    served.mkdir()
    archive = served / "pytorch-1.13.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(real_subset / "c10", arcname="pytorch-1.13.1/c10")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    with serve_https(handler, tmp_path) as (port, ca):
        url = f"https://127.0.0.1:{port}/pytorch-1.13.1.tar.gz"
        env = {**_env(tmp_path), "CURL_CA_BUNDLE": str(ca)}
        cache = tmp_path / "cache"
        # a download cut earlier left a partial file; this server cannot resume (no ranges)
        tree = fetch_source(_plan("tarball", url), cache, env, runner=HOST)
        download = cache / "tarball" / entry_name(url, None) / "download"
        (download / "pytorch-1.13.1.tar.gz").unlink()
        (download / "pytorch-1.13.1.tar.gz.part").write_bytes(archive.read_bytes()[:1000])
        again = fetch_source(_plan("tarball", url), cache, env, runner=HOST)
    assert tree.identity == again.identity == sha256_file(archive)
    assert (again.root / "c10" / "CMakeLists.txt").is_file()
    assert not (download / "pytorch-1.13.1.tar.gz.part").exists()
