"""CI, real: README's first command, read from README.md, typed by a new (non-root, sudo) user in
a fresh Debian 12 root filesystem with Debian's own python3 (3.11.2, PEP 668, no python3-venv).

The root filesystem is made once per test cache by ``debootstrap --variant=minbase`` from the
Debian mirror the host's apt uses, and kept as a tarball; each run unpacks a fresh copy, copies
this working tree in (what ``git ls-files`` lists: a clone's files), and runs the command under
``chroot`` with /proc, /dev and /etc/resolv.conf mounted. The only host settings carried in are
the network's: local CA certificates (/usr/local/share/ca-certificates) and /etc/pip.conf.

Cost (Debian 12 dev machine, 2 cores, measured 2026-11-24): cold 66 s (debootstrap + tarball of
the 270 MB rootfs 49 s), warm 35 s (unpack, copy, then README's command itself 13-20 s:
apt-get update, python3-venv, pip install -e . from PyPI, plan).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.integration.conftest import REPO, cache_lock
from tests.integration.conftest import test_cache as cache_dir
from tests.resources import require_root, require_tool

SUITE = "bookworm"
DEBIAN_PYTHON = "Python 3.11.2"
# A fresh Debian 12 cloud/server install: python3 and sudo, no python3-venv, no pip.
INCLUDE = ("python3", "sudo", "ca-certificates")
USER = "newuser"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)


def readme_first_command(text: str) -> str:
    """The first command of the first ```sh block (comments skipped, ``\\`` lines joined)."""
    block = FENCE.search(text)
    if block is None:
        raise ValueError("README.md has no ```sh block")
    command: list[str] = []
    for line in block.group(1).splitlines():
        if not command and (not line.strip() or line.lstrip().startswith("#")):
            continue
        command.append(line.rstrip().removesuffix("\\").strip())
        if not line.rstrip().endswith("\\"):
            break
    return " ".join(command)


def test_readme_first_command_is_parsed() -> None:
    text = "x\n```sh\n# 1. comment\n\na && \\\n  b c\nscripts/test\n```\n```sh\nno\n```\n"
    assert readme_first_command(text) == "a && b c"
    command = readme_first_command((REPO / "README.md").read_text(encoding="utf-8"))
    assert "venv" in command and "torchsmith plan" in command


def host_mirror(sources: Path = Path("/etc/apt")) -> str:
    """The Debian mirror the host's apt uses (deb822 ``URIs:`` or one-line ``deb`` entries)."""
    parts = [*sources.glob("sources.list.d/*.list"), *sources.glob("sources.list.d/*.sources")]
    files = [sources / "sources.list", *sorted(parts)]
    texts = [p.read_text(encoding="utf-8") for p in files if p.is_file()]
    for uri in re.findall(r"^(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+)", "\n".join(texts), re.M):
        if uri.rstrip("/").endswith("/debian"):
            return str(uri)
    return "http://deb.debian.org/debian"


