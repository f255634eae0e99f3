"""The ``tarball`` source provider: a release tarball from a URL or a file, with its sha256.

``location`` is a path or an ``https://`` URL, optionally ending in ``#sha256=<hex>`` (the
expected hash; without it the first download is trusted and a warning says so). The hash is
always recorded; a later fetch of the same location that yields other bytes is an error.
Unpacking refuses path traversal, into a torchsmith-owned directory, one run at a time.

curl gets the URL on stdin (``--config -``), never in its argv (``/proc/*/cmdline`` is world-
readable and a URL may carry a password or a signature), and only over HTTPS, redirects
included (``--proto =https --proto-redir =https``). Every URL shown or stored is redacted.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import SourceError, ToolError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.redact import redact_text, redact_url, url_secrets
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import owned
from torchsmith.sources.archive import safe_extract, single_top_dir
from torchsmith.sources.base import SourceTree

_HASH = re.compile(r"#sha256=([0-9a-fA-F]{64})$")
_VERSION = re.compile(r"(\d+\.\d+\.\d+(?:[a-z]+\d+)?)")


def split_location(location: str) -> tuple[str, str | None]:
    """``'x.tar.gz#sha256=ab…'`` -> (``'x.tar.gz'``, ``'ab…'``); a ``#sha256=`` that is not
    64 hex digits is refused (it was read as part of the file name)."""
    match = _HASH.search(location)
    if match is not None:
        return location[: match.start()], match[1].lower()
    base, mark, value = location.rpartition("#sha256=")
    if mark:
        raise SourceError(
            f"{redact_url(base)}#sha256={value[:80]}: the pin is not a sha256 (64 hex digits)",
            "give the file's full sha256 (`sha256sum FILE` prints it), or leave #sha256= out",
        )
    return location, None


_PLAIN_TEXT = ("http://", "ftp://")
CURL_OPTIONS = ("-fsSL", "--retry", "3", "--proto", "=https", "--proto-redir", "=https")


def is_url(location: str) -> bool:
    return location.lower().startswith(("https://", *_PLAIN_TEXT))


def check_url(url: str) -> None:
    """Refuse a URL of a plain-text protocol (anyone on the path could swap the tarball)."""
    if url.lower().startswith(_PLAIN_TEXT):
        scheme = url.partition(":")[0]
        raise SourceError(
            f"tarball URL {redact_url(url)} uses plain-text {scheme}://, which anyone on the "
            "network path can read and replace",
            "use the https:// URL of the same file (and add #sha256=<hex> to pin it)",
        )


def hash_warning(location: str) -> str:
    return (
        f"tarball {redact_url(location)} has no #sha256=: the first download is trusted as it "
        "is; add #sha256=<hex of the release tarball> to the location to pin it"
    )


def _curl_config(url: str, part: Path, resume: bool) -> str:
    """curl's config (read from stdin): the URL stays out of the process list."""

    def quoted(value: str) -> str:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [f"url = {quoted(url)}", f"output = {quoted(str(part))}"]
    return "\n".join([*lines, "continue-at = -"] if resume else lines) + "\n"


def _curl(
    url: str, part: Path, env: Mapping[str, str], on_line: LineCallback | None, runner: Runner
) -> int:
    secrets = url_secrets(url)
    shown = None if on_line is None else (lambda line: on_line(redact_text(line, secrets)))
    resume = part.is_file()
    config = _curl_config(url, part, resume)
    argv = ["curl", *CURL_OPTIONS, "--config", "-"]
    done = runner.run(argv, env=env, on_line=shown, check=not resume, stdin_text=config)
    return done.returncode


def version_from_name(name: str) -> str:
    match = _VERSION.search(name)
    return match[1] if match else ""


def _download(
    url: str, dest: Path, env: Mapping[str, str], on_line: LineCallback | None, runner: Runner
) -> Path:
    """curl into ``dest`` (resumed with ``-C -`` after a cut), renamed when complete."""
    final = dest / url.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
    if final.is_file():
        return final
    part = final.with_name(final.name + ".part")
    try:
        # continue a cut download; servers without ranges: start again
        if part.is_file() and _curl(url, part, env, on_line, runner) != 0:
            part.unlink()
        if not part.is_file():
            _curl(url, part, env, on_line, runner)
    except ToolError as exc:
        said = redact_text(" / ".join(exc.excerpt[-2:]), url_secrets(url))
        raise SourceError(
            f"download of {redact_url(url)} failed: {said}",
            "check the URL and the network; the same command resumes the download",
        ) from None
    return part.replace(final)


