"""What a ``.whl`` given to ``publish`` must be before anything is sent: a wheel's file name, a
zip archive, with the ``.dist-info/WHEEL`` and ``METADATA`` an index reads (trial P21: a
non-wheel name was InvalidWheelFilename, P22: random bytes were twine's BadZipFile, exit 70)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from torchsmith.errors import UsageError

_FIX = "publish the .whl files torchsmith build wrote (dist/), or rebuild this one"


def check_wheel(wheel: Path) -> None:
    """Refuse, naming why, a file that is not a wheel an index would take."""
    try:
        name, version = parse_wheel_filename(wheel.name)[:2]
    except InvalidWheelFilename as exc:
        raise UsageError(
            f"{wheel.name} is not a wheel's file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl): "
            f"{exc}",
            _FIX,
        ) from None
    members = _members(wheel)
    missing = [m for m in ("WHEEL", "METADATA") if not any(_in_dist_info(n, m) for n in members)]
    if missing:
        raise UsageError(
            f"{wheel.name} ({name} {version}) holds no .dist-info/{' or '.join(missing)}: "
            "an index cannot read it and pip would refuse it",
            _FIX,
        )


def _in_dist_info(member: str, leaf: str) -> bool:
    parts = member.split("/")
    return len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == leaf


def _members(wheel: Path) -> list[str]:
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.namelist()
    except zipfile.BadZipFile:
        raise UsageError(
            f"{wheel} is not a wheel: it is not a zip archive (truncated or another file?)", _FIX
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read {wheel}: {exc.strerror or exc}", _FIX) from None
