"""The host probe's version cache (host/version_cache.py): a repeated probe starts no version
query for an executable that is the same file; a changed one is asked again."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from torchsmith.host import version_cache
from torchsmith.host._run import ProbeError, query
from torchsmith.host.compilers import CompilerCandidate, probe_compiler
from torchsmith.host.load import versions_file  # bound before the unit tier stubs it
from torchsmith.host.probe import probe_host
from torchsmith.host.pythons import probe_python
from torchsmith.host.version_cache import CachingRunner, VersionCache, read_entries
from torchsmith.runner import Completed

FAKE = b"\x7fELF fake:"  # an ELF executable, as far as the cache can tell, that prints its tail


class FakeRunner:
    """Answers a query as the fake executable would: the text after ``FAKE`` in the file (and
    for a Python, after it the version its ``lib/libpython3.so`` holds); records every call."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str | Path], **kw: Any) -> Completed:
        raise AssertionError("probes only capture")

    def capture(
        self, argv: Sequence[str | Path], *, env: Mapping[str, str], **kw: Any
    ) -> subprocess.CompletedProcess[str]:
        args = tuple(str(a) for a in argv)
        self.asked.append(args)
        data = Path(args[0]).read_bytes()
        if not data.startswith(FAKE) and not data.startswith(b"#!"):
            return subprocess.CompletedProcess(args, 1, "", "not a fake\n")
        text = data.split(b":", 1)[1].decode()
        lib = Path(os.path.realpath(args[0])).parent.parent / "lib" / "libpython3.so"
        text = lib.read_text() if lib.is_file() else text
        return subprocess.CompletedProcess(args, 0, text, "")


