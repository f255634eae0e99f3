#!/usr/bin/env python3
"""Re-derive the PyPI-derivable facts of torchsmith/kb/data/releases.toml and print a diff.

What it derives, per torch release on PyPI (https://pypi.org/pypi/<project>/json):

* the release list itself and the upload date (earliest file of the release);
* ``python_min``/``python_max`` from the ``cpXY`` tags of the manylinux x86_64 wheels
  (free-threaded ``cpXYt`` builds are ignored); the KB range must lie within it and may be
  narrower where PyPI has preview wheels beyond the official support (torch 1.13 has cp311);
* the companions: the newest torchvision / torchaudio / torchtext release whose Linux x86_64
  wheel pins ``torch==<version>`` in its METADATA (read from the wheel with HTTP range requests);

and, unless ``--no-wheels``, facts read from files inside the smallest manylinux x86_64 torch
wheel of each release (HTTP range requests; only the zip directory and those files travel):

* ``torch/version.py``: the CUDA version of the default PyPI wheel (must be in ``cuda``);
* ``torch/share/cmake/Torch/TorchConfig.cmake``: ``CXX_STANDARD`` / ``cxx_std_NN`` and
  ``-D_GLIBCXX_USE_CXX11_ABI=N``;
* ``torch/share/cmake/Caffe2/public/cuda.cmake`` (installed copy of ``cmake/public/cuda.cmake``):
  "PyTorch requires CUDA X" and "PyTorch requires cuDNN Y";
* ``torch/include/c10/util/C++17.h`` / ``c10/macros/Macros.h``: "We need GCC N or later";
* ``torch/utils/cpp_extension.py``: whether it reads ``BUILD_SPLIT_CUDA``;
* ``*.dist-info/WHEEL``: the ``Generator`` (``scikit-build-core`` means a PEP 517-only build).

It never writes releases.toml: the file is curated by hand (each fact with its source); this
script shows where PyPI and the wheels disagree with it.  Results of wheel reads are cached in
``--cache`` (default ``~/.cache/torchsmith/refresh_releases``).

Usage: scripts/refresh_releases.py [--no-wheels] [--json] [--only 2.5.1 ...] [--cache DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPI = "https://pypi.org/pypi/{project}/json"
COMPANIONS = ("torchvision", "torchaudio", "torchtext")
RELEASES_TOML = Path(__file__).resolve().parent.parent / "torchsmith/kb/data/releases.toml"
DEFAULT_CACHE = Path.home() / ".cache/torchsmith/refresh_releases"
TIMEOUT = 60
# Releases published only on download.pytorch.org: scripts/refresh_previous_versions.py checks them.
NOT_ON_PYPI = {"1.8.2": "LTS: wheels only on download.pytorch.org/whl/lts/1.8"}
WHEEL_FILES = {
    "version": "torch/version.py",
    "torchconfig": "torch/share/cmake/Torch/TorchConfig.cmake",
    "cuda_cmake": "torch/share/cmake/Caffe2/public/cuda.cmake",
    "cpp17": "torch/include/c10/util/C++17.h",
    "macros": "torch/include/c10/macros/Macros.h",
    "cpp_extension": "torch/utils/cpp_extension.py",
}


# -- HTTP -------------------------------------------------------------------------------------
def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as resp:
        return json.load(resp)


class RangeFile(io.RawIOBase):
    """A read-only file over HTTP range requests, enough for zipfile to read one member."""

    def __init__(self, url: str) -> None:
        self.url, self.pos = url, 0
        head = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(head, timeout=TIMEOUT) as resp:
            self.size = int(resp.headers["Content-Length"])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = base + offset
        return self.pos

    def readinto(self, buf: Any) -> int:
        if self.pos >= self.size or len(buf) == 0:
            return 0
        end = min(self.pos + len(buf), self.size) - 1
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            data = resp.read()
        buf[: len(data)] = data
        self.pos += len(data)
        return len(data)


def open_wheel(url: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BufferedReader(RangeFile(url), buffer_size=1 << 20))


# -- pure parsing (unit-tested) ---------------------------------------------------------------
def linux_wheels(files: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The manylinux/linux x86_64 wheels of one release, first uploaded first (later uploads
    can be rebuilds against another torch, e.g. torchtext 0.16.2's cp312 wheel pins torch 2.2.0)."""
    wheels = [
        f
        for f in files
        if f["filename"].endswith(".whl") and "linux" in f["filename"] and "x86_64" in f["filename"]
    ]
    return sorted(wheels, key=lambda f: (f.get("upload_time", ""), f["size"]))


def python_range(filenames: Iterable[str]) -> tuple[str, str] | None:
    """(min, max) Python of the cpXY wheels among ``filenames``; free-threaded tags ignored."""
    found = set()
    for name in filenames:
        parts = name[:-4].split("-")
        if len(parts) < 5:  # name-version[-build]-py-abi-platform
            continue
        py, abi = parts[-3], parts[-2]
        if re.fullmatch(r"cp\d+", py) and not abi.endswith("t"):
            found.add((int(py[2]), int(py[3:])))
    if not found:
        return None
    lo, hi = min(found), max(found)
    return f"{lo[0]}.{lo[1]}", f"{hi[0]}.{hi[1]}"


