"""Wheels to a PyPI-compatible index: the legacy upload API through twine's ``Repository``
(the client PyPA keeps for it), idempotent through the index's simple API (PEP 503): a file of
the same name with the same sha256 is a no-op, with another sha256 it is refused."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
from collections.abc import Callable, Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urljoin, urlsplit

import requests
from packaging.utils import canonicalize_name, parse_wheel_filename

from torchsmith.errors import PublishError
from torchsmith.hashing import sha256_file
from torchsmith.publish.credentials import Secret
from torchsmith.publish.model import Published
from torchsmith.publish.scoped import get_listing, scoped_session
from torchsmith.publish.target import check_index_url
from torchsmith.redact import redact_text, redact_url

TIMEOUT = 60.0  # the token reaches the upload URL's origin only (publish/scoped.py)
PYPI_UPLOAD = "upload.pypi.org"
_T = TypeVar("_T")


def simple_url(upload_url: str) -> str:
    """The simple index next to an upload URL: PyPI's own, ``…/legacy/`` → ``…/simple/``
    (PyPI, TestPyPI, Warehouse), else ``simple/`` under it (pypiserver uploads to ``/``)."""
    parts = urlsplit(upload_url)
    if parts.hostname == PYPI_UPLOAD:
        return "https://pypi.org/simple/"
    base = upload_url if upload_url.endswith("/") else upload_url + "/"
    return urljoin(base, "../simple/" if parts.path.rstrip("/").endswith("legacy") else "simple/")


class _Links(HTMLParser):
    """``{file name: href}`` of the anchors of a PEP 503 project page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            name = unquote(urlsplit(href).path.rsplit("/", 1)[-1])
            self.links[name] = href


def existing_files(
    session: requests.Session, index: str, project: str, secrets: Sequence[str] = ()
) -> dict[str, str]:
    """``{file name: absolute href}`` the index lists for ``project`` (none on 404, nor when
    the index sends the reader to another host: pypiserver's fallback to the public index)."""
    page = urljoin(index, f"{canonicalize_name(project)}/")
    resp = _calling(page, lambda: get_listing(session, page))
    if resp is None or resp.status_code == 404:
        return {}
    _raise_for(resp, f"reading {redact_url(page)}", secrets)
    parser = _Links()
    parser.feed(resp.text)
    return {name: urljoin(page, href) for name, href in parser.links.items()}


def _get(session: requests.Session, url: str, stream: bool = False) -> requests.Response:
    return _calling(url, lambda: session.get(url, timeout=TIMEOUT, stream=stream))


def _calling(url: str, call: Callable[[], _T]) -> _T:
    try:
        return call()
    except requests.RequestException as exc:
        raise PublishError(
            f"{redact_url(url)}: {type(exc).__name__}",
            "check the URL and that the index is reachable",
        ) from None


def _raise_for(resp: requests.Response, what: str, secrets: Sequence[str] = ()) -> None:
    if resp.status_code in (401, 403):  # publish's own exit (13), not a usage error (2)
        raise PublishError(
            f"{what}: the index refused the credentials ({resp.status_code})",
            "check the token and that it may upload to this project",
        )
    if resp.status_code >= 400:
        raise PublishError(
            f"{what}: HTTP {resp.status_code} {redact_text(str(resp.reason), secrets)}",
            "see the index's documentation or logs",
        )


def remote_sha256(session: requests.Session, href: str, secrets: Sequence[str] = ()) -> str:
    """The sha256 of a listed file: from its ``#sha256=`` fragment, else downloaded (with the
    credentials only when it lies on the upload URL's origin: :class:`OriginAuth`)."""
    fragment = urlsplit(href).fragment
    if fragment.startswith("sha256="):
        return fragment.removeprefix("sha256=")
    digest = hashlib.sha256()
    with contextlib.closing(_get(session, href, stream=True)) as resp:
        _raise_for(resp, f"downloading {redact_url(href)}", secrets)
        for chunk in resp.iter_content(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def publish_wheel(
    wheel: Path, upload_url: str, secret: Secret, username: str, index: str | None = None
) -> Published:
    """Upload ``wheel`` unless the index already holds it (same sha256); refuse a different
    file under its name."""
    if index is not None:
        check_index_url(index)
    sha = sha256_file(wheel)
    name = parse_wheel_filename(wheel.name)[0]
    where = redact_url(upload_url)
    hidden = shown_secrets(username, secret)
    with contextlib.closing(scoped_session(username, secret.reveal(), upload_url)) as session:
        listed = existing_files(session, index or simple_url(upload_url), name, hidden)
        if wheel.name in listed:
            theirs = remote_sha256(session, listed[wheel.name], hidden)
            return _same_or_refuse(wheel, sha, theirs, where)
    _upload(wheel, upload_url, secret, username)
    return Published(wheel.name, sha, "uploaded", where)


def shown_secrets(username: str, secret: Secret) -> list[str]:
    """Every form the token takes on the wire, to mask in what a server sends back: the token,
    ``user:token`` and its Basic-auth base64."""
    pair = f"{username}:{secret.reveal()}"
    return [secret.reveal(), pair, base64.b64encode(pair.encode()).decode()]


def _same_or_refuse(wheel: Path, sha: str, theirs: str, where: str) -> Published:
    if theirs == sha:
        return Published(wheel.name, sha, "already-there", where)
    raise PublishError(
        f"{where} already holds {wheel.name} with sha256 {theirs}; this one is {sha}",
        "an index never replaces a file: give this build another version (--build-version "
        "2.5.1+cpu.1, a new local tag) or remove the old file on the index first",
    )


def _upload(wheel: Path, upload_url: str, secret: Secret, username: str) -> None:
    from twine.exceptions import TwineException
    from twine.package import PackageFile
    from twine.repository import Repository

    try:
        package = PackageFile.from_filename(str(wheel), None)
    except TwineException as exc:
        raise PublishError(f"{wheel.name}: {exc}", "rebuild the wheel") from None
    repo = Repository(upload_url, username, secret.reveal(), disable_progress_bar=True)
    with _quiet(), contextlib.closing(repo):
        try:
            resp = repo.upload(package)
        except requests.RequestException as exc:
            raise PublishError(
                f"uploading to {redact_url(upload_url)}: {type(exc).__name__}",
                "check the URL and that the index is reachable",
            ) from None
    if resp.status_code != 200:
        hidden = shown_secrets(username, secret)
        text = redact_text(resp.text[:300], hidden).strip()
        _raise_for(resp, f"uploading {wheel.name}", hidden)
        raise PublishError(
            f"uploading {wheel.name}: HTTP {resp.status_code}: {text}", "see the index's logs"
        )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """twine's Repository prints 'Uploading NAME' on stdout; the library never prints."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield
