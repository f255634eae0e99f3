"""``--preset official``: the settings PyTorch's own 1.x packages were built with, each with the
file it comes from. The conda build script of pytorch/builder (the one seed 001 ran for
``pytorch-1.8.0-py3.8_cuda11.0.221_cudnn8.0.5_0``) sets, for every CUDA build::

    export TORCH_NVCC_FLAGS="-Xfatbin -compress-all"
    export USE_STATIC_CUDNN=1 # links cudnn statically (driven by tools/setup_helpers/cudnn.py)
    export USE_STATIC_NCCL=1  # links nccl statically (...)

except ``USE_STATIC_CUDNN=0`` for CUDA 11.5 (cuDNN 8.3.2 has no single ``libcudnn_static.a``).
``NCCL_ROOT_DIR=/usr/local/cuda`` there is the location of that image's NCCL, not a setting:
torchsmith takes it from ``nccl.root`` (spec) when a system NCCL is used."""

from __future__ import annotations

BUILDER_CONDA = (
    "pytorch/builder@02aceb42f0da9a942a8cdfa5fc0c0b96e261aaaa:conda/pytorch-nightly/build.sh"
)
NVCC_FLAGS = "-Xfatbin -compress-all"
NVCC_FLAGS_WHY = f"official binaries compress their fat binaries ({BUILDER_CONDA})"
NO_STATIC_CUDNN = {"11.5": "cuDNN 8.3.2 ships no single libcudnn_static.a"}


def static_why(lib: str) -> str:
    return (
        f"official 1.x binaries link {lib} statically: USE_STATIC_{lib.upper()}=1 ({BUILDER_CONDA})"
    )


def links_statically(torch: str | None, lib: str, cuda: str | None) -> bool:
    """Whether the official 1.x CUDA packages of ``torch`` link ``lib`` (cudnn/nccl) statically."""
    if torch is None or not torch.startswith("1.") or cuda is None:
        return False
    return not (lib == "cudnn" and cuda in NO_STATIC_CUDNN)
