"""Optional cross-check of the fat binary reader against NVIDIA's ``cuobjdump --list-elf
--list-ptx`` (on PyPI as ``nvidia-cuda-cuobjdump``). Never needed; used when present."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import InspectError
from torchsmith.inspect.model import CrossCheck, GpuCode
from torchsmith.runner import Runner

_LINE = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[a-z]?)\.(?:cubin|ptx)$")


def parse_listing(text: str) -> Counter[str]:
    """Entries per target from ``cuobjdump --list-elf --list-ptx`` output ('sm_90': 475)."""
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match:
            kind, arch = match.groups()
            counts[arch if kind == "ELF" else arch.replace("sm_", "compute_")] += 1
    return counts


def _cuobjdump_name(arch: str) -> str:
    """cuobjdump --list-elf names a family cubin by its base arch (``sm_100`` for ``sm_100f``;
    its --list-ptx keeps ``sm_100f``): seen with cuobjdump 13.5 on the libk_fam.so fixture."""
    return arch[:-1] if arch.startswith("sm_") and arch.endswith("f") else arch


def compare_listing(name: str, ours: GpuCode | None, theirs: Counter[str]) -> list[str]:
    mine: Counter[str] = Counter()
    for code in ours.archs if ours else []:
        mine[_cuobjdump_name(code.arch)] += code.entries
    return [
        f"{name} {arch}: we read {mine[arch]} entries, cuobjdump lists {theirs[arch]}"
        for arch in sorted(set(mine) | set(theirs))
        if mine[arch] != theirs[arch]
    ]


_HINT = (
    "give --cuobjdump a working cuobjdump (pip install nvidia-cuda-cuobjdump), or "
    "--cuobjdump none to skip the cross-check"
)


def run_cuobjdump(
    cuobjdump: str, path: Path, env: Mapping[str, str], member: str | None = None, *, runner: Runner
) -> Counter[str]:
    """Entries per target as ``cuobjdump`` lists them; a tool that cannot run or fails is an
    error (its empty output is not an empty listing)."""
    try:
        done = runner.capture([cuobjdump, "--list-elf", "--list-ptx", path], env=env, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InspectError(f"--cuobjdump {cuobjdump} cannot be run: {why}", _HINT) from exc
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[:1]
        raise InspectError(
            f"--cuobjdump {cuobjdump} failed on {member or path.name} (exit status "
            f"{done.returncode}{': ' + said[0] if said else ''}), so nothing was cross-checked",
            _HINT,
        )
    return parse_listing(done.stdout)


def summary(tool: str, differences: list[str]) -> CrossCheck:
    return CrossCheck(tool=tool, agrees=not differences, differences=differences)
