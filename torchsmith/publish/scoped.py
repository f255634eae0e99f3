"""HTTP for ``publish``: the upload token goes to the origin it was given for and nowhere else.

* :class:`OriginAuth` adds the ``Authorization`` header only to requests whose origin (scheme,
  host, port) is the upload URL's: an index on another host, a file host the index links to, or
  a plain-http mirror never see it (security review f1b4bec, N2). requests itself drops the
  header on a redirect to another host (``Session.rebuild_auth``) and does not put it back.
* :func:`get_listing` reads an index page without following a redirect to another origin:
  pypiserver's default fallback answers ``/simple/<project>/`` it does not hold with a redirect
  to the public index, whose files are not the target's (issue 28, item 3).
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import requests
from requests.auth import AuthBase, HTTPBasicAuth

TIMEOUT = 60.0
MAX_REDIRECTS = 5
Origin = tuple[str, str, int]
_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> Origin:
    """``(scheme, host, port)`` of ``url``, the port filled in from the scheme."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _PORTS.get(scheme, 0)


class OriginAuth(AuthBase):
    """HTTP Basic credentials for one origin; requests to any other go without them."""

    def __init__(self, username: str, password: str, for_url: str) -> None:
        self._basic = HTTPBasicAuth(username, password)
        self.origin = origin(for_url)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if request.url and origin(request.url) == self.origin:
            return self._basic(request)
        return request

    def __repr__(self) -> str:
        return f"OriginAuth(<secret>, for {self.origin[0]}://{self.origin[1]}:{self.origin[2]})"


def scoped_session(username: str, password: str, for_url: str) -> requests.Session:
    """A session that authenticates to ``for_url``'s origin only."""
    session = requests.Session()
    session.auth = OriginAuth(username, password, for_url)
    return session


def get_listing(session: requests.Session, url: str) -> requests.Response | None:
    """GET an index page, following redirects within its origin only; None when it sends the
    reader to another origin (what another host lists is not what this index holds)."""
    for _ in range(MAX_REDIRECTS + 1):
        resp = session.get(url, timeout=TIMEOUT, allow_redirects=False)
        if not resp.is_redirect:
            return resp
        target = urljoin(url, resp.headers.get("location", ""))
        resp.close()
        if origin(target) != origin(url):
            return None
        url = target
    raise requests.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")