def fake_exe(path: Path, answer: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(FAKE + answer.encode())
    path.chmod(0o755)
    return path


def runner(tmp_path: Path) -> tuple[FakeRunner, CachingRunner]:
    fake = FakeRunner()
    return fake, CachingRunner(fake, VersionCache.read(tmp_path / "cache" / "versions.json"))


ENV = {"PATH": "/nonexistent"}


@pytest.fixture(autouse=True)
def _old_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes are written just now: taken as if 10 s old (one test keeps the real rule)."""
    monkeypatch.setattr(version_cache, "RACY_NS", -10 * 10**9)


def rewrite(path: Path, data: bytes) -> None:
    """Write ``data`` over ``path`` in place, its modification time put back, until its change
    time moved (the kernel's clock is coarse: the very same tick would not show)."""
    before = path.stat()
    while True:
        path.write_bytes(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        if path.stat().st_ctime_ns != before.st_ctime_ns:
            return


def test_a_file_changed_just_now_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(version_cache, "RACY_NS", 2 * 10**9)
    gcc = fake_exe(tmp_path / "bin" / "gcc", "12.2.0\n")
    fake, caching = runner(tmp_path)
    for _ in range(2):
        query([gcc, "-dumpfullversion"], ENV, caching, cacheable=True)
    assert len(fake.asked) == 2 and not caching.cache.dirty


def test_a_second_query_of_the_same_file_starts_nothing(tmp_path: Path) -> None:
    gcc = fake_exe(tmp_path / "bin" / "gcc", "12.2.0\n")
    fake, caching = runner(tmp_path)
    first = query([gcc, "-dumpfullversion"], ENV, caching, cacheable=True)
    again = query([gcc, "-dumpfullversion"], ENV, caching, cacheable=True)
    assert first == again == "12.2.0\n"
    assert fake.asked == [(str(gcc), "-dumpfullversion")]
    query([gcc, "--version"], ENV, caching, cacheable=True)  # another question: asked
    query([gcc, "-dumpfullversion"], ENV, caching)  # not said to be cacheable: asked
    assert len(fake.asked) == 3


def test_a_changed_compiler_is_probed_again(tmp_path: Path) -> None:
    """Replaced (a package upgrade: a new file), edited in place with the same size and its
    modification time put back (the change time tells), or a symlink pointed elsewhere."""
    bin_ = tmp_path / "bin"
    gcc, gxx = fake_exe(bin_ / "gcc", "12.2.0\n"), fake_exe(bin_ / "g++", "12.2.0\n")
    cand = CompilerCandidate("gcc", gcc, gxx)
    fake, caching = runner(tmp_path)
    assert probe_compiler(cand, ENV, caching)[0].version == "12.2.0"  # type: ignore[union-attr]
    assert probe_compiler(cand, ENV, caching)[0].version == "12.2.0"  # type: ignore[union-attr]
    assert len(fake.asked) == 2  # gcc and g++, once each

    new = fake_exe(bin_ / "gcc.new", "12.3.0\n")
    new.replace(gcc)
    compiler, warnings = probe_compiler(cand, ENV, caching)
    assert compiler is None or compiler.cxx is None  # g++ 12.2.0 beside gcc 12.3.0
    assert "is version 12.2.0 but" in warnings[0]
    assert len(fake.asked) == 3  # the new gcc; g++, the same file, not again

    rewrite(gcc, FAKE + b"12.4.0\n")  # same size, same modification time
    assert query([gcc, "-dumpfullversion"], ENV, caching, cacheable=True) == "12.4.0\n"

    link = bin_ / "cc"
    link.symlink_to(gcc)
    query([link, "-dumpfullversion"], ENV, caching, cacheable=True)
    link.unlink()
    link.symlink_to(fake_exe(bin_ / "clang", "16.0.6\n"))
    assert query([link, "-dumpfullversion"], ENV, caching, cacheable=True) == "16.0.6\n"


def test_scripts_and_failures_are_not_kept(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "nvcc"
    script.parent.mkdir()
    script.write_bytes(b"#!/bin/sh\n:12.4\n")  # a wrapper's answer is what it runs
    broken = tmp_path / "bin" / "cmake"
    broken.write_bytes(b"\x7fELF but no answer")
    fake, caching = runner(tmp_path)
    for _ in range(2):
        query([script, "--version"], ENV, caching, cacheable=True)
        with pytest.raises(ProbeError):
            query([broken, "--version"], ENV, caching, cacheable=True)
    assert len(fake.asked) == 4


def test_the_loader_variables_and_the_other_files_are_part_of_the_key(tmp_path: Path) -> None:
    python = fake_exe(tmp_path / "py" / "bin" / "python3", "Python 3.9.18\n")
    lib = tmp_path / "py" / "lib" / "libpython3.so"
    lib.parent.mkdir()
    lib.write_text("Python 3.9.18\n")
    fake, caching = runner(tmp_path)
    assert probe_python(python, ENV, caching).version == "3.9.18"
    assert probe_python(python, ENV, caching).version == "3.9.18"
    assert len(fake.asked) == 1
    lib.write_text("Python 3.9.19\n")  # the shared library upgraded under the same binary
    assert probe_python(python, ENV, caching).version == "3.9.19"
    probe_python(python, {**ENV, "LD_LIBRARY_PATH": "/elsewhere"}, caching)
    assert len(fake.asked) == 3


def test_the_file_is_written_once_and_read_back(tmp_path: Path) -> None:
    gcc = fake_exe(tmp_path / "bin" / "gcc", "12.2.0\n")
    path = tmp_path / "cache" / "versions.json"
    fake, caching = runner(tmp_path)
    query([gcc, "-dumpversion"], ENV, caching, cacheable=True)
    caching.cache.save()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    written = path.stat().st_mtime_ns
    later = CachingRunner(fake, VersionCache.read(path))
    assert query([gcc, "-dumpversion"], ENV, later, cacheable=True) == "12.2.0\n"
    later.cache.save()  # nothing new: not written again
    assert len(fake.asked) == 1 and path.stat().st_mtime_ns == written
    assert "env" not in path.read_text() and str(gcc) in path.read_text()


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b"\xff\xfe", b"[]", b'{"format": 1, "entries": {"k": {"answer": 1}}}',
     b'{"format": 99, "entries": {}}',
     b'{"format": 1, "entries": {"k": {"answer": "x", "files": [["/a", 1, 2, 3, 4, "5"]]}}}'],
)  # fmt: skip
def test_a_corrupt_file_is_ignored_and_written_again(tmp_path: Path, content: bytes) -> None:
    gcc = fake_exe(tmp_path / "bin" / "gcc", "12.2.0\n")
    path = tmp_path / "cache" / "versions.json"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(content)
    path.chmod(0o600)
    cache = VersionCache.read(path)
    assert cache.dirty and read_entries(path) is None
    query([gcc, "-dumpversion"], ENV, CachingRunner(FakeRunner(), cache), cacheable=True)
    cache.save()
    assert len(read_entries(path) or {}) == 1


def test_a_file_others_may_write_or_a_link_is_not_read(tmp_path: Path) -> None:
    gcc = fake_exe(tmp_path / "bin" / "gcc", "12.2.0\n")
    path = tmp_path / "cache" / "versions.json"
    _, caching = runner(tmp_path)
    query([gcc, "-dumpversion"], ENV, caching, cacheable=True)
    caching.cache.save()
    assert read_entries(path) is not None
    path.chmod(0o622)
    assert read_entries(path) is None and VersionCache.read(path).dirty
    path.chmod(0o600)
    link = tmp_path / "cache" / "link.json"
    link.symlink_to(path)
    assert read_entries(link) is None


def test_entries_of_changed_files_are_dropped_when_written(tmp_path: Path) -> None:
    old, kept = fake_exe(tmp_path / "bin" / "gcc-11", "11\n"), fake_exe(tmp_path / "bin" / "x", "1")
    path = tmp_path / "cache" / "versions.json"
    _, caching = runner(tmp_path)
    for exe in (old, kept):
        query([exe, "--version"], ENV, caching, cacheable=True)
    old.unlink()
    caching.cache.save()
    [entry] = json.loads(path.read_text())["entries"].values()
    assert entry["argv"] == [str(kept), "--version"]


def test_probe_host_asks_a_fake_compiler_once_across_runs(tmp_path: Path) -> None:
    """The whole probe through the cache file: the second run asks the same files nothing."""
    bin_ = tmp_path / "bin"
    fake_exe(bin_ / "gcc-9", "9.5.0\n")
    fake_exe(bin_ / "cmake", "cmake version 3.31.2\n")
    versions = tmp_path / "cache" / "host-versions.json"
    fake = FakeRunner()
    first = probe_host({"PATH": str(bin_)}, tmp_path, fake, versions)
    mine = [a for a in fake.asked if a[0].startswith(str(bin_))]
    assert len(mine) == 2 and versions.is_file()
    fake.asked.clear()
    again = probe_host({"PATH": str(bin_)}, tmp_path, fake, versions)
    assert not [a for a in fake.asked if a[0].startswith(str(bin_))]
    assert again.compilers == first.compilers and again.tools["cmake"].version == "3.31.2"
    assert [c.version for c in again.compilers if c.cc.startswith(str(bin_))] == ["9.5.0"]


def test_the_file_lives_in_the_cache_root() -> None:
    assert versions_file({"TORCHSMITH_CACHE_ROOT": "/c"}) == Path("/c/host-versions.json")
    assert versions_file({"XDG_CACHE_HOME": "/x"}) == Path("/x/torchsmith/host-versions.json")
    assert versions_file({"TORCHSMITH_CACHE_ROOT": "rel"}) is None  # no cache, no refusal
