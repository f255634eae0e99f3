"""Debian source control files (.dsc): the files they pin, and the build dependencies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from debian import deb822

from torchsmith.errors import SourceError
from torchsmith.hashing import sha256_file

# The Build-Depends a CPU build with system libraries really needs (the "core set" measured in
# docs/debian-source-builds.md §1.2; §2.2 adds httplib/nlohmann for 2.x). Build-Depends outside
# this set (opencv, ffmpeg, zmq, leveldb, lmdb, opencl, dnnl, ideep, gloo, tensorpipe, mpi, ...)
# are left out; they are named as optional.
CORE = frozenset(
    (
        "cmake", "ninja-build", "python3", "python3-dev", "python3-yaml", "python3-numpy",
        "python3-setuptools", "python3-typing-extensions", "python3-cffi", "python3-distutils",
        "libcpuinfo-dev", "libfp16-dev", "libfxdiv-dev", "libpsimd-dev", "libpthreadpool-dev",
        "libsleef-dev", "libeigen3-dev", "libfmt-dev", "libprotobuf-dev", "libprotoc-dev",
        "protobuf-compiler", "pybind11-dev", "python3-pybind11", "libonnx-dev", "python3-onnx",
        "libblas-dev", "liblapack-dev", "libbenchmark-dev", "googletest", "libgoogle-glog-dev",
        "libgflags-dev", "libflatbuffers-dev", "flatbuffers-compiler-dev", "libnuma-dev",
        "libzstd-dev", "libsnappy-dev", "libxnnpack-dev", "libnop-dev", "libasio-dev",
        "libcpp-httplib-dev", "nlohmann-json3-dev",
    )
)  # fmt: skip
# Needed although the .dsc does not list them (setup.py imports typing_extensions).
ALWAYS = ("python3-typing-extensions",)


@dataclass(frozen=True)
class DscFile:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Dsc:
    source: str
    version: str
    format: str
    files: tuple[DscFile, ...]
    build_depends: tuple[str, ...]

    def file_named(self, suffix: str) -> DscFile | None:
        return next((f for f in self.files if f.name.endswith(suffix)), None)

    @property
    def orig(self) -> DscFile:
        found = next((f for f in self.files if ".orig.tar." in f.name), None)
        found = found or next((f for f in self.files if ".tar." in f.name), None)
        if found is None:
            raise SourceError(f"{self.source} {self.version}: the .dsc lists no tarball")
        return found

    @property
    def debian(self) -> DscFile | None:
        return next((f for f in self.files if ".debian.tar." in f.name), None)


def _enabled(alt: deb822.PkgRelation.ParsedRelation, arch: str) -> bool:
    restrictions = alt.get("arch")
    if not restrictions:
        return True
    positive = [r.arch for r in restrictions if r.enabled]
    negative = {r.arch for r in restrictions if not r.enabled}
    return arch not in negative and (not positive or arch in positive)


def build_depends(field: str, arch: str) -> tuple[str, ...]:
    """Package names of Build-Depends for ``arch`` (first alternative of each group)."""
    names: list[str] = []
    for group in deb822.PkgRelation.parse_relations(field):
        alts = [alt for alt in group if _enabled(alt, arch)]
        if alts:
            names.append(str(alts[0]["name"]))
    return tuple(names)


def parse_dsc(text: str, arch: str) -> Dsc:
    """Read a (signed or unsigned) .dsc."""
    data = deb822.Dsc(text)
    if "Source" not in data or "Checksums-Sha256" not in data:
        raise SourceError("not a Debian .dsc: no Source or Checksums-Sha256 field")
    files = tuple(
        DscFile(row["name"], int(row["size"]), row["sha256"]) for row in data["Checksums-Sha256"]
    )
    deps = build_depends(data.get("Build-Depends", ""), arch)
    return Dsc(data["Source"], data["Version"], data.get("Format", "1.0"), files, deps)


def verify_files(dsc: Dsc, directory: Path, names: Iterable[str]) -> dict[str, str]:
    """Check size and sha256 of each named file against the .dsc; ``name -> sha256``."""
    result = {}
    for entry in (f for f in dsc.files if f.name in set(names)):
        path = directory / entry.name
        size = path.stat().st_size
        digest = sha256_file(path)
        if size != entry.size or digest != entry.sha256:
            raise SourceError(
                f"{path} does not match {dsc.source}_{dsc.version}.dsc "
                f"(size {size} vs {entry.size}, sha256 {digest} vs {entry.sha256})",
                "delete the file and fetch again; if it persists the mirror is corrupt",
            )
        result[entry.name] = digest
    return result


def needed_packages(dsc: Dsc) -> tuple[list[str], list[str]]:
    """(core packages to install, Build-Depends left out as optional)."""
    core = [name for name in dsc.build_depends if name in CORE]
    core += [name for name in ALWAYS if name not in core]
    optional = [name for name in dsc.build_depends if name not in CORE]
    return core, optional
