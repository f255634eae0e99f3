"""Offline bundles cannot vouch for themselves (security review M1), are reproducible, and a
malformed manifest is a clean SourceError (no subprocess: trees are written here)."""

from __future__ import annotations

import dataclasses
import json
import os
import tarfile
from pathlib import Path

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from tests.unit.sources.archive_maker import ArchiveMaker
from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.plan import resolve
from torchsmith.plan_model import SourcePlan
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.proc import HOST
from torchsmith.sources import fetch_source, owned
from torchsmith.sources.base import SourceTree
from torchsmith.sources.bundle import TREE, bundle_manifest, bundle_spec, write_bundle
from torchsmith.sources.bundle_format import MANIFEST
from torchsmith.sources.bundle_write import BUNDLE_MTIME
from torchsmith.sources.hashing import manifest_digest, tree_manifest
from torchsmith.spec_sources import resolve_spec, source_problems

FORGED = "f" * 40
KB_COMMIT = "c" * 40  # what a test knowledge base records for 1.13.1 (not a real commit)


def _tree(tmp_path: Path, identity: str = FORGED, kind: str = "git") -> SourceTree:
    root = tmp_path / "tree"
    (root / "third_party" / "empty").mkdir(parents=True)
    (root / "setup.py").write_text("import os\nos.system('echo pwned')\n")
    (root / "version.txt").write_text("1.13.0a0\n")
    (root / "tools").mkdir()
    (root / "tools" / "run.sh").write_text("#!/bin/sh\n")
    (root / "tools" / "run.sh").chmod(0o775)
    (root / "docs").symlink_to("tools")
    os.link(root / "setup.py", root / "setup_copy.py")  # hard links are bundled as files
    return SourceTree(kind, root, identity, "1.13.1", False, {"tag": "v1.13.1"})  # type: ignore[arg-type]


def _plan(location: str) -> SourcePlan:
    return SourcePlan(kind="bundle", location=location, ref=location, reason="test")


def _fetch(tmp_path: Path, location: str, lines: list[str] | None = None) -> SourceTree:
    on_line = None if lines is None else lines.append
    return fetch_source(_plan(location), tmp_path / "airgap", {}, runner=HOST, on_line=on_line)


def _kb_with_commit(monkeypatch: pytest.MonkeyPatch, commit: str | None) -> None:
    real = kb.load()
    releases = tuple(
        r.model_copy(update={"commit": commit}) if r.torch == "1.13.1" else r for r in real.releases
    )
    monkeypatch.setattr(kb, "load", lambda: dataclasses.replace(real, releases=releases))


def test_a_forged_bundle_does_not_set_its_own_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M1: a bundle claiming any commit used to be recorded as that commit."""
    _kb_with_commit(monkeypatch, None)
    out = tmp_path / "forged.tar.gz"
    write_bundle(_tree(tmp_path), out)
    lines: list[str] = []
    tree = _fetch(tmp_path, str(out), lines)
    assert tree.identity == f"claimed:{FORGED}"
    assert tree.details["bundle_pinned"] == "no"
    assert any(line.startswith("WARNING: bundle") and "not pinned" in line for line in lines)


def test_a_pinned_bundle_is_checked_against_its_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kb_with_commit(monkeypatch, None)
    out = tmp_path / "b.tar.gz"
    digest = write_bundle(_tree(tmp_path), out)
    lines: list[str] = []
    tree = _fetch(tmp_path, f"{out}#sha256={digest}", lines)
    assert tree.details["bundle_pinned"] == "sha256"
    assert tree.identity == f"claimed:{FORGED}"  # the KB records no commit for it: a claim
    assert not any("WARNING" in line for line in lines)
    assert tree_manifest(tree.root) == tree_manifest(tmp_path / "tree")
    with pytest.raises(SourceError, match="not the 0000"):
        _fetch(tmp_path, f"{out}#sha256={'0' * 64}")


def test_a_git_bundle_is_checked_against_the_kb_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kb_with_commit(monkeypatch, KB_COMMIT)
    good = tmp_path / "good.tar.gz"
    digest = write_bundle(_tree(tmp_path / "a", identity=KB_COMMIT), good)
    pinned = _fetch(tmp_path, f"{good}#sha256={digest}")
    assert pinned.identity == KB_COMMIT
    assert "matches the knowledge base (commit)" in pinned.details["bundle_identity"]
    assert pinned.details["identity_check"] == pinned.details["bundle_identity"]
    assert _fetch(tmp_path, str(good)).identity == f"claimed:{KB_COMMIT}"  # not pinned
    forged = tmp_path / "forged.tar.gz"
    digest = write_bundle(_tree(tmp_path / "b"), forged)
    with pytest.raises(SourceError, match=f"claims a source it is not.*expected {KB_COMMIT}"):
        _fetch(tmp_path, f"{forged}#sha256={digest}")


def _handmade(tmp_path: Path, manifest: object, *members: tuple[str, bytes | str]) -> Path:
    arc = ArchiveMaker().add(MANIFEST, content=json.dumps(manifest).encode())
    for name, value in members:
        if isinstance(value, str):
            arc.add(name, symlink_to=value)
        else:
            arc.add(name, content=value)
    return arc.write(tmp_path / "handmade.tar.gz", "w:gz")


def _manifest(files: dict[str, str], **overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "format": 1, "kind": "git", "version": "1.13.1", "identity": FORGED, "details": {},
        "files": files, "files_sha256": manifest_digest(files),
    }  # fmt: skip
    return base | overrides


def test_a_member_beside_source_and_a_link_out_of_it_are_refused(tmp_path: Path) -> None:
    """M1's second half: ``source/setup.py -> ../payload.py`` reached a file outside source/."""
    files = {"setup.py": "0" * 64}
    bundle = _handmade(tmp_path, _manifest(files), ("source/setup.py", b"x"), ("payload.py", b"x"))
    with pytest.raises(SourceError, match=r"'payload\.py' is outside"):
        _fetch(tmp_path, str(bundle))
    files = {"setup.py": "link:../payload.py"}
    bundle = _handmade(tmp_path, _manifest(files), ("source/setup.py", "../payload.py"))
    with pytest.raises(SourceError, match="leaves source/"):
        _fetch(tmp_path, str(bundle))


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ([1, 2], "a JSON list, not an object"),
        ({"format": 1}, "missing or mistyped: kind, version, identity, details, files"),
        (_manifest({}) | {"details": None}, "missing or mistyped: details"),
        (_manifest({"a": 1}), "'files' must map names to strings"),  # type: ignore[dict-item]
        (_manifest({"a": "0" * 64}, files_sha256="0" * 64), "'files_sha256' is not the sha256"),
        ({"format": 7}, "unsupported bundle format 7"),
    ],
)
def test_a_malformed_manifest_is_a_clean_error(
    tmp_path: Path, manifest: object, message: str
) -> None:
    bundle = _handmade(tmp_path, manifest, ("source/a", b"x"))
    with pytest.raises(SourceError) as info:
        _fetch(tmp_path, str(bundle))
    assert message in info.value.message


