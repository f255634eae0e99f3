"""What ``torchsmith rebuild`` holds a build to: the source identity and the toolchain versions a
manifest recorded. The pipeline checks the toolchain right after preflight and the fetch step the
source tree, so a rebuild that could not give the same bytes stops before compiling, naming the
difference (a compiler of another version is refused unless drift is allowed, then warned)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from torchsmith.errors import HostError, SourceError
from torchsmith.sources.base import SourceTree

COMPILERS = ("cc", "cxx")
"""The tools whose version changes the object code: another version is refused."""


@dataclass(frozen=True)
class Recorded:
    """The recorded build a rebuild must repeat."""

    manifest: str
    source_identity: str | None = None
    epoch: int | None = None
    """The source's SOURCE_DATE_EPOCH the build used (manifests before it: None, unchecked)."""
    toolchain: Mapping[str, str] = field(default_factory=dict)
    allow_drift: bool = False
    """Another compiler version is warned, not refused."""


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else "(none)"


def toolchain_drift(recorded: Mapping[str, str], found: Mapping[str, str]) -> list[str]:
    """Each tool whose version differs from the recorded one, by name, with both versions."""
    return [
        f"{tool}: recorded {_first_line(was)!r}, here {_first_line(found.get(tool, ''))!r}"
        for tool, was in sorted(recorded.items())
        if _first_line(found.get(tool, "")) != _first_line(was)
    ]


def check_toolchain(
    recorded: Recorded | None, found: Mapping[str, str], warn: Callable[[str], None]
) -> None:
    """Refuse another compiler version (unless drift is allowed); warn for the other tools."""
    if recorded is None:
        return
    drift = toolchain_drift(recorded.toolchain, found)
    refused = [d for d in drift if d.split(":")[0] in COMPILERS and not recorded.allow_drift]
    if refused:
        raise HostError(
            f"this machine's compiler differs from the one {recorded.manifest} records: "
            + "; ".join(refused),
            "rebuild where that compiler is installed (or name it: --compiler), or pass "
            "--allow-toolchain-drift to rebuild anyway (the bytes will likely differ)",
        )
    for line in drift:
        warn(f"rebuild: toolchain differs from the record: {line}")


def check_source(recorded: Recorded | None, tree: SourceTree) -> None:
    """The fetched tree is the recorded one (its commit, or its archive's hash)."""
    if recorded is None or recorded.source_identity in (None, tree.identity):
        return
    raise SourceError(
        f"the source fetched is {tree.identity}, {recorded.manifest} records "
        f"{recorded.source_identity}",
        "the tag or archive moved since the build: fetch the recorded commit or archive "
        "(a bundle: torchsmith source bundle) and rebuild from it",
    )


def check_epoch(recorded: Recorded | None, tree: SourceTree) -> None:
    """The epoch resolved for the fetched tree is the recorded one (the same bytes need the
    same times; the same commit or changelog gives it, so a difference is a changed rule)."""
    if recorded is None or recorded.epoch in (None, tree.epoch):
        return
    raise SourceError(
        f"the source's SOURCE_DATE_EPOCH is {tree.epoch} ({tree.epoch_from}), "
        f"{recorded.manifest} records {recorded.epoch}: the wheel's times would differ",
        "the plan and the source are the recorded ones, so where the date is read from changed "
        "(the mirror serves Debian's packaging tarball now, or no longer): rebuild where the "
        "recorded files are served",
    )
