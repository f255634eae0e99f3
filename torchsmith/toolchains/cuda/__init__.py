"""CUDA toolkit providers (``system``, ``pypi``, ``apt``) behind one interface, the toolkit
cache, and provider selection. Any other version: the container backend's CUDA images."""

from torchsmith.toolchains.cuda.apt import AptProvider
from torchsmith.toolchains.cuda.base import (
    Capability,
    Offer,
    PackageRecord,
    ProvideContext,
    ProviderName,
    ToolkitProvider,
    ToolkitRecord,
)
from torchsmith.toolchains.cuda.pypi import PypiProvider
from torchsmith.toolchains.cuda.select import (
    default_providers,
    offers,
    select_toolkit,
    toolkit_problem,
    unavailable,
)
from torchsmith.toolchains.cuda.system import SystemProvider

__all__ = [
    "AptProvider",
    "Capability",
    "Offer",
    "PackageRecord",
    "ProvideContext",
    "ProviderName",
    "PypiProvider",
    "SystemProvider",
    "ToolkitProvider",
    "ToolkitRecord",
    "default_providers",
    "offers",
    "select_toolkit",
    "toolkit_problem",
    "unavailable",
]
