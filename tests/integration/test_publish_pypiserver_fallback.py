"""Issue 28 item 3, against a real pypiserver on 127.0.0.1 with its default fallback: a project
it does not hold is answered with a redirect to the public index, and ``publish`` must not read
that listing as the target's (it reported 'already-there' without uploading, or refused a new
file). The redirect is seen, not followed: no request leaves this machine. ~3 s."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.resources import require
from torchsmith.publish.pypi import existing_files
from torchsmith.publish.scoped import scoped_session

from .test_publish_pypi import _free_port, _wait_for


@pytest.fixture
def pypiserver(tmp_path: Path) -> Iterator[str]:
    found = importlib.util.find_spec("pypiserver") is not None
    require(found, "Python module pypiserver", "pip install -e '.[dev]'")
    (tmp_path / "packages").mkdir()
    port = _free_port()
    argv = [sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
            "-a", ".", "-P", ".", str(tmp_path / "packages")]  # fmt: skip
    with (tmp_path / "server.log").open("w") as log:
        server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for(port, server, tmp_path / "server.log")
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_fallback_to_the_public_index_holds_nothing(pypiserver: str) -> None:
    page = requests.get(f"{pypiserver}simple/torch/", allow_redirects=False, timeout=30)
    assert page.is_redirect and "pypi.org" in page.headers["location"]  # the real behaviour
    session = scoped_session("__token__", "pypi-CANARY-fallback", pypiserver)
    assert existing_files(session, f"{pypiserver}simple/", "torch") == {}
