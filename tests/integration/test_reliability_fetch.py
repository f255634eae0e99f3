"""Reliability trial 4 (issue 16), network loss during fetch: ``torchsmith build --source
tarball:https://127.0.0.1:PORT/…#sha256=…`` against an HTTPS server this test runs (self-signed,
trusted through ``CURL_CA_BUNDLE``; tarball sources are https only). The server first drops the
connection halfway through the body (the network goes away mid-download): the build stops with
a clear message naming the download, keeping the part; then it answers Range requests, and the
same command resumes the download from where it stopped (the server sees ``Range: bytes=N-``)
and publishes. A corrupt archive (same size, other bytes) is refused by its pinned sha256 and
never unpacked; the same command then gets the real one."""

from __future__ import annotations

import hashlib
import http.server
from pathlib import Path
from typing import ClassVar

import pytest

from tests.resources import require_tool

from .https_server import serve_https
from .small_tree import ATTESTED, MANIFEST, WHEEL, args, cli_env, make_tree, run_cli, tarball_of

pytestmark = [pytest.mark.slow, pytest.mark.network]


class Flaky(http.server.BaseHTTPRequestHandler):
    """Serves :attr:`body`; ``mode``: ``cut`` (half, then the connection drops), ``ranges``
    (whole or from a ``Range: bytes=N-``), ``corrupt`` (the right size, wrong bytes)."""

    body = b""
    mode = "ranges"
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        start = self._range_start()
        type(self).seen.append(f"{self.mode} range={start}")
        data = self.body if self.mode != "corrupt" else bytes(b ^ 0x5A for b in self.body)
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if self.mode == "cut":
            self.wfile.write(data[start : len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.close()
            return
        self.wfile.write(data[start:])

    def _range_start(self) -> int:
        value = self.headers.get("Range", "")
        if self.mode != "ranges" or not value.startswith("bytes="):
            return 0
        return int(value.removeprefix("bytes=").split("-")[0])

    def log_message(self, format: str, *args: object) -> None:
        del format, args


def test_a_download_cut_midway_resumes_and_a_corrupt_one_is_refused(tmp_path: Path) -> None:
    require_tool("curl", "apt-get install curl")
    Flaky.body = tarball_of(make_tree(tmp_path / "tree"))
    digest = hashlib.sha256(Flaky.body).hexdigest()
    with serve_https(Flaky, tmp_path) as (port, ca):
        env = cli_env({"CURL_CA_BUNDLE": str(ca)})
        url = f"https://127.0.0.1:{port}/pytorch-v2.5.1.tar.gz#sha256={digest}"
        argv = args(f"tarball:{url}", tmp_path / "cache", tmp_path / "dist")
        report = [f"\nfetch trial: {len(Flaky.body)} bytes, sha256 {digest[:12]}…"]

        Flaky.mode, Flaky.seen = "cut", []
        cut = run_cli(argv, env)
        report.append(f"cut: exit {cut.returncode}: {cut.stderr.strip()}")
        assert cut.returncode == 9, cut.stdout + cut.stderr  # SourceError
        assert f"download of https://127.0.0.1:{port}/pytorch-v2.5.1.tar.gz failed" in cut.stderr
        assert "the same command resumes the download" in cut.stderr
        parts = list((tmp_path / "cache").rglob("*.tar.gz.part"))
        assert [p.stat().st_size for p in parts] == [len(Flaky.body) // 2]

        Flaky.mode, Flaky.seen = "ranges", []
        resumed = run_cli(argv, env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert Flaky.seen == [f"ranges range={len(Flaky.body) // 2}"]  # resumed, not restarted
        report.append(f"resumed: requests {Flaky.seen}, exit 0")
        dist = tmp_path / "dist"
        assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, MANIFEST, *ATTESTED])

        Flaky.mode, Flaky.seen = "corrupt", []
        argv = args(f"tarball:{url}", tmp_path / "cache2", tmp_path / "dist2")
        bad = run_cli(argv, env)
        report.append(f"corrupt: exit {bad.returncode}: {bad.stderr.strip()}")
        assert bad.returncode == 9, bad.stdout + bad.stderr
        assert f"not the expected {digest}" in bad.stderr
        assert not list((tmp_path / "cache2").glob("builds/*/src"))  # never unpacked, never built
        assert not (tmp_path / "dist2").exists()

        Flaky.mode, Flaky.seen = "ranges", []
        good = run_cli(argv, env)
        report.append(f"after corrupt, good server: exit {good.returncode}: {good.stderr.strip()}")
        print("\n".join(report))
        assert good.returncode == 0, good.stdout + good.stderr