def torch_pin(metadata: str) -> str | None:
    """The exact ``torch==X`` pin of a companion's METADATA (local versions don't count)."""
    for line in metadata.splitlines():
        m = re.match(r"Requires-Dist:\s*torch\s*\(?\s*==\s*([0-9][0-9.]*)\s*\)?\s*$", line)
        if m:
            return m.group(1)
    return None


def first(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text)
    return m.group(1) if m else None


def wheel_facts(texts: Mapping[str, str]) -> dict[str, Any]:
    """Facts read from the files of a torch wheel (keys of WHEEL_FILES plus 'wheel')."""
    cfg = texts.get("torchconfig", "")
    std = first(r"CXX_STANDARD (\d+)", cfg) or first(r"cxx_std_(\d+)", cfg)
    abi = first(r"-D_GLIBCXX_USE_CXX11_ABI=([01])", cfg)
    gcc = first(r"We need GCC (\d+(?:\.\d+)?)", texts.get("cpp17", "") + texts.get("macros", ""))
    cuda_cmake = texts.get("cuda_cmake", "")
    return {
        "default_cuda": first(
            r"(?m)^cuda\b[^=]*=\s*'(\d+\.\d+)", _multiline(texts.get("version", ""))
        ),
        "git_version": first(r"git_version\s*=\s*'([0-9a-f]{40})'", texts.get("version", "")),
        "cxx_standard": int(std) if std else None,
        "cxx11_abi": None if abi is None else abi == "1",
        "cuda_min": first(r"requires CUDA (\d+\.\d+)", cuda_cmake),
        "cudnn_min": first(r"requires cuDNN (\d+(?:\.\d+)?)", cuda_cmake),
        "gcc_min": gcc,
        "generator": first(r"Generator:\s*(.+)", texts.get("wheel", "")),
        "split_cuda": "BUILD_SPLIT_CUDA" in texts.get("cpp_extension", ""),
    }


def _multiline(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines())


def frontend_of(generator: str | None) -> str | None:
    if not generator:
        return None
    return "pep517" if generator.startswith("scikit-build-core") else "setup.py"


# -- PyPI -------------------------------------------------------------------------------------
def release_versions(project: Mapping[str, Any]) -> list[str]:
    out = []
    for text, files in project["releases"].items():
        try:
            ver = Version(text)
        except InvalidVersion:
            continue
        if files and not ver.is_prerelease and not ver.is_devrelease:
            out.append(text)
    return sorted(out, key=Version)


def file_url(project: str, entry: Mapping[str, Any]) -> str:
    # PyPI (or a mirror in front of it) may give URLs relative to the JSON endpoint.
    return urllib.parse.urljoin(PYPI.format(project=project), entry["url"])


def pypi_facts(project: Mapping[str, Any], version: str) -> dict[str, Any]:
    files = project["releases"][version]
    rng = python_range(f["filename"] for f in linux_wheels(files))
    return {
        "date": min(f["upload_time"] for f in files)[:10],
        "requires_python": sorted({f["requires_python"] or "" for f in files}),
        "python_min": rng[0] if rng else None,
        "python_max": rng[1] if rng else None,
    }


