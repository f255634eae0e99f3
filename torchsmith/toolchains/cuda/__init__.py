"""CUDA toolkit providers (``system``, ``pypi``, ``apt``) behind one interface, the toolkit
cache, and provider selection.

Importing this package starts nothing: the planner decides which provider (pure:
:mod:`torchsmith.planner.toolkit_offers`, :mod:`torchsmith.planner.toolkit_select`); the
providers themselves (:mod:`.system`, :mod:`.pypi`, :mod:`.apt`, which run processes to provision
a toolkit) are imported by the build's ``toolchain`` step through
:mod:`torchsmith.toolchains.provision`."""

from torchsmith.planner.toolkit_offers import Capability, Offer, ProviderName
from torchsmith.planner.toolkit_select import (
    offers,
    select_toolkit,
    toolkit_problem,
    unavailable,
)
from torchsmith.toolchains.cuda.base import (
    PackageRecord,
    ProvideContext,
    ToolkitProvider,
    ToolkitRecord,
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
