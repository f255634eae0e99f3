"""Which hosts ``publish`` sends the upload token to (security review f1b4bec, N2, N12; issue
28 item 3). Three real HTTP servers on 127.0.0.1 (threads, no process): the upload origin U,
an index I and a file host F on other ports, i.e. other origins. Each records the
``Authorization`` header of every request it gets."""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from torchsmith.errors import PublishError, UsageError
from torchsmith.publish.credentials import Secret
from torchsmith.publish.pypi import existing_files, publish_wheel, remote_sha256
from torchsmith.publish.scoped import OriginAuth, origin, scoped_session

TOKEN = "pypi-CANARYTOKEN123"
WHEEL = "torch-2.5.1+cpu-cp311-cp311-linux_x86_64.whl"
Route = Callable[[BaseHTTPRequestHandler], None]


class Server:
    """A loopback HTTP server answering GETs with ``route`` and logging (path, Authorization)."""

    def __init__(self, route: Route) -> None:
        self.seen: list[tuple[str, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append((self.path, self.headers.get("Authorization")))
                route(self)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def auths(self) -> list[str | None]:
        return [auth for _, auth in self.seen]


def _send(handler: BaseHTTPRequestHandler, code: int, body: bytes = b"", **headers: str) -> None:
    handler.send_response(code, headers.pop("reason", None))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for server in made:
        server.httpd.shutdown()
        server.httpd.server_close()


def _serve(servers: list[Server], route: Route) -> Server:
    server = Server(route)
    servers.append(server)
    return server


def _page(href: str) -> Route:
    body = f'<html><body><a href="{href}">{WHEEL}</a></body></html>'.encode()
    return lambda h: _send(h, 200, body, Content_Type="text/html")


def _basic() -> str:
    return "Basic " + base64.b64encode(f"__token__:{TOKEN}".encode()).decode()


def test_the_token_goes_to_the_upload_origin_only(servers: list[Server], tmp_path: Path) -> None:
    wheel = tmp_path / WHEEL
    wheel.write_bytes(b"the same bytes")
    files = _serve(servers, lambda h: _send(h, 200, wheel.read_bytes()))
    index = _serve(servers, _page(f"{files.url}/files/{WHEEL}"))
    upload = _serve(servers, lambda h: _send(h, 404))
    done = publish_wheel(wheel, f"{upload.url}/", Secret(TOKEN, "test"), "__token__",
                         f"{index.url}/simple/")  # fmt: skip
    assert done.outcome == "already-there"
    assert index.auths() == [None] and files.auths() == [None]  # N2: both got the token
    assert upload.seen == []


def test_an_index_on_the_upload_origin_is_read_with_the_token(servers: list[Server]) -> None:
    upload = _serve(servers, _page(f"/files/{WHEEL}#sha256=ab"))
    session = scoped_session("__token__", TOKEN, f"{upload.url}/")
    assert existing_files(session, f"{upload.url}/simple/", "torch") == {
        WHEEL: f"{upload.url}/files/{WHEEL}#sha256=ab"
    }
    assert upload.auths() == [_basic()]


def test_a_listing_that_redirects_to_another_host_holds_nothing(servers: list[Server]) -> None:
    """pypiserver's fallback sends /simple/<project>/ it does not hold to the public index:
    what that lists is not on the target (issue 28, item 3)."""
    public = _serve(servers, _page(f"/files/{WHEEL}#sha256=ab"))
    target = _serve(servers, lambda h: _send(h, 303, Location=f"{public.url}/simple/torch/"))
    session = scoped_session("__token__", TOKEN, f"{target.url}/")
    assert existing_files(session, f"{target.url}/simple/", "torch") == {}
    assert public.seen == []


def test_a_redirect_within_the_origin_is_followed(servers: list[Server]) -> None:
    def route(h: BaseHTTPRequestHandler) -> None:
        if h.path == "/simple/torch/":
            _send(h, 301, Location="/other/torch/")
        else:
            _page(f"/files/{WHEEL}#sha256=ab")(h)

    target = _serve(servers, route)
    session = scoped_session("__token__", TOKEN, f"{target.url}/")
    assert list(existing_files(session, f"{target.url}/simple/", "torch")) == [WHEEL]
    assert target.auths() == [_basic(), _basic()]


def test_the_reason_phrase_is_masked(servers: list[Server]) -> None:
    """N12: a server (or proxy) echoing the credential in its reason phrase."""
    for echoed in (TOKEN, f"__token__:{TOKEN}", _basic().removeprefix("Basic ")):
        echo = _serve(servers, lambda h, e=echoed: _send(h, 400, reason=f"Bad Request {e}"))
        session = scoped_session("__token__", TOKEN, f"{echo.url}/")
        with pytest.raises(PublishError) as caught:
            remote_sha256(session, f"{echo.url}/files/{WHEEL}", [TOKEN, f"__token__:{TOKEN}",
                                                                   _basic()[6:]])  # fmt: skip
        assert "Bad Request ***" in caught.value.render()
        assert TOKEN not in caught.value.render() and _basic()[6:] not in caught.value.render()


def test_a_file_of_another_origin_is_downloaded_without_the_token(servers: list[Server]) -> None:
    files = _serve(servers, lambda h: _send(h, 200, b"abc"))
    session = scoped_session("__token__", TOKEN, "https://upload.example/legacy/")
    assert remote_sha256(session, f"{files.url}/f.whl") == hashlib.sha256(b"abc").hexdigest()
    assert files.auths() == [None]


def test_origins() -> None:
    assert origin("https://Upload.Example/legacy/") == ("https", "upload.example", 443)
    assert origin("http://upload.example/") != origin("https://upload.example/")
    assert origin("https://upload.example:8443/") != origin("https://upload.example/")
    assert TOKEN not in repr(OriginAuth("__token__", TOKEN, "https://upload.example/"))


@pytest.mark.parametrize(
    "url", ["ftp://x/simple/", "https://u:pw@x/simple/", "https://x/?token=abc"]
)
def test_an_index_url_with_a_credential_is_refused(url: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--index-url"):
        publish_wheel(tmp_path / WHEEL, "https://upload.example/", Secret(TOKEN, "t"), "u", url)
