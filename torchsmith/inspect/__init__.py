"""What a wheel or an installed torch really contains: version, build options, GPU code per
library (SASS/PTX targets read from the fat binaries), linkage, C++ ABI, symbol-version floors,
wheel tags and sizes. Nothing is imported from the artifact itself except, for an installed
torch, one run of its interpreter."""

from torchsmith.inspect.api import inspect_artifact
from torchsmith.inspect.installed import inspect_installed
from torchsmith.inspect.model import Inspection
from torchsmith.inspect.wheel import inspect_wheel

__all__ = ["Inspection", "inspect_artifact", "inspect_installed", "inspect_wheel"]
