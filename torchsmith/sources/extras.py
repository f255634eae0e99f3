"""Extra Debian sources that fixes copy files from.

A fix command may name a file in ANOTHER version's Debian packaging with the placeholder
``{debian_extra:PKG=VERSION}`` (e.g. the pocketfft header that Debian's 2.6.0+dfsg-7 ships in
``debian/pocketfft-…/``). The debian provider fetches just that version's ``debian.tar.*`` (hash
checked), unpacks it under the cache and records the directory in ``SourceTree.details`` under
``debian_extra:PKG=VERSION``; :func:`expand_placeholders` turns a fix's argv into real paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources import apt, owned
from torchsmith.sources.archive import safe_extract

UNPACKED = "src"
PLACEHOLDER = re.compile(r"\{(debian_extra:(?P<pkg>[a-z0-9][a-z0-9.+-]*)=(?P<ver>[\w.+~:-]+))\}")


def placeholders(argv: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``details key -> (package, version)`` for every placeholder in ``argv``."""
    found = {}
    for arg in argv:
        for match in PLACEHOLDER.finditer(arg):
            found[match[1]] = (match["pkg"], match["ver"])
    return found


def _matches(spec: str, version: str) -> bool:
    try:
        return not spec or Version(version) in SpecifierSet(spec)
    except (InvalidSpecifier, InvalidVersion):
        return False


def extras_for(package: str, upstream: str) -> dict[str, tuple[str, str]]:
    """The extra sources the knowledge base's Debian fixes for this tree refer to."""
    if package != "pytorch":
        return {}
    found: dict[str, tuple[str, str]] = {}
    for fix in kb.load().fixes:
        if fix.applies.source == "debian" and _matches(fix.applies.torch, upstream):
            found |= placeholders(fix.command)
    return found


def fetch_extra(
    cfg: apt.AptConfig,
    extra_root: Path,
    ref: tuple[str, str],
    env: Mapping[str, str],
    on_line: LineCallback | None = None,
    *,
    runner: Runner,
) -> Path:
    """The unpacked ``debian/`` packaging of ``ref`` (package, version): its parent dir.

    The archive is unpacked into ``src/`` of the owned directory, never beside its ownership
    marker and the download (a member named like the marker cannot replace it)."""
    package, version = ref
    owned.claim(extra_root, {"purpose": "extra Debian packaging used by fixes"})
    final = extra_root / f"{package}_{version}"
    if owned.is_owned(final) and (final / UNPACKED / "debian").is_dir():
        return final / UNPACKED
    if not apt.lists_fresh(cfg):
        apt.update(cfg, env, on_line, runner)
    remote = next(
        (
            f
            for f in apt.source_files(cfg, package, version, env, runner)
            if ".debian.tar." in f.name
        ),
        None,
    )
    if remote is None:
        raise SourceError(f"Debian {package} {version} has no debian.tar.* to take files from")
    stage = owned.staging_dir(extra_root, final.name)
    reason = apt.download(remote, stage, env, on_line, runner)
    if reason is not None:
        raise SourceError(
            f"cannot fetch {remote.name}, which a fix copies files from: {reason}",
            "check the connection to the Debian archive",
        )
    safe_extract(stage / remote.name, stage / UNPACKED)
    owned.update_info(stage, sha256={remote.name: remote.sha256})
    return owned.publish(stage, final) / UNPACKED


def expand_placeholders(argv: Sequence[str], details: Mapping[str, str]) -> list[str]:
    """``argv`` with every ``{debian_extra:PKG=VERSION}`` replaced by its fetched directory."""

    def sub(match: re.Match[str]) -> str:
        if match[1] not in details:
            raise SourceError(
                f"a fix needs {match[1]}, which the source provider did not fetch",
                "build from --source debian (the provider fetches it), or report this",
            )
        return details[match[1]]

    return [PLACEHOLDER.sub(sub, arg) for arg in argv]
