"""A companion's Debian source package (pytorch-vision, pytorch-audio) when the mirror serves
its upstream tarball but not its ``.dsc``: trixie's vision 0.21.0 and audio 2.6.0 are served
orig-only (measured 2026-11-24, /work/shared/notes/components-checked.md).

The file list and every sha256 come from the suite's signed Sources index
(``apt-get source --print-uris``); ``apt-helper`` checks the hash while downloading and the
tarball is hashed again here against the same index entry before it is unpacked. A file the
mirror does not serve is named with the mirror's answer; a missing orig is an error, a missing
``.dsc`` or packaging tarball is recorded (Debian's patches are then not applied). Where the
``.dsc`` is served, its sha256 must equal the index's and the knowledge base's.

Layout: ``<cache_root>/debian/<pkg>_<version>/{download,orig-tree}`` (torchsmith-owned)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import apt, owned
from torchsmith.sources.archive import safe_extract, single_top_dir
from torchsmith.sources.base import SourceTree

DEBIAN_TARBALL = "debian_tarball"
"""The details key naming the downloaded packaging tarball (its ``debian/changelog``)."""

_ORIG = ".orig.tar."


@dataclass(frozen=True)
class OrigJob:
    """One companion source package to fetch."""

    package: str
    version: str
    upstream: str
    dsc_sha256: str | None
    """What the knowledge base records for the ``.dsc`` (checked against the index)."""


def _say(on_line: LineCallback | None, text: str) -> None:
    if on_line is not None:
        on_line(f"debian: {text}")


def pick_orig(files: list[apt.RemoteFile], job: OrigJob) -> apt.RemoteFile:
    """The upstream tarball among the index's files of ``job``."""
    origs = [f for f in files if _ORIG in f.name and not f.name.endswith(".asc")]
    if len(origs) != 1:
        names = ", ".join(f.name for f in files) or "none"
        raise SourceError(
            f"the Sources index lists no single upstream tarball for {job.package} "
            f"{job.version} (files: {names})",
            "check the Debian suite carrying it (`torchsmith kb debian`)",
        )
    return origs[0]


def check_index(files: list[apt.RemoteFile], job: OrigJob) -> None:
    """The signed index's .dsc hash is the one the knowledge base records."""
    dsc = next((f for f in files if f.name.endswith(".dsc")), None)
    if job.dsc_sha256 is None or dsc is None or dsc.sha256 == job.dsc_sha256:
        return
    raise SourceError(
        f"the Sources index gives {dsc.name} sha256 {dsc.sha256}; the knowledge base "
        f"records {job.dsc_sha256}",
        "the archive changed (or a mirror serves another index): check the mirror, or "
        "refresh kb/data/debian.toml if the change is legitimate",
    )


def verify_orig(path: Path, remote: apt.RemoteFile) -> str:
    """sha256 of the downloaded tarball, equal to the index's (else an error naming both)."""
    actual = sha256_file(path)
    if actual != remote.sha256:
        raise SourceError(
            f"{remote.name} has sha256 {actual}; the signed Sources index lists {remote.sha256}",
            "delete the file and fetch again; if it persists, the mirror serves another file",
        )
    return actual


def _download_all(
    files: list[apt.RemoteFile],
    dest: Path,
    env: Mapping[str, str],
    on_line: LineCallback | None,
    runner: Runner,
) -> dict[str, str]:
    """Fetch every listed file not already here; {name: why} for those not served."""
    unavailable: dict[str, str] = {}
    for remote in files:
        target = dest / remote.name
        if target.is_file() and sha256_file(target) == remote.sha256:
            continue
        target.unlink(missing_ok=True)
        _say(on_line, f"downloading {remote.name} ({remote.size} bytes)")
        reason = apt.download(remote, dest, env, on_line, runner)
        if reason is not None:
            unavailable[remote.name] = f"{remote.uri}: {reason}"
            _say(on_line, f"NOT SERVED by the mirror: {remote.name} ({reason})")
    return unavailable


def _unpack(orig: Path, pkgdir: Path, on_line: LineCallback | None) -> None:
    stage = owned.staging_dir(pkgdir, "orig-tree")
    _say(on_line, f"unpacking {orig.name}")
    safe_extract(orig, stage / "src")
    owned.publish(stage, pkgdir / "orig-tree")


def _files(
    cfg: apt.AptConfig,
    job: OrigJob,
    env: Mapping[str, str],
    on_line: LineCallback | None,
    runner: Runner,
) -> list[apt.RemoteFile]:
    if not apt.lists_fresh(cfg):
        _say(on_line, f"apt-get update ({', '.join(cfg.suites)} deb-src)")
        apt.update(cfg, env, on_line, runner)
    files = apt.source_files(cfg, job.package, job.version, env, runner)
    check_index(files, job)
    return files


def fetch_orig(
    job: OrigJob,
    cache_root: Path,
    env: Mapping[str, str],
    on_line: LineCallback | None = None,
    *,
    runner: Runner,
    mirror: str = apt.DEFAULT_MIRROR,
) -> SourceTree:
    """The unpacked upstream tarball of ``job``, checked against the signed Sources index."""
    base = owned.claim(cache_root / "debian", {"purpose": "Debian source packages"})
    cfg = apt.AptConfig(base / "apt", mirror=mirror)
    apt.prepare(cfg)
    pkgdir = owned.claim(base / f"{job.package}_{job.version}", {"package": job.package})
    with owned.locked(pkgdir, f"the Debian source cache entry {pkgdir.name}", on_line):
        files = _files(cfg, job, env, on_line, runner)
        orig = pick_orig(files, job)
        (pkgdir / "download").mkdir(exist_ok=True)
        unavailable = _download_all(files, pkgdir / "download", env, on_line, runner)
        if orig.name in unavailable:
            raise SourceError(
                f"the upstream tarball {orig.name} of {job.package} {job.version} is not "
                f"served: {unavailable[orig.name]}",
                "try another mirror later, or another companion version",
            )
        sha = verify_orig(pkgdir / "download" / orig.name, orig)
        owned.update_info(pkgdir, orig_sha256=sha, unavailable=unavailable)
        if not owned.is_owned(pkgdir / "orig-tree"):
            _unpack(pkgdir / "download" / orig.name, pkgdir, on_line)
    details = {
        "package": job.package,
        "debian_version": job.version,
        f"sha256:{orig.name}": sha,
        "checked": "sha256 of the orig equals the signed Sources index's",
        **{f"unavailable:{name}": why for name, why in unavailable.items()},
    }
    packaging = [f.name for f in files if ".debian.tar." in f.name and f.name not in unavailable]
    if packaging:  # its debian/changelog dates the build (sources/epoch.py)
        details[DEBIAN_TARBALL] = str(pkgdir / "download" / packaging[0])
    if any(name.endswith((".dsc", ".debian.tar.xz")) for name in unavailable):
        details["patches"] = "Debian's .dsc/packaging tarball not served: upstream tree unpatched"
    root = single_top_dir(pkgdir / "orig-tree" / "src")
    return SourceTree("debian", root, sha, job.upstream, owned=True, details=details)
