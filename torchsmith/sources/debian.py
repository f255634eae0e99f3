"""The ``debian`` source provider: Debian's source package (pytorch, pytorch-vision,
pytorch-audio, pytorch-text) from deb-src, checked against its .dsc, unpacked, with Debian's own
patch series applied when the packaging tarball is available.

Layout under ``<cache_root>/debian/`` (every directory marked as torchsmith's)::

    apt/                       private apt configuration and lists
    <pkg>_<version>/download/  the .dsc and the files it lists (sha256 checked)
    <pkg>_<version>/tree/      the unpacked (and patched) tree, made atomically
    extra/<pkg>_<version>/     another version's debian/ directory, for fixes that copy files
                               from it (placeholder ``{debian_extra:PKG=VERSION}``)

When the packaging tarball is missing from the mirror (pytorch 1.13.1+dfsg-4: 404, measured
2026-11-22), the provider says so and builds the orig tree unpatched; torchsmith's own fixes for
that tree (kb/data/fixes_debian.toml) take the place of Debian's patches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import SourcePlan
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import apt, dsc, hostdeps, owned, patches
from torchsmith.sources.archive import safe_extract, single_top_dir
from torchsmith.sources.base import BUILD_DEPENDS, SourceTree
from torchsmith.sources.extras import extras_for, fetch_extra

PACKAGES = ("pytorch", "pytorch-vision", "pytorch-audio", "pytorch-text")
Say = LineCallback


@dataclass(frozen=True)
class Fetched:
    """The downloaded, verified files of one source package."""

    directory: Path
    dsc: dsc.Dsc
    sha256: dict[str, str]
    unavailable: dict[str, str]

    @property
    def dsc_path(self) -> Path:
        return self.directory / f"{self.dsc.source}_{_no_epoch(self.dsc.version)}.dsc"


def upstream_of(version: str) -> str:
    """'1:1.13.1+dfsg-4' -> '1.13.1'."""
    text = _no_epoch(version).rsplit("-", 1)[0]
    return re.split(r"[+~]", text, maxsplit=1)[0]


def _no_epoch(version: str) -> str:
    return version.split(":", 1)[-1]


def _say(on_line: Say | None, text: str) -> None:
    if on_line is not None:
        on_line(f"debian: {text}")


def _check_plan(plan: SourcePlan) -> tuple[str, str]:
    if plan.location not in PACKAGES:
        raise SourceError(
            f"{plan.location!r} is not a Debian source package torchsmith builds",
            f"use one of {', '.join(PACKAGES)}",
        )
    if not plan.ref:
        raise SourceError(
            f"no Debian version given for {plan.location}",
            "the plan names the version (e.g. 1.13.1+dfsg-4); see `torchsmith kb debian`",
        )
    return plan.location, plan.ref


def _dsc_name(package: str, version: str) -> str:
    return f"{package}_{_no_epoch(version)}.dsc"


@dataclass(frozen=True)
class _Job:
    """One fetch: which package, where, for which architecture."""

    package: str
    version: str
    arch: str
    pkgdir: Path
    env: Mapping[str, str]
    on_line: Say | None
    runner: Runner

    @property
    def download(self) -> Path:
        return self.pkgdir / "download"

    @property
    def dsc_path(self) -> Path:
        return self.download / _dsc_name(self.package, self.version)


def _cached(job: _Job) -> Fetched | None:
    """The earlier download, if it is complete and still matches its .dsc (no network)."""
    info = owned.read_info(job.pkgdir)
    recorded = dict(info.get("sha256", {}))
    if not job.dsc_path.is_file() or recorded.get(job.dsc_path.name) != sha256_file(job.dsc_path):
        return None
    parsed = dsc.parse_dsc(job.dsc_path.read_text(encoding="utf-8"), job.arch)
    present = [f.name for f in parsed.files if (job.download / f.name).is_file()]
    unavailable = dict(info.get("unavailable", {}))
    if set(present) | set(unavailable) != {f.name for f in parsed.files}:
        return None
    try:
        hashes = dsc.verify_files(parsed, job.download, present)
    except SourceError:
        return None  # fetched again (and checked again) by _download
    hashes[job.dsc_path.name] = recorded[job.dsc_path.name]
    return Fetched(job.download, parsed, hashes, unavailable)


def _download(cfg: apt.AptConfig, job: _Job) -> Fetched:
    job.download.mkdir(exist_ok=True)
    if not apt.lists_fresh(cfg):
        _say(job.on_line, f"apt-get update ({', '.join(cfg.suites)} deb-src)")
        apt.update(cfg, job.env, job.on_line, job.runner)
    unavailable: dict[str, str] = {}
    for remote in apt.source_files(cfg, job.package, job.version, job.env, job.runner):
        target = job.download / remote.name
        if target.is_file() and sha256_file(target) == remote.sha256:
            continue
        target.unlink(missing_ok=True)  # a cut or corrupt earlier download (our own dir)
        _say(job.on_line, f"downloading {remote.name} ({remote.size} bytes)")
        reason = apt.download(remote, job.download, job.env, job.on_line, job.runner)
        if reason is not None:
            unavailable[remote.name] = f"{remote.uri}: {reason}"
    return _verify(job, unavailable)


def _verify(job: _Job, unavailable: dict[str, str]) -> Fetched:
    if not job.dsc_path.is_file():
        raise SourceError(
            f"could not download {job.dsc_path.name}: {unavailable.get(job.dsc_path.name, '')}",
            "check the connection to the Debian archive",
        )
    parsed = dsc.parse_dsc(job.dsc_path.read_text(encoding="utf-8"), job.arch)
    present = [f.name for f in parsed.files if f.name not in unavailable]
    hashes = dsc.verify_files(parsed, job.download, present)
    hashes[job.dsc_path.name] = sha256_file(job.dsc_path)  # checked by apt-helper on download
    if parsed.orig.name in unavailable:
        raise SourceError(
            f"the source tarball {parsed.orig.name} is unavailable: "
            f"{unavailable[parsed.orig.name]}",
            "try again later or use --source git",
        )
    return Fetched(job.download, parsed, hashes, unavailable)


def _unpack(fetched: Fetched, pkgdir: Path, job: _Job) -> None:
    env, on_line = job.env, job.on_line
    stage = owned.staging_dir(pkgdir, "tree")
    debian_tar = fetched.dsc.debian
    applied: list[str] = []
    if debian_tar is not None and debian_tar.name in fetched.sha256:
        _say(on_line, f"dpkg-source -x {fetched.dsc_path.name} (patches applied separately)")
        argv: list[str | Path] = [
            "dpkg-source",
            "--skip-patches",
            "-x",
            fetched.dsc_path,
            stage / "src",
        ]
        job.runner.run(argv, env=env, cwd=stage, on_line=on_line)
        applied = patches.apply_series(stage / "src", env, job.runner, on_line)
    else:
        _say(on_line, f"unpacking {fetched.dsc.orig.name}")
        safe_extract(fetched.directory / fetched.dsc.orig.name, stage / "src")
    owned.update_info(stage, patches_applied=applied)
    owned.publish(stage, pkgdir / "tree")


def _tree_root(pkgdir: Path) -> Path:
    return single_top_dir(pkgdir / "tree" / "src")


def _identity(fetched: Fetched, applied: list[str]) -> str:
    lines = sorted(f"{sha}  {name}" for name, sha in fetched.sha256.items())
    lines += [f"patch {name}" for name in applied]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _patch_note(fetched: Fetched, applied: list[str]) -> str:
    deb = fetched.dsc.debian
    if deb is not None and deb.name in fetched.unavailable:
        return (
            f"Debian's packaging tarball {deb.name} is unavailable "
            f"({fetched.unavailable[deb.name]}): Debian's patches were NOT applied; "
            "only torchsmith's own fixes for this tree (kb/data/fixes_debian.toml) apply"
        )
    return f"{len(applied)} Debian patch(es) applied from debian/patches/series"


def check_build_deps(fetched: Fetched, job: _Job, install: bool) -> list[str]:
    """Install (when asked) or demand the core Build-Depends; the packages installed."""
    core, optional = dsc.needed_packages(fetched.dsc)
    if optional:
        _say(job.on_line, f"Build-Depends left out (optional features): {' '.join(optional)}")
    why = f"building {fetched.dsc.source} {fetched.dsc.version} with system libraries"
    return hostdeps.ensure_packages(
        core, job.env, runner=job.runner, install=install, why=why, on_line=job.on_line
    )


def fetch_debian(
    plan: SourcePlan,
    cache_root: Path,
    env: Mapping[str, str],
    *,
    install_deps: bool = False,
    runner: Runner,
    check_deps: bool = True,
    on_line: Say | None = None,
    mirror: str = apt.DEFAULT_MIRROR,
) -> SourceTree:
    """Fetch, verify, unpack and patch the Debian source package the plan names."""
    package, version = _check_plan(plan)
    base = owned.claim(cache_root / "debian", {"purpose": "Debian source packages"})
    cfg = apt.AptConfig(base / "apt", mirror=mirror)
    apt.prepare(cfg)
    pkgdir = owned.claim(base / f"{package}_{_no_epoch(version)}", {"package": package})
    arch = hostdeps.host_arch(env, runner)
    job = _Job(package, version, arch, pkgdir, env, on_line, runner)
    with owned.locked(pkgdir, f"the Debian source cache entry {pkgdir.name}", on_line):
        fetched = _cached(job) or _download(cfg, job)
        owned.update_info(pkgdir, sha256=fetched.sha256, unavailable=fetched.unavailable)
        for name, reason in fetched.unavailable.items():
            _say(on_line, f"NOT AVAILABLE on the mirror: {name} ({reason})")
        if check_deps:
            check_build_deps(fetched, job, install_deps)
        if not owned.is_owned(pkgdir / "tree"):
            _unpack(fetched, pkgdir, job)
    applied = list(owned.read_info(pkgdir / "tree").get("patches_applied", []))
    details = {
        "package": package,
        "debian_version": version,
        "dsc": str(fetched.dsc_path),
        "patches": _patch_note(fetched, applied),
        **{f"sha256:{name}": sha for name, sha in fetched.sha256.items()},
        **{f"unavailable:{name}": why for name, why in fetched.unavailable.items()},
        BUILD_DEPENDS: " ".join(dsc.needed_packages(fetched.dsc)[0]),
    }
    for key, ref in extras_for(package, upstream_of(version)).items():
        extra = fetch_extra(cfg, base / "extra", ref, env, on_line, runner=runner)
        details[key] = str(extra)
    return SourceTree(
        kind="debian",
        root=_tree_root(pkgdir),
        identity=_identity(fetched, applied),
        version=upstream_of(version),
        owned=True,
        details=details,
    )
