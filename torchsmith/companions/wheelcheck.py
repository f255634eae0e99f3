"""What a repaired companion wheel must hold, read from its files (never installed or run):
no RPATH entry that names the build machine, every library it needs either inside the wheel,
torch's own (the torch it loads brings them), one the manylinux policy of its tag lets a system
provide, or one left external on purpose (the driver, the CUDA toolkit's); and a platform tag
that is a manylinux one (or the ``linux_x86_64`` the repair had to keep, as it recorded).

The policy's library list is auditwheel's own (``auditwheel/policy/manylinux-policy.json`` of
the installed auditwheel, torchsmith's dependency for repair)."""

from __future__ import annotations

import fnmatch
import json
import tempfile
import zipfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath

from torchsmith.errors import VerifyError
from torchsmith.inspect.companion import TORCH_LIBS
from torchsmith.inspect.elf import read_elf

ELF_MAGIC = b"\x7fELF"
_HINT = "repair the wheel (torchsmith build runs the companion's repair step), then verify again"


@dataclass(frozen=True)
class Library:
    """One ELF member of the wheel."""

    member: str
    needed: tuple[str, ...]
    foreign_rpath: tuple[str, ...]


def libraries(wheel: Path) -> list[Library]:
    """Every ELF member with what it needs and its build-machine RPATH entries."""
    found = []
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory() as tmp:
        for info in zf.infolist():
            with zf.open(info) as fh:
                if info.is_dir() or fh.read(4) != ELF_MAGIC:
                    continue
            path = Path(tmp) / "member.so"
            path.write_bytes(zf.read(info))
            facts = read_elf(path)
            bad = tuple(e for e in (*facts.rpath, *facts.runpath) if not _relative(e))
            found.append(Library(info.filename, facts.needed, bad))
    return found


def _relative(entry: str) -> bool:
    """An RPATH entry the loader resolves inside the installed package (or an empty one)."""
    return not entry or entry.startswith(("$ORIGIN", "${ORIGIN}"))


@cache
def policies() -> dict[str, frozenset[str]]:
    """Each manylinux policy name (and alias) -> the sonames a system may provide."""
    text = resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text()
    table: dict[str, frozenset[str]] = {}
    for policy in json.loads(text):
        libs = frozenset(policy["lib_whitelist"])
        for name in (policy["name"], *policy.get("aliases", [])):
            table[name] = libs
    return table


def system_allowed(tag: str) -> frozenset[str]:
    """The sonames the wheel's platform tag(s) let the system provide ('' for linux_*)."""
    allowed: set[str] = set()
    for one in tag.split("."):
        policy = one.removesuffix("_x86_64").removesuffix("_aarch64")
        allowed |= policies().get(policy, frozenset())
    return frozenset(allowed)


def check_rpaths(libs: list[Library]) -> list[str]:
    """The ELF members checked; a build-machine RPATH entry fails."""
    bad = [f"{lib.member}: {':'.join(lib.foreign_rpath)}" for lib in libs if lib.foreign_rpath]
    if bad:
        raise VerifyError(f"RPATH entries of the build machine: {'; '.join(bad)}", _HINT)
    return [lib.member for lib in libs]


LOADERS = ("ld-linux", "ld64.so.")
"""The ELF dynamic loader (ld-linux-x86-64.so.2; ld64.so.1/2 on ppc64le/s390x): always the
system's, as auditwheel excludes it (auditwheel/policy/__init__.py, filter_libs). Debian's
libjpeg and libpng name it among their NEEDED (measured: the grafted copies in a torchvision
0.21.0 wheel repaired on Debian 12, 2026-11-27)."""


def _external(soname: str, inside: set[str], allowed: frozenset[str], kept: list[str]) -> bool:
    if soname in inside or soname in allowed or TORCH_LIBS.match(soname):
        return False
    if soname.startswith(LOADERS):
        return False
    return not any(fnmatch.fnmatch(soname, pattern) for pattern in kept)


def check_external(libs: list[Library], tag: str, kept: list[str]) -> list[str]:
    """The libraries the wheel brings itself (grafted into ``<name>.libs/``); one it needs that
    is neither inside, torch's, allowed by its tag's policy nor ``kept`` external fails."""
    inside = {PurePosixPath(lib.member).name for lib in libs}
    allowed = system_allowed(tag)
    missing = sorted({s for lib in libs for s in lib.needed if _external(s, inside, allowed, kept)})
    if missing:
        raise VerifyError(
            f"the wheel needs {', '.join(missing)} from the machine it is installed on, and "
            f"the {tag} policy does not let a system provide them (neither bundled nor declared)",
            _HINT,
        )
    return sorted(m.member for m in libs if ".libs/" in m.member)


def check_tag(tag: str, recorded: str | None) -> str:
    """A manylinux tag, or the linux_x86_64 the repair recorded it had to keep."""
    if tag.startswith("manylinux") or (recorded is not None and tag == recorded):
        return tag
    raise VerifyError(f"the wheel's platform tag is {tag}, not a manylinux one", _HINT)


def check_repaired(
    wheel: Path, tag: str, kept: list[str], recorded: str | None
) -> dict[str, object]:
    """Every repaired-wheel check of ``wheel`` (tag: its platform tag)."""
    libs = libraries(wheel)
    return {
        "tag": check_tag(tag, recorded),
        "rpath_checked": len(check_rpaths(libs)),
        "bundled": check_external(libs, tag, kept),
    }
