"""M3 end to end: a tarball URL with a canary password and a signed query string, fetched by the
real curl from an HTTPS server this test starts on 127.0.0.1 (self-signed certificate made with
openssl, trusted through CURL_CA_BUNDLE) and stops. While curl is connected the server reads
every process's command line; afterwards every file the run wrote (plan.json, the owned markers,
the fetch log, the manifest in the workspace and the output directory) is scanned for the canary.
SCCACHE_REDIS with a password rides along in the build environment (manifest ``env``)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from torchsmith.cache import launcher_env_keys
from torchsmith.errors import SourceError
from torchsmith.plan_model import BuildPlan, SourcePlan
from torchsmith.proc import HOST
from torchsmith.report.manifest import ManifestInputs, build_manifest, source_record
from torchsmith.sources import fetch_source
from torchsmith.steps.context import effective_env
from torchsmith.steps.publish import publish_manifest
from torchsmith.workspace import prepare_workspace

from .https_server import serve_https

CANARY = "CANARYpw7f3a9"
SIG = "CANARYsig0c1d"
REDIS = f"redis://:{CANARY}-redis@cache.example:6379/0"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _tarball() -> bytes:
    """A small source tarball in the layout of a PyTorch release (top dir, setup.py)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("setup.py", b"print('setup')\n"), ("version.txt", b"2.5.1\n")):
            info = tarfile.TarInfo(f"pytorch-v2.5.1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _cmdlines() -> list[str]:
    found = []
    for proc_dir in Path("/proc").iterdir():
        if proc_dir.name.isdigit():
            with contextlib.suppress(OSError):
                found.append((proc_dir / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return found


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b""
    seen_argv: list[str] = []  # noqa: RUF012 (class-level record, one server per test)
    auth_ok: list[bool] = []  # noqa: RUF012

    paths: list[str] = []  # noqa: RUF012

    def do_GET(self) -> None:
        type(self).paths.append(self.path)
        type(self).seen_argv.extend(c for c in _cmdlines() if "curl" in c)
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", f"http://{self.headers['Host']}/plain.tar.gz")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        expected = base64.b64encode(f"alice:{CANARY}".encode()).decode()
        ok = self.headers.get("Authorization") == f"Basic {expected}" and SIG in self.path
        type(self).auth_ok.append(ok)
        self.send_response(200 if ok else 403)
        self.send_header("Content-Length", str(len(self.body) if ok else 0))
        self.end_headers()
        if ok:
            self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """(port, CA file) of an HTTPS server on 127.0.0.1 serving the tarball; stopped after."""
    _Handler.body, _Handler.seen_argv, _Handler.auth_ok, _Handler.paths = _tarball(), [], [], []
    with serve_https(_Handler, tmp_path) as served:
        yield served


def _plan(location: str) -> BuildPlan:
    plan = BuildPlan.model_validate_json(
        (FIXTURES / "build" / "plan-debian-1.13.1-c10.json").read_text()
    )
    source = SourcePlan(kind="tarball", location=location, ref=location, reason=f"from {location}")
    return plan.model_copy(update={"source": source})


def _manifest(plan: BuildPlan, tree_root: Path, ws: Path, details: dict[str, str]) -> dict:  # type: ignore[type-arg]
    from torchsmith.sources.base import SourceTree

    env = {"SCCACHE_REDIS": REDIS, "SCCACHE_DIR": "/c", "PATH": "/usr/bin"}
    tree = SourceTree("tarball", tree_root, "0" * 64, "2.5.1", True, details)
    return build_manifest(
        ManifestInputs(
            plan=plan, source=source_record(tree, tree_root), toolchain={},
            env=effective_env(env, set(launcher_env_keys(env))), cmake_cache={}, stages={},
            stages_all_runs={}, ninja={}, compiler_cache={}, fixes=[], artifacts=[], workspace=ws,
        )
    )  # fmt: skip


def test_a_canary_password_is_nowhere(https_server: tuple[int, Path], tmp_path: Path) -> None:
    port, ca = https_server
    digest = hashlib.sha256(_Handler.body).hexdigest()
    url = f"https://alice:{CANARY}@127.0.0.1:{port}/pytorch-v2.5.1.tar.gz?X-Amz-Signature={SIG}"
    plan = _plan(f"{url}#sha256={digest}")
    cache, out = tmp_path / "cache", tmp_path / "dist"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CURL_CA_BUNDLE": str(ca),
           "HOME": str(tmp_path), "SCCACHE_REDIS": REDIS}  # fmt: skip
    ws = prepare_workspace(cache, plan, {"cmake": "3.25"}, lambda _: None)
    log = ws.log("fetch")
    log.parent.mkdir(parents=True)
    with log.open("a") as fh:
        tree = fetch_source(
            plan.source, cache / "sources", env, runner=HOST, on_line=lambda s: print(s, file=fh)
        )
    assert _Handler.auth_ok == [True]  # curl did send the credentials (from its stdin config)
    assert (tree.root / "setup.py").is_file() and tree.identity == digest
    manifest = _manifest(plan, tree.root, ws.root, dict(tree.details))
    publish_manifest(manifest, [out, ws.root], "t.manifest.json")
    ws.release()
    assert [c for c in _Handler.seen_argv if c.startswith("curl ")], "the server saw curl run"
    assert not [c for c in _Handler.seen_argv if CANARY in c or SIG in c]
    written = [p for p in (*cache.rglob("*"), *out.rglob("*")) if p.is_file()]
    assert {"plan.json", "torchsmith-source.json", "fetch.log", "t.manifest.json"} <= {
        p.name for p in written
    }
    leaks = [
        p for p in written if CANARY.encode() in p.read_bytes() or SIG.encode() in p.read_bytes()
    ]
    assert leaks == []
    assert not [p for p in (*cache.rglob("*"), *out.rglob("*")) if CANARY in p.name]


def test_a_redirect_to_plain_http_is_not_followed(
    https_server: tuple[int, Path], tmp_path: Path
) -> None:
    """--proto-redir =https: curl refuses the https→http redirect; the error is redacted."""
    port, ca = https_server
    plan = _plan(f"https://alice:{CANARY}@127.0.0.1:{port}/redirect/t.tar.gz")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "CURL_CA_BUNDLE": str(ca)}  # fmt: skip
    with pytest.raises(SourceError, match="download of https://\\*\\*\\*@127") as caught:
        fetch_source(plan.source, tmp_path / "sources", env, runner=HOST)
    assert _Handler.paths == ["/redirect/t.tar.gz"]  # the plain-text URL was never fetched
    assert "Protocol" in caught.value.message and "http" in caught.value.message
    assert CANARY not in caught.value.render()