class Cache:
    """JSON file of results of wheel reads, keyed by wheel filename."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / "wheels.json" if directory else None
        self.data: dict[str, Any] = {}
        if self.path and self.path.exists():
            self.data = json.loads(self.path.read_text())

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def put(self, key: str, value: Any) -> None:
        self.data[key] = value
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.data, indent=1, sort_keys=True))


def read_members(url: str, wanted: Mapping[str, str]) -> dict[str, str]:
    zf = open_wheel(url)
    names = set(zf.namelist())
    texts = {
        key: zf.read(path).decode("utf-8", "replace")
        for key, path in wanted.items()
        if path in names
    }
    for name in names:
        if name.endswith(".dist-info/WHEEL"):
            texts["wheel"] = zf.read(name).decode()
        if name.endswith(".dist-info/METADATA"):
            texts["metadata"] = zf.read(name).decode("utf-8", "replace")
    return texts


def torch_wheel_facts(project: Mapping[str, Any], version: str, cache: Cache) -> dict[str, Any]:
    wheels = linux_wheels(project["releases"][version])
    if not wheels:
        return {}
    key = wheels[0]["filename"]
    if cache.get(key) is None:
        texts = read_members(file_url("torch", wheels[0]), WHEEL_FILES)
        cache.put(key, {**wheel_facts(texts), "wheel_file": key})
    return dict(cache.get(key))


def companion_map(name: str, project: Mapping[str, Any], cache: Cache) -> dict[str, str]:
    """torch version -> newest companion release whose Linux wheel pins exactly that torch."""
    pins: dict[str, str] = {}
    for version in release_versions(project):
        wheels = linux_wheels(project["releases"][version])
        if not wheels:
            continue
        key = wheels[0]["filename"]
        if cache.get(key) is None:
            texts = read_members(file_url(name, wheels[0]), {})
            cache.put(key, {"torch_pin": torch_pin(texts.get("metadata", ""))})
        pin = cache.get(key)["torch_pin"]
        if pin and (pin not in pins or Version(version) > Version(pins[pin])):
            pins[pin] = version
    return pins


# -- compare ----------------------------------------------------------------------------------
def derive(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    cache = Cache(None if args.no_cache else Path(args.cache))
    torch = get_json(PYPI.format(project="torch"))
    versions = [v for v in release_versions(torch) if Version(v) >= Version("1.0.0")]
    if args.only:
        versions = [v for v in versions if v in set(args.only)]
    derived = {v: pypi_facts(torch, v) for v in versions}
    if args.no_wheels:
        return derived
    for name in COMPANIONS:
        pins = companion_map(name, get_json(PYPI.format(project=name)), cache)
        for v in versions:
            derived[v][name] = pins.get(v)
    for v in versions:
        print(f"reading torch {v} wheel …", file=sys.stderr)
        derived[v].update(torch_wheel_facts(torch, v, cache))
    return derived


def expected_fields(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The releases.toml fields these facts speak for, as the KB spells them."""
    fields = {"date": facts.get("date")}
    for name in COMPANIONS:
        if facts.get(name):  # a missing pin does not prove "no release": not compared
            fields[name] = facts[name]
    for key in ("cxx_standard", "cuda_min", "split_cuda"):
        if facts.get(key) is not None:
            fields[key] = facts[key]
    if facts.get("cudnn_min"):  # "requires cuDNN 7" is spelled 7.0 in the KB
        fields["cudnn_min"] = (
            str(Version(facts["cudnn_min"]).major) + "." + str(Version(facts["cudnn_min"]).minor)
        )
    if facts.get("cxx11_abi") is not None:
        fields["cxx11_abi_official"] = facts["cxx11_abi"]
    if frontend_of(facts.get("generator")):
        fields["frontend"] = frontend_of(facts.get("generator"))
    return fields


def python_diff(version: str, rec: Mapping[str, Any], facts: Mapping[str, Any]) -> list[str]:
    """The KB range must lie within the wheels' range; it may be narrower (official support)."""
    lo, hi = facts.get("python_min"), facts.get("python_max")
    if not (lo and hi and rec.get("python_min") and rec.get("python_max")):
        return []
    if Version(rec["python_min"]) < Version(lo) or Version(rec["python_max"]) > Version(hi):
        kb_range = f"{rec['python_min']}-{rec['python_max']}"
        return [f"~ torch {version}: python: kb={kb_range} but wheels cover {lo}-{hi}"]
    return []


def diff(
    derived: Mapping[str, Mapping[str, Any]], records: list[dict[str, Any]], complete: bool = True
) -> list[str]:
    """Lines saying where releases.toml differs; ``complete``: derived covers every release."""
    by_version = {r["torch"]: r for r in records}
    lines = [
        f"+ torch {v}: on PyPI, missing from releases.toml" for v in derived if v not in by_version
    ]
    for version, facts in derived.items():
        rec = by_version.get(version)
        if rec is None:
            continue
        for field, value in expected_fields(facts).items():
            if value is not None and rec.get(field) != value:
                lines.append(f"~ torch {version}: {field}: kb={rec.get(field)!r} derived={value!r}")
        lines += python_diff(version, rec, facts)
        cuda = facts.get("default_cuda")
        if cuda and cuda not in rec.get("cuda", []):
            lines.append(f"~ torch {version}: cuda: default PyPI wheel is CUDA {cuda}, not in kb")
    if complete:
        lines += [
            f"- torch {v}: in releases.toml, not a release on PyPI"
            for v in by_version
            if v != "main" and v not in derived and v not in NOT_ON_PYPI
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--no-wheels", action="store_true", help="PyPI JSON only (fast)")
    parser.add_argument("--json", action="store_true", help="print the derived facts as JSON")
    parser.add_argument("--only", nargs="*", help="limit to these torch versions")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="wheel-read cache directory")
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args(argv)
    try:
        derived = derive(args)
    except (urllib.error.URLError, TimeoutError) as exc:
        print(
            f"refresh_releases: cannot reach PyPI ({exc}); try again or use --cache",
            file=sys.stderr,
        )
        return 2
    if args.json:
        print(json.dumps(derived, indent=1))
        return 0
    records = tomllib.loads(RELEASES_TOML.read_text())["release"]
    lines = diff(derived, records, complete=not args.only)
    print(
        "\n".join(lines) if lines else f"releases.toml agrees with PyPI ({len(derived)} releases)"
    )
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