def _chroot(root: Path, *argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(
        ["chroot", str(root), *argv],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _check(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _debootstrap(target: Path, mirror: str) -> None:
    argv = ["debootstrap", "--variant=minbase", f"--include={','.join(INCLUDE)}", SUITE]
    _check(
        subprocess.run([*argv, str(target), mirror], check=False, capture_output=True, text=True)
    )
    _check(_chroot(target, "useradd", "--create-home", "--shell", "/bin/bash", USER))
    sudoers = target / "etc" / "sudoers.d" / USER
    sudoers.write_text(f"{USER} ALL=(ALL) NOPASSWD:ALL\n", encoding="utf-8")
    sudoers.chmod(0o440)
    _check(_chroot(target, "apt-get", "clean"))


def cached_rootfs(suite: str, extra_key: str, make: Callable[[Path, str], None]) -> Path:
    """A root filesystem ``make(target, mirror)`` builds from the host's Debian mirror, made
    once per test cache and kept as a tarball (named by suite, mirror and ``extra_key``)."""
    mirror = host_mirror()
    key = hashlib.sha256(f"{suite} {mirror}{extra_key}".encode()).hexdigest()[:12]
    tarball = cache_dir() / "rootfs" / f"debian-{suite}-minbase-{key}.tar"
    with cache_lock(f"rootfs-{tarball.name}"):
        if not tarball.is_file():
            _make_rootfs(tarball, suite, mirror, make)
    return tarball


def _make_rootfs(tarball: Path, suite: str, mirror: str, make: Callable[[Path, str], None]) -> None:
    tarball.parent.mkdir(parents=True, exist_ok=True)
    work = tarball.parent / f"{tarball.stem}.build"
    shutil.rmtree(work, ignore_errors=True)
    start = time.monotonic()
    make(work, mirror)
    partial = tarball.with_suffix(".partial")
    subprocess.run(["tar", "-C", str(work), "-cf", str(partial), "."], check=True)
    partial.rename(tarball)
    shutil.rmtree(work)
    print(f"debootstrap {suite} from {mirror}: {time.monotonic() - start:.0f} s")


@pytest.fixture(scope="session")
def rootfs_tarball() -> Path:
    """A fresh Debian 12 minbase rootfs with a sudo user, made once and cached as a tarball."""
    require_root("debootstrap and chroot")
    require_tool("debootstrap")
    return cached_rootfs(SUITE, f" {INCLUDE} {USER}", _debootstrap)


def _copy_working_tree(dest: Path) -> None:
    """The files a clone has: tracked and untracked-but-not-ignored files of this tree."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def _network_settings(root: Path) -> None:
    """The host's network trust (a TLS-inspecting proxy's CA, pip's cert setting), nothing else."""
    local_cas = Path("/usr/local/share/ca-certificates")
    if local_cas.is_dir() and any(local_cas.iterdir()):
        shutil.copytree(local_cas, root / local_cas.relative_to("/"), dirs_exist_ok=True)
        _check(_chroot(root, "update-ca-certificates"))
    with (root / "etc" / "hosts").open("a", encoding="utf-8") as hosts:
        hosts.write(f"127.0.1.1 {socket.gethostname()}\n")  # as a machine knows its own name
    if Path("/etc/pip.conf").is_file():
        shutil.copy2("/etc/pip.conf", root / "etc" / "pip.conf")


@contextmanager
def mounted(root: Path) -> Iterator[None]:
    """/proc, /dev, /dev/pts and /etc/resolv.conf inside ``root``; all unmounted on the way out."""
    (root / "etc" / "resolv.conf").unlink(missing_ok=True)
    (root / "etc" / "resolv.conf").touch()
    mounts = [
        ["-t", "proc", "proc", str(root / "proc")],
        ["--bind", "/dev", str(root / "dev")],
        ["--bind", "/dev/pts", str(root / "dev" / "pts")],
        ["--bind", "/etc/resolv.conf", str(root / "etc" / "resolv.conf")],
    ]
    with ExitStack() as stack:
        for argv in mounts:
            subprocess.run(["mount", *argv], check=True)
            stack.callback(subprocess.run, ["umount", argv[-1]], check=True)
        yield


def _unpack(tarball: Path, root: Path) -> None:
    root.mkdir()
    subprocess.run(["tar", "-C", str(root), "-xf", str(tarball)], check=True)


@pytest.mark.slow
@pytest.mark.network
def test_readme_first_command_in_fresh_debian12(rootfs_tarball: Path, tmp_path: Path) -> None:
    command = readme_first_command((REPO / "README.md").read_text(encoding="utf-8"))
    root = tmp_path / "root"
    _unpack(rootfs_tarball, root)
    try:
        home = root / "home" / USER / "torchsmith"
        _copy_working_tree(home)
        _check(_chroot(root, "chown", "-R", f"{USER}:{USER}", f"/home/{USER}/torchsmith"))
        _network_settings(root)
        with mounted(root):
            assert _check(_chroot(root, "python3", "--version")).strip() == DEBIAN_PYTHON
            start = time.monotonic()
            done = _chroot(root, "runuser", "-l", USER, "-c", f"cd ~/torchsmith && {command}")
            print(f"README's first command in fresh Debian 12: {time.monotonic() - start:.0f} s")
        out = _check(done)
        venv_python = _check(_chroot(root, f"/home/{USER}/torchsmith/.venv/bin/python", "-V"))
    finally:
        _remove_unless_mounted(root)
    assert venv_python.strip() == DEBIAN_PYTHON
    assert "2.5.1" in out and "12.4" in out, out


def _mounts_under(root: Path) -> list[str]:
    mounts = Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines()
    points = [line.split()[1].replace("\\040", " ") for line in mounts]
    return [p for p in points if Path(p) == root or Path(p).is_relative_to(root)]


def _remove_unless_mounted(root: Path) -> None:
    """Delete the unpacked rootfs, never while anything (the host's /dev!) is mounted in it."""
    still = _mounts_under(root)
    assert not still, f"still mounted under {root}: {still}; umount them, then delete it"
    shutil.rmtree(root)
