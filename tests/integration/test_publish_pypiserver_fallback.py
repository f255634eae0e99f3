"""Issue 28 item 3, against a real pypiserver on 127.0.0.1 with its default fallback: a project
it does not hold is answered with a redirect to the public index, and ``publish`` must not read
that listing as the target's (it reported 'already-there' without uploading, or refused a new
file). The redirect is seen, not followed: no request leaves this machine. ~3 s."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.resources import require
from torchsmith.publish.pypi import existing_files
from torchsmith.publish.scoped import scoped_session

from .test_publish_pypi import serve_pypiserver


@pytest.fixture
def pypiserver(tmp_path: Path) -> Iterator[str]:
    found = importlib.util.find_spec("pypiserver") is not None
    require(found, "Python module pypiserver", "pip install -e '.[dev]'")
    yield from serve_pypiserver(tmp_path, "-a", ".", "-P", ".")


def test_the_fallback_to_the_public_index_holds_nothing(pypiserver: str) -> None:
    page = requests.get(f"{pypiserver}simple/torch/", allow_redirects=False, timeout=30)
    assert page.is_redirect and "pypi.org" in page.headers["location"]  # the real behaviour
    session = scoped_session("__token__", "pypi-CANARY-fallback", pypiserver)
    assert existing_files(session, f"{pypiserver}simple/", "torch") == {}
