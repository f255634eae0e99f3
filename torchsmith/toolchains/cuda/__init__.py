"""CUDA toolkit providers (``system``, ``pypi``, ``apt``) behind one interface, the toolkit
cache, and provider selection.

Importing this package starts nothing: the planner uses only :mod:`.offers` and :mod:`.select`
(pure); the providers themselves (:mod:`.system`, :mod:`.pypi`, :mod:`.apt`, which run
processes to provision a toolkit) are imported by the build's ``toolchain`` step through
:mod:`torchsmith.toolchains.provision`."""

from torchsmith.toolchains.cuda.base import (
    Capability,
    Offer,
    PackageRecord,
    ProvideContext,
    ProviderName,
    ToolkitProvider,
    ToolkitRecord,
)
from torchsmith.toolchains.cuda.select import (
    offers,
    select_toolkit,
    toolkit_problem,
    unavailable,
)

__all__ = [
    "Capability",
    "Offer",
    "PackageRecord",
    "ProvideContext",
    "ProviderName",
    "ToolkitProvider",
    "ToolkitRecord",
    "offers",
    "select_toolkit",
    "toolkit_problem",
    "unavailable",
]
