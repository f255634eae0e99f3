"""Facts about this machine, as candidates + selector: :func:`probe_host` finds what is here
(never crashing: unknown or broken tools become warnings), the ``select_*`` functions pick the
best candidate for a version request. The planner reads :class:`HostFacts` and never probes."""

from torchsmith.host.model import HostFacts
from torchsmith.host.probe import probe_host
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
    "probe_host",
    "require_compiler",
    "require_cuda",
    "select_compiler",
    "select_cuda",
    "select_python",
    "version_matches",
]
