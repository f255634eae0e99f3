"""Debian's archive through apt's own clients, with a PRIVATE configuration: a sources list,
package lists and cache under a torchsmith-owned directory, so the system's apt state is never
touched. File lists come from ``apt-get source --print-uris`` (hashes from the signed index);
each file is fetched with ``apt-helper download-file``, which checks that hash. The index itself
must be signed by Debian's archive key (``signed-by``), not by any key the host trusts."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import HostError, SourceError, ToolError
from torchsmith.runner import LineCallback, Runner
from torchsmith.sources.owned import claim

DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SUITES = ("bookworm", "trixie")
APT_HELPER = "/usr/lib/apt/apt-helper"
# Debian's archive signing keys (package debian-archive-keyring; on Ubuntu too, from universe).
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
LISTS_MAX_AGE_S = 24 * 3600
_URI_LINE = re.compile(
    r"^'(?P<uri>[^']+)' (?P<name>\S+) (?P<size>\d+) SHA256:(?P<sha>[0-9a-f]{64})"
)


@dataclass(frozen=True)
class RemoteFile:
    """One file of a source package as the signed archive index lists it."""

    uri: str
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class AptConfig:
    """A private apt configuration rooted at ``root`` (a torchsmith-owned directory)."""

    root: Path
    mirror: str = DEFAULT_MIRROR
    suites: tuple[str, ...] = DEFAULT_SUITES
    keyring: Path = DEBIAN_KEYRING

    @property
    def lists(self) -> Path:
        return self.root / "lists"

    def sources_text(self) -> str:
        return "".join(
            f"deb-src {signed_by(self.keyring)} {self.mirror} {suite} main\n"
            for suite in self.suites
        )

    def options(self) -> list[str]:
        return [
            f"-oDir::Etc::SourceList={self.root / 'sources.list'}",
            "-oDir::Etc::SourceParts=/dev/null",
            f"-oDir::State::Lists={self.lists}",
            f"-oDir::Cache={self.root / 'cache'}",
        ]


def signed_by(keyring: Path) -> str:
    """The sources.list option that accepts only ``keyring``'s signatures for an entry."""
    return f"[signed-by={keyring}]"


def require_keyring(keyring: Path) -> None:
    """Refuse to use a private sources list whose signing keyring is absent."""
    if not keyring.is_file():
        raise HostError(
            f"Debian's archive keyring {keyring} is not on this machine, so the Debian "
            "archive's signatures cannot be checked",
            "install it: apt-get install debian-archive-keyring",
        )


def prepare(cfg: AptConfig) -> None:
    """Make the private apt directories (owned) and write the sources list."""
    require_keyring(cfg.keyring)
    claim(cfg.root, {"purpose": "private apt configuration for deb-src downloads"})
    for sub in (cfg.lists / "partial", cfg.root / "cache"):
        sub.mkdir(parents=True, exist_ok=True)
    (cfg.root / "sources.list").write_text(cfg.sources_text(), encoding="utf-8")


def lists_fresh(cfg: AptConfig, now: float | None = None) -> bool:
    indexes = list(cfg.lists.glob("*_Sources*"))
    if not indexes:
        return False
    age = (now if now is not None else time.time()) - min(p.stat().st_mtime for p in indexes)
    return age < LISTS_MAX_AGE_S


def update(
    cfg: AptConfig, env: Mapping[str, str], on_line: LineCallback | None, runner: Runner
) -> None:
    """``apt-get update`` of the private lists (deb-src only)."""
    try:
        runner.run(["apt-get", *cfg.options(), "-q", "update"], env=env, on_line=on_line)
    except ToolError as exc:
        raise SourceError(
            f"apt-get update of {cfg.mirror} failed: {' / '.join(exc.excerpt) or exc.message}",
            "check the network connection to the Debian archive (or use --source bundle:FILE)",
        ) from exc


def parse_print_uris(lines: Sequence[str]) -> list[RemoteFile]:
    """The files listed by ``apt-get source --print-uris``."""
    files = []
    for line in lines:
        match = _URI_LINE.match(line.strip())
        if match:
            files.append(RemoteFile(match["uri"], match["name"], int(match["size"]), match["sha"]))
    return files


def source_files(
    cfg: AptConfig, package: str, version: str, env: Mapping[str, str], runner: Runner
) -> list[RemoteFile]:
    """The files of source package ``package=version`` (.dsc first), from the private index."""
    argv = ["apt-get", *cfg.options(), "source", "--print-uris", f"{package}={version}"]
    done = runner.run(argv, env=env, check=False)
    files = parse_print_uris(done.tail)
    if done.returncode != 0 or not files:
        errors = [line for line in done.tail if line.startswith("E:")]
        raise SourceError(
            f"Debian has no source package {package}={version} in "
            f"{', '.join(cfg.suites)}: {' / '.join(errors) or 'no files listed'}",
            f"list the versions with: apt-cache {' '.join(cfg.options())} showsrc {package}",
        )
    return sorted(files, key=lambda f: not f.name.endswith(".dsc"))


def download(
    remote: RemoteFile,
    dest_dir: Path,
    env: Mapping[str, str],
    on_line: LineCallback | None,
    runner: Runner,
) -> str | None:
    """Fetch one file into ``dest_dir`` (hash checked by apt). ``None`` on success, else the
    reason it is unavailable (e.g. ``404  Not Found``)."""
    dest = dest_dir / remote.name
    argv: list[str | Path] = [
        APT_HELPER,
        "download-file",
        remote.uri,
        dest,
        f"SHA256:{remote.sha256}",
    ]
    done = runner.run(argv, env=env, on_line=on_line, check=False)
    if done.returncode == 0 and dest.is_file():
        return None
    (dest_dir / f"{remote.name}.FAILED").unlink(missing_ok=True)
    reasons = [line.strip() for line in done.tail if line.startswith("  ")]
    reasons = reasons or [line for line in done.tail if line.startswith("E:")]
    return reasons[0] if reasons else f"apt-helper exited with status {done.returncode}"
