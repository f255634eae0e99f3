"""Where each NEEDED library of a torch library comes from: inside torch, the system's
manylinux allow-list, the NVIDIA driver, an ``nvidia-*`` pip package, or nowhere."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from torchsmith.inspect.model import Dependency

# pypa/auditwheel@6d812f6:src/auditwheel/policy/manylinux-policy.json (lib_whitelist) + the loader
SYSTEM_LIBS = frozenset(
    {
        "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6",
        "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libX11.so.6", "libXext.so.6",
        "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0",
        "libgthread-2.0.so.0", "libglib-2.0.so.0", "libresolv.so.2", "libexpat.so.1",
        "libz.so.1", "ld-linux-x86-64.so.2",
    }
)  # fmt: skip
DRIVER_LIBS = frozenset({"libcuda.so.1", "libnvidia-ml.so.1"})
CUDA_LIB = re.compile(
    r"^lib(cudart|cublas|cublasLt|cudnn\w*|nccl|cufft\w*|curand|cusparse\w*|cusolver\w*|nvrtc\w*|"
    r"nvJitLink|cupti|cufile\w*|nvshmem\w*|nvToolsExt|nvperf\w*|cudss|magma\w*)\.so"
)
SYSTEM_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")


def _expand(entry: str, origin: str) -> str:
    return entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)


@dataclass(frozen=True)
class WheelResolver:
    """Resolution inside a wheel that is not installed: nothing outside it is looked at."""

    bundled: frozenset[str]

    def resolve(self, soname: str, search: Sequence[str], origin: str) -> Dependency:
        if soname in self.bundled:
            return Dependency(soname=soname, provider="bundled")
        if soname in SYSTEM_LIBS:
            return Dependency(soname=soname, provider="system")
        if soname in DRIVER_LIBS:
            return Dependency(soname=soname, provider="driver")
        pip_dirs = [e for e in search if "/nvidia/" in e]
        if CUDA_LIB.match(soname) and pip_dirs:
            return Dependency(soname=soname, provider="pip")
        return Dependency(soname=soname, provider="external")


@dataclass(frozen=True)
class DiskResolver:
    """Resolution of an installed torch: RPATH/RUNPATH (``$ORIGIN`` expanded), torch's own
    directory, ``LD_LIBRARY_PATH`` from ``env``, then the usual system directories."""

    bundled: Mapping[str, str]
    env: Mapping[str, str]
    extra_dirs: tuple[str, ...] = SYSTEM_DIRS

    def _dirs(self, search: Iterable[str], origin: str) -> list[str]:
        ld = [d for d in self.env.get("LD_LIBRARY_PATH", "").split(":") if d]
        return [_expand(e, origin) for e in search] + ld + list(self.extra_dirs)

    def resolve(self, soname: str, search: Sequence[str], origin: str) -> Dependency:
        if soname in self.bundled:
            return Dependency(soname=soname, provider="bundled", path=self.bundled[soname])
        for directory in self._dirs(search, origin):
            candidate = Path(directory) / soname
            if candidate.exists():
                path = str(candidate.resolve())
                provider = "pip" if "/nvidia/" in path else "found"
                if soname in SYSTEM_LIBS:
                    provider = "system"
                return Dependency(soname=soname, provider=provider, path=path)
        if soname in DRIVER_LIBS:
            return Dependency(soname=soname, provider="driver")
        return Dependency(soname=soname, provider="missing")
