"""Issue 13 part 4, PyPI side, for real: the small tree's wheel built by ``torchsmith build``
is published with ``torchsmith publish`` (a real process) to a real ``pypiserver`` this test
starts on 127.0.0.1 with an htpasswd holding only a hash of a canary token, then installed with
pip from that index into a fresh venv and imported. The canary goes through every credential
route (environment variable, 0600 file, keyring); a thread reads every ``/proc/*/cmdline``
while each upload runs, and afterwards every file under the test's directories (workspace,
dist, logs, manifest, the server's log) and the command's output are scanned: the canary is in
none of them. Idempotency: publishing again is a no-op; another file under the same name is
refused; a wrong token, a world-readable token file and a token in the URL are refused."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.canary import CmdlineWatch, TmpWatch, files_holding, texts_holding
from tests.resources import require

from .small_tree import args, cli_env, make_tree, run_cli

pytestmark = [pytest.mark.slow]

CANARY = "pypi-CANARY-7f3a9c1e-d00d-4b1d-9e5f-0badc0ffee42"
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def index(tmp_path: Path) -> Iterator[str]:
    """pypiserver on 127.0.0.1: uploads need the canary (htpasswd, hashed), reads are open."""
    found = importlib.util.find_spec("pypiserver") is not None  # importing it warns (cgi)
    require(found, "Python module pypiserver", "pip install -e '.[dev]'")
    sha1 = base64.b64encode(hashlib.sha1(CANARY.encode()).digest()).decode()
    (tmp_path / "htpasswd").write_text(f"__token__:{{SHA}}{sha1}\n")  # Apache's {SHA} scheme
    yield from serve_pypiserver(tmp_path, "-P", str(tmp_path / "htpasswd"), "-a", "update")


def serve_pypiserver(tmp_path: Path, *auth: str) -> Iterator[str]:
    """A real pypiserver on 127.0.0.1 over ``tmp_path/packages`` (``auth``: its -P/-a flags),
    its URL while the caller runs; stopped afterwards."""
    (tmp_path / "packages").mkdir()
    port = _free_port()
    argv = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
            *auth, str(tmp_path / "packages")]  # fmt: skip
    with (tmp_path / "server.log").open("w") as log:
        server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for(port, server, tmp_path / "server.log")
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for(port: int, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, f"pypiserver exited:\n{log.read_text()[-2000:]}"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail("pypiserver did not listen within 30 s")


def _publish(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    with CmdlineWatch(CANARY) as watch, TmpWatch(CANARY) as tmp:
        done = run_cli(["publish", *argv], env, timeout=120)
    assert watch.scans > 0 and not watch.seen, watch.seen
    assert tmp.holding() == []  # no credential file left in /tmp
    assert texts_holding(CANARY, [done.stdout, done.stderr]) == []
    return done


def _other_wheel(wheel: Path, dest: Path) -> Path:
    """Same file name, other bytes (a rebuild with another content)."""
    dest.mkdir()
    other = dest / wheel.name
    shutil.copy(wheel, other)
    with zipfile.ZipFile(other, "a") as zf:
        zf.writestr("fake/extra.txt", "another build")
    return other


def test_publish_to_a_local_pypi_index_then_pip_install(tmp_path: Path, index: str) -> None:
    tree = make_tree(tmp_path / "tree")
    cache, dist = tmp_path / "cache", tmp_path / "dist"
    built = run_cli(args(tree, cache, dist), cli_env())
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("*.whl")

    token_file = tmp_path / "secrets" / "token"
    token_file.parent.mkdir()
    token_file.write_text(CANARY + "\n")
    token_file.chmod(0o644)
    keyring_file = tmp_path / "secrets" / "keyring.json"
    env = cli_env({"PKG_TOKEN": CANARY, "PYTHONPATH": str(REPO), "CANARY_KEYRING_FILE":
                   str(keyring_file), "PYTHON_KEYRING_BACKEND":
                   "tests.integration.canary_keyring.FileKeyring"})  # fmt: skip
    to = ["--to", f"pypi-index:{index}"]

    refused = _publish([str(dist), *to, "--token-file", str(token_file)], env)
    assert refused.returncode == 2 and "mode 0644" in refused.stderr
    token_file.chmod(0o600)
    wrong = _publish([str(dist), *to, "--token-env", "WRONG"], {**env, "WRONG": "not-it"})
    assert wrong.returncode == 13 and "refused the credentials" in wrong.stderr

    first = _publish([str(dist), *to, "--token-env", "PKG_TOKEN", "--json"], env)
    assert first.returncode == 0, first.stderr
    assert '"outcome": "uploaded"' in first.stdout
    assert (tmp_path / "packages" / wheel.name).read_bytes() == wheel.read_bytes()

    again = _publish([str(wheel), *to, "--token-file", str(token_file), "--json"], env)
    assert again.returncode == 0 and '"outcome": "already-there"' in again.stdout, again.stderr
    subprocess.run([sys.executable, "-c", "import keyring, sys; keyring.set_password("
                    f"{index!r}, '__token__', sys.stdin.read())"], input=CANARY, text=True,
                   env=env, check=True)  # fmt: skip
    kept = _publish([str(dist), *to, "--keyring", "--json"], env)
    assert kept.returncode == 0 and '"outcome": "already-there"' in kept.stdout, kept.stderr

    other = _other_wheel(wheel, tmp_path / "other")
    clash = _publish([str(other), *to, "--token-env", "PKG_TOKEN"], env)
    assert clash.returncode == 13 and "already holds" in clash.stderr, clash.stderr
    in_url = run_cli(["publish", str(dist), "--to", index.replace("//", "//u:tok@"),
                      "--token-env", "PKG_TOKEN"], env)  # fmt: skip
    assert in_url.returncode == 2

    venv = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir",
           "--disable-pip-version-check", "--index-url", f"{index}simple/"]  # fmt: skip
    subprocess.run([*pip, "fake-torch==2.5.1+cpu"], check=True)
    ran = subprocess.run([venv / "bin" / "python", "-c", "import fake, os; print(sorted("
                          "os.listdir(fake.__path__[0])))"], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert "libfake.so" in ran.stdout

    skip = {token_file, keyring_file}
    assert files_holding(CANARY, [cache, dist, tmp_path / "server.log", tmp_path], skip) == []
