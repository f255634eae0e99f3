"""torchsmith: build PyTorch and its domain libraries from source, checked and verified."""

__version__ = "0.1.0"