def test_a_manifest_that_is_not_json_is_a_clean_error(tmp_path: Path) -> None:
    bundle = ArchiveMaker().add(MANIFEST, content=b"\xff[").write(tmp_path / "b.tar")
    with pytest.raises(SourceError, match="not JSON"):
        _fetch(tmp_path, str(bundle))


def test_the_same_tree_bundled_twice_is_byte_identical(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    first = write_bundle(tree, tmp_path / "one.tar.gz")
    for path in tree.root.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (1_000_000_000, 1_000_000_000))
    (tree.root / "setup.py").chmod(0o664)
    second = write_bundle(tree, tmp_path / "two.tar.gz")
    assert first == second == sha256_file(tmp_path / "two.tar.gz")
    header = (tmp_path / "one.tar.gz").read_bytes()[:10]
    assert header[3] & 0x08 == 0  # no file name (FNAME flag)
    assert header[4:8] == b"\0\0\0\0"  # no time
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == [MANIFEST, *sorted(f"source/{n}" for n in bundle_manifest(tree)["files"])]
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {
        (0, 0, "", "", BUNDLE_MTIME)
    }
    modes = {m.name: m.mode for m in members if not m.issym()}
    assert modes["source/tools/run.sh"] == modes["source/tools"] == 0o755
    assert modes["source/setup.py"] == modes["source/setup_copy.py"] == 0o644
    assert not any(m.islnk() for m in members)


def test_bundle_spec_pins_the_file() -> None:
    assert (
        bundle_spec(Path("/b/x y.tar.gz"), "ab" * 32) == f"bundle:/b/x y.tar.gz#sha256={'ab' * 32}"
    )


def test_the_spec_accepts_a_pinned_bundle_and_checks_its_file(tmp_path: Path) -> None:
    bundle = tmp_path / "b.tar.gz"
    bundle.write_bytes(b"")
    assert source_problems(f"bundle:{bundle}#sha256={'ab' * 32}") == []
    (problem,) = source_problems(f"bundle:{tmp_path / 'missing.tar.gz'}#sha256={'ab' * 32}")
    assert "missing.tar.gz does not exist" in problem.what
    assert "#sha256=HEX" in problem.fix


def test_the_plan_warns_about_an_unpinned_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "b.tar.gz"
    bundle.write_bytes(b"")
    pinned = f"bundle:{bundle}#sha256={'ab' * 32}"
    for source, warned in ((f"bundle:{bundle}", True), (pinned, False)):
        spec = resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu", "source": source})
        built = resolve(spec, mini_kb(), ci_host(), can=KNOWLEDGE_ONLY)
        assert built.source.location == source.removeprefix("bundle:")
        assert any("is not pinned" in w for w in built.warnings) is warned


def test_a_tree_unpacked_before_members_were_checked_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kb_with_commit(monkeypatch, None)
    out = tmp_path / "b.tar.gz"
    digest = write_bundle(_tree(tmp_path), out)
    tree = _fetch(tmp_path, f"{out}#sha256={digest}")
    entry = tree.root.parents[2]
    old = owned.claim(entry / "tree", {"staging_for": "tree"})  # the old layout's name
    (old / "src" / "source").mkdir(parents=True)
    (old / "src" / "source" / "setup.py").symlink_to("../payload.py")
    owned.remove_owned(entry / TREE)
    again = _fetch(tmp_path, f"{out}#sha256={digest}")
    assert again.root == entry / TREE / "src" / "source"
    assert not (again.root / "setup.py").is_symlink()


def test_unpacking_holds_the_cache_entrys_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Security review M4: one writer per cache entry; another run cannot unpack beside it."""
    from torchsmith import lock
    from torchsmith.errors import HostError
    from torchsmith.sources import bundle as bundle_mod

    out = tmp_path / "b.tar.gz"
    write_bundle(_tree(tmp_path, kind="path"), out)
    unpack = bundle_mod._unpack
    seen: list[str] = []

    def while_locked(archive: Path, dest: Path, on_line: object) -> None:
        with pytest.raises(HostError, match="in use"):
            lock.acquire(dest, "a second writer", 0.0)
        seen.append("refused")
        unpack(archive, dest, on_line)  # type: ignore[arg-type]

    monkeypatch.setattr(bundle_mod, "_unpack", while_locked)
    _fetch(tmp_path, str(out))
    assert seen == ["refused"]
