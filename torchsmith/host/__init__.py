"""Facts about this machine, as candidates + selector: :func:`torchsmith.host.probe.probe_host`
finds what is here (never crashing: unknown or broken tools become warnings), the ``select_*``
functions pick the best candidate for a version request. The planner reads :class:`HostFacts`
and never probes: this package's ``__init__`` imports nothing that starts a process (the probe
lives in :mod:`torchsmith.host.probe`, imported where it is used)."""

from torchsmith.host.model import HostFacts
from torchsmith.host.selection import (
    require_compiler,
    require_cuda,
    select_compiler,
    select_cuda,
    select_python,
    version_matches,
)

__all__ = [
    "HostFacts",
    "require_compiler",
    "require_cuda",
    "select_compiler",
    "select_cuda",
    "select_python",
    "version_matches",
]
