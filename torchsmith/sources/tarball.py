"""The ``tarball`` source provider: a release tarball from a URL or a file, with its sha256.

``location`` is a path or URL, optionally ending in ``#sha256=<hex>`` (the expected hash). The
hash is always recorded; a later fetch of the same location that yields other bytes is an error.
Unpacking refuses path traversal (tarfile's ``data`` filter), into a torchsmith-owned directory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from torchsmith import proc
from torchsmith.errors import SourceError, ToolError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import LineCallback
from torchsmith.sources import owned
from torchsmith.sources.archive import safe_extract, single_top_dir
from torchsmith.sources.base import SourceTree
from torchsmith.sources.git import cache_key

_HASH = re.compile(r"#sha256=([0-9a-fA-F]{64})$")
_VERSION = re.compile(r"(\d+\.\d+\.\d+(?:[a-z]+\d+)?)")


def split_location(location: str) -> tuple[str, str | None]:
    """``'x.tar.gz#sha256=ab…'`` -> (``'x.tar.gz'``, ``'ab…'``)."""
    match = _HASH.search(location)
    if match is None:
        return location, None
    return location[: match.start()], match[1].lower()


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://", "ftp://"))


def version_from_name(name: str) -> str:
    match = _VERSION.search(name)
    return match[1] if match else ""


def _download(url: str, dest: Path, env: Mapping[str, str], on_line: LineCallback | None) -> Path:
    """curl into ``dest`` (resumed with ``-C -`` after a cut), renamed when complete."""
    final = dest / url.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
    if final.is_file():
        return final
    part = final.with_name(final.name + ".part")
    argv = ["curl", "-fsSL", "--retry", "3", "-o", str(part), url]
    try:
        if part.is_file():  # continue a cut download; servers without ranges: start again
            done = proc.run([*argv[:-1], "-C", "-", url], env=env, on_line=on_line, check=False)
            if done.returncode != 0:
                part.unlink()
        if not part.is_file():
            proc.run(argv, env=env, on_line=on_line)
    except ToolError as exc:
        raise SourceError(
            f"download of {url} failed: {' / '.join(exc.excerpt[-2:])}",
            "check the URL and the network; the same command resumes the download",
        ) from exc
    return part.replace(final)


def _archive(
    location: str, dest: Path, env: Mapping[str, str], on_line: LineCallback | None
) -> Path:
    if is_url(location):
        return _download(location, dest, env, on_line)
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


def fetch_tarball(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    install_deps: bool = False,
    on_line: LineCallback | None = None,
) -> SourceTree:
    """Fetch (URL) or take (file) the tarball, check its sha256 and unpack it once."""
    del install_deps
    location, expected = split_location(plan.location)
    base = owned.claim(cache_root / "tarball", {"purpose": "unpacked tarballs"})
    dest = owned.claim(base / cache_key(location, ""), {"location": location})
    (dest / "download").mkdir(exist_ok=True)
    archive = _archive(location, dest / "download", env, on_line)
    info = owned.read_info(dest)
    digest = _check_hash(archive, expected, info.get("sha256"))
    if info.get("sha256") != digest or not owned.is_owned(dest / "tree"):
        stage = owned.staging_dir(dest, "tree")
        safe_extract(archive, stage / "src")
        owned.publish(stage, dest / "tree")
        owned.update_info(dest, sha256=digest)
    return SourceTree(
        kind="tarball",
        root=single_top_dir(dest / "tree" / "src"),
        identity=digest,
        version=version_from_name(archive.name),
        owned=True,
        details={"location": location, "archive": str(archive), "sha256": digest},
    )
