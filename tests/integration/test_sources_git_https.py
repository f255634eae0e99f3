"""A password in the ``--git-mirror`` URL stays out of every process's argv, the log lines,
the errors, the tree's details and the files in the cache. The mirror is a real HTTPS server on
127.0.0.1 (git's "dumb" HTTP protocol: static files, Basic authentication, a certificate made
with openssl for the test), so git really sends the password."""

from __future__ import annotations

import base64
import functools
import http.server
import os
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_sources_git import Upstream, _git
from tests.resources import require_tool
from torchsmith import proc
from torchsmith.errors import SourceError, TorchsmithError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources.git import fetch_git

CANARY = "CANARY-pw-7f3a91"
USER = "bob"


class _AuthHandler(http.server.SimpleHTTPRequestHandler):
    expected = "Basic " + base64.b64encode(f"{USER}:{CANARY}".encode()).decode()

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != self.expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


def _certificate(root: Path) -> tuple[Path, Path]:
    cert, key = root / "cert.pem", root / "key.pem"
    openssl = require_tool("openssl", "apt-get install openssl")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def https_mirror(tmp_path: Path) -> Iterator[tuple[Upstream, str, Path]]:
    """(upstream, base URL of the HTTPS mirror, CA file)."""
    upstream = Upstream(tmp_path)
    for name in ("super", "sub"):
        _git(upstream.env, upstream.mirror / "acme" / f"{name}.git", "update-server-info")
    cert, key = _certificate(tmp_path)
    handler = functools.partial(_AuthHandler, directory=str(upstream.mirror))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield upstream, f"https://127.0.0.1:{server.server_address[1]}/", cert
    finally:
        server.shutdown()
        server.server_close()


class _CmdlineWatcher:
    """Reads every /proc/<pid>/cmdline (world-readable, as `ps` does) while a fetch runs."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> _CmdlineWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    self._read(pid)
            time.sleep(0.002)

    def _read(self, pid: str) -> None:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            return
        if cmdline.startswith("git") or "/git" in cmdline.split(" ")[0]:
            self.processes += 1
        if CANARY in cmdline:
            self.seen.add(cmdline)


def _files_with_canary(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]


def _plan(base: str, password: str) -> SourcePlan:
    mirror = base.replace("https://", f"https://{USER}:{password}@")
    return SourcePlan(
        kind="git",
        location="https://github.com/acme/super.git",
        ref="v1.0",
        git_mirror=mirror,
        reason="test",
    )


def _env(upstream: Upstream, cert: Path) -> dict[str, str]:
    count = int(upstream.env["GIT_CONFIG_COUNT"])
    return {
        **upstream.env,
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": "http.sslCAInfo",
        f"GIT_CONFIG_VALUE_{count}": str(cert),
    }


def test_a_password_in_the_mirror_url_is_used_but_never_shown_or_stored(
    https_mirror: tuple[Upstream, str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream, base, cert = https_mirror
    argvs: list[list[str]] = []
    real_run = proc.run

    def recording_run(argv: Any, **kwargs: Any) -> proc.Completed:
        argvs.append([str(a) for a in argv])
        return real_run(argv, **kwargs)

    monkeypatch.setattr(proc, "run", recording_run)
    lines: list[str] = []
    with _CmdlineWatcher() as watcher:
        tree = fetch_git(
            _plan(base, CANARY),
            tmp_path / "cache",
            _env(upstream, cert),
            runner=HOST,
            on_line=lines.append,
            recorded_commit=lambda _plan: upstream.tag_commit,
        )
    assert tree.identity == upstream.tag_commit  # the password was used: the server wants it
    assert (tree.root / "third_party/sub/sub.txt").is_file()
    assert argvs and watcher.processes > 0
    assert [a for a in argvs if CANARY in " ".join(a)] == []
    assert watcher.seen == set()
    assert [line for line in lines if CANARY in line] == []
    assert CANARY not in repr(tree.details)
    assert tree.details["mirror"] == base.replace("https://", "https://***@")
    assert _files_with_canary(tmp_path / "cache") == []


def test_a_refused_password_is_not_in_the_error(
    https_mirror: tuple[Upstream, str, Path], tmp_path: Path
) -> None:
    upstream, base, cert = https_mirror
    wrong = CANARY + "-wrong"
    lines: list[str] = []
    with pytest.raises(SourceError) as info:
        fetch_git(
            _plan(base, wrong),
            tmp_path / "cache",
            _env(upstream, cert),
            runner=HOST,
            on_line=lines.append,
            recorded_commit=lambda _plan: upstream.tag_commit,
        )
    error: TorchsmithError = info.value
    shown = error.render() + error.hint + repr(getattr(error.__cause__, "excerpt", ""))
    assert CANARY not in shown
    assert [line for line in lines if CANARY in line] == []
    assert _files_with_canary(tmp_path / "cache") == []
