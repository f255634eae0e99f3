"""A standard toolkit root over Debian's CUDA file layout (extracted with ``dpkg -x`` into a
prefix, or installed under ``/``). Everything is a relative symlink except ``bin/nvcc``, which is
copied: nvcc reads the ``nvcc.profile`` beside its real path, and Debian's points to
``/etc/nvcc.profile`` (the system's); ours points inside the root."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchsmith.toolchains.cuda.layout import ensure_lib64, link

TOOLKIT = "usr/lib/nvidia-cuda-toolkit"
MULTIARCH = "usr/lib/x86_64-linux-gnu"
BIN_TOOLS = (
    "ptxas",
    "fatbinary",
    "nvlink",
    "cudafe++",
    "bin2c",
    "cuobjdump",
    "nvdisasm",
    "nvprune",
    "cu++filt",
)
_LIB_PREFIXES = (
    "libcudart",
    "libcudadevrt",
    "libcublas",
    "libcufft",
    "libcurand",
    "libcusolver",
    "libcusparse",
    "libcupti",
    "libcuinj",
    "libnv",
    "libnpp",
    "libaccinj",
    "libculibos",
)
NVCC_PROFILE = """\
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""


def _bin(prefix: Path, root: Path) -> None:
    (root / "bin").mkdir(parents=True)
    shutil.copy2(prefix / TOOLKIT / "bin/nvcc", root / "bin/nvcc")
    (root / "bin/nvcc.profile").write_text(NVCC_PROFILE, encoding="utf-8")
    link(prefix / TOOLKIT / "bin/crt", root / "bin/crt")
    for tool in BIN_TOOLS:
        if (prefix / "usr/bin" / tool).exists():
            link(prefix / "usr/bin" / tool, root / "bin" / tool)


def _nvvm(prefix: Path, root: Path) -> None:
    link(prefix / TOOLKIT / "bin/cicc", root / "nvvm/bin/cicc")
    link(prefix / TOOLKIT / "libdevice", root / "nvvm/libdevice")
    link(prefix / "usr/include/nvvm.h", root / "nvvm/include/nvvm.h")
    for lib in sorted((prefix / MULTIARCH).glob("libnvvm.so*")):
        link(lib, root / "nvvm/lib64" / lib.name)


def _libs(prefix: Path, root: Path) -> None:
    libdir = prefix / MULTIARCH
    for lib in sorted(libdir.iterdir()):
        if lib.name.startswith(_LIB_PREFIXES) and (".so" in lib.name or lib.suffix == ".a"):
            link(lib, root / "lib64" / lib.name)
    if (libdir / "stubs").is_dir():
        link(libdir / "stubs", root / "lib64/stubs")
    ensure_lib64(root)


# Static archives a dynamically linked build still uses (device runtime, cudart_static for
# FindCUDA's default, the helper library of the static ones).
KEEP_STATIC = frozenset({"libcudadevrt.a", "libcudart_static.a", "libculibos.a"})


def prune_static(prefix: Path) -> int:
    """Remove the big ``*_static*.a`` CUDA archives under ``prefix`` (not KEEP_STATIC); bytes."""
    freed = 0
    for lib in (prefix / MULTIARCH).glob("*_static*.a"):
        if lib.name not in KEEP_STATIC and lib.is_file() and not lib.is_symlink():
            freed += lib.stat().st_size
            lib.unlink()
    return freed


def make_root(prefix: Path, root: Path) -> None:
    """Lay out ``root`` over the Debian files under ``prefix`` (a dpkg -x tree, or ``/``)."""
    _bin(prefix, root)
    _nvvm(prefix, root)
    link(prefix / "usr/include", root / "include")
    _libs(prefix, root)
