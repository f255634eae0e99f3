"""A throw-away HTTPS server on 127.0.0.1 for the download tests: a self-signed certificate made
with the real openssl, trusted by curl through ``CURL_CA_BUNDLE`` (torchsmith fetches tarballs
over https only), stopped when the ``with`` block ends."""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

Handler = Callable[..., http.server.BaseHTTPRequestHandler]


def self_signed(directory: Path) -> tuple[Path, Path]:
    """(certificate, key) for 127.0.0.1, valid for a day."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed for the HTTPS download tests (apt-get install openssl)")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@contextmanager
def serve_https(handler: Handler | Any, directory: Path) -> Iterator[tuple[int, Path]]:
    """(port, CA file to trust) of a server answering with ``handler``; ``directory`` holds
    the certificate."""
    cert, key = self_signed(directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