def _archive(
    location: str, dest: Path, env: Mapping[str, str], on_line: LineCallback | None, runner: Runner
) -> Path:
    if is_url(location):
        check_url(location)
        return _download(location, dest, env, on_line, runner)
    path = Path(location).expanduser()
    if not path.is_file():
        raise SourceError(f"tarball {path} does not exist", "give an existing file or a URL")
    return path


def _check_hash(archive: Path, expected: str | None, recorded: str | None) -> str:
    digest = sha256_file(archive)
    if expected and digest != expected:
        raise SourceError(
            f"{archive} has sha256 {digest}, not the expected {expected}",
            "the file is corrupt or not the release you meant; fetch it again",
        )
    if recorded and digest != recorded:
        raise SourceError(
            f"{archive} changed since torchsmith first fetched it "
            f"(sha256 {digest}, recorded {recorded})",
            "use a new location, or remove the cached copy with the cache command",
        )
    return digest


def entry_name(location: str, expected: str | None) -> str:
    """The cache entry of a tarball: by its pinned sha256 when it has one (a rotated token or
    re-signed URL reuses the download), else by a hash of the whole URL as given. Never by the
    redacted URL alone: ``…?key=v2.5.1`` and ``…?key=v2.4.1`` redact alike, and the second
    build got the first tarball (security review f1b4bec, N13)."""
    path = redact_url(location).split("?", 1)[0].split("#", 1)[0]
    name = path.rstrip("/").rsplit("/", 1)[-1] if path.count("/") > 2 else ""
    identity = expected or hashlib.sha256(location.encode()).hexdigest()
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', name) or 'tarball'}-{identity[:16]}"


def fetch_tarball(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    runner: Runner,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """Fetch (URL) or take (file) the tarball, check its sha256 and unpack it once."""
    del install_deps
    location, expected = split_location(plan.location)
    if is_url(location):
        check_url(location)
    shown = redact_url(location)
    base = owned.claim(cache_root / "tarball", {"purpose": "unpacked tarballs"})
    dest = owned.claim(base / entry_name(location, expected), {"location": shown})
    details = {"location": shown}
    if expected is None:
        details["warning"] = hash_warning(location)
        if on_line is not None:
            on_line(f"warning: {details['warning']}")
    with owned.locked(dest, f"the tarball cache entry {dest.name}", on_line):
        archive, digest = _fetch_and_unpack(location, expected, dest, env, on_line, runner=runner)
    return SourceTree(
        kind="tarball",
        root=single_top_dir(dest / "tree" / "src"),
        identity=digest,
        version=version_from_name(archive.name),
        owned=True,
        details={**details, "archive": str(archive), "sha256": digest},
    )


def _fetch_and_unpack(
    location: str,
    expected: str | None,
    dest: Path,
    env: Mapping[str, str],
    on_line: LineCallback | None,
    *,
    runner: Runner,
) -> tuple[Path, str]:
    """The archive (downloaded once) and its sha256, unpacked into ``dest/tree``."""
    (dest / "download").mkdir(exist_ok=True)
    archive = _archive(location, dest / "download", env, on_line, runner)
    info = owned.read_info(dest)
    try:
        digest = _check_hash(archive, expected, info.get("sha256"))
    except SourceError:
        if is_url(location):
            archive.unlink()  # our download, and wrong: the same command fetches it again
        raise
    if info.get("sha256") != digest or not owned.is_owned(dest / "tree"):
        stage = owned.staging_dir(dest, "tree")
        safe_extract(archive, stage / "src")
        owned.record_listing(stage)
        owned.publish(stage, dest / "tree")
        owned.update_info(dest, sha256=digest)
    else:
        owned.check_listing(dest / "tree", f"unpacked from {archive.name}")
    return archive, digest
