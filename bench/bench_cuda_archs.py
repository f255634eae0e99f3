"""Compile time and object size of real ATen CUDA kernels for one GPU arch versus the release's
official arch list (issue 15's fourth benchmark).

Two partial builds of Debian's torch 1.13.1 with CUDA 11.8 (the apt toolkit, gcc-11, no
compiler cache) build the same kernel objects: once for ``--gpu 8.6`` and once for the official
list of 1.13 + CUDA 11.7 wheels (3.7;5.0;6.0;7.0;7.5;8.0;8.6, from the knowledge base). Per
object: ninja's own start/end (``.ninja_log``) and the object's size; the SASS of each object is
read back to check the arch set.

    python bench/bench_cuda_archs.py --cache-root DIR [--kernel Fill ...] [--work DIR]

``--cache-root`` should hold the sources and the CUDA 11.8 toolkit already (e.g. the test
cache, ``.cache/test``); each run gets its own workspace (``--build-version``)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from elftools.elf.elffile import ELFFile

from torchsmith import kb
from torchsmith.inspect.elf import read_elf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

OBJ = "caffe2/CMakeFiles/torch_cuda_cu.dir/__/aten/src/ATen/native/cuda/{}Kernel.cu.o"
KERNELS = ["Fill", "Abs", "ActivationGelu", "BinaryMul", "CompareEQ"]


def official() -> str:
    found = kb.load().official_arch_list("1.13.1", "11.7")
    assert found is not None, "the knowledge base has no official list for 1.13.1 + 11.7"
    return found.arch_list


def build(cache_root: Path, out: Path, archs: str, kernels: list[str]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "torchsmith", "build", "--torch", "1.13.1", "--cuda", "11.8"]
    argv += [f"--gpu={a}" for a in archs.split(";")]
    argv += ["--source", "debian", "--toolkit", "apt", "--compiler", "gcc-11", "--cache", "none"]
    argv += ["--build-version", f"1.13.1+bench{len(archs.split(';'))}"]
    argv += [f"--target={OBJ.format(k)}" for k in kernels]
    argv += ["--cache-root", str(cache_root), "--output-dir", str(out)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    (manifest,) = out.glob("*.manifest.json")
    data: dict[str, Any] = json.loads(manifest.read_text())
    return data


def ninja_times(build_dir: Path) -> dict[str, float]:
    """Seconds per output from ninja's log (v5: start end mtime path hash, milliseconds)."""
    times: dict[str, float] = {}
    for line in (build_dir / ".ninja_log").read_text().splitlines()[1:]:
        start, end, _mtime, path, *_ = line.split("\t")
        times[path] = (int(end) - int(start)) / 1000
    return times


def fatbin_bytes(path: Path) -> int:
    """Size of the object's device code (its ``.nv_fatbin`` section)."""
    with path.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".nv_fatbin")
        return 0 if section is None else int(section["sh_size"])


def linked_bytes(objects: list[Path], work: Path) -> int:
    """Size of a stripped shared library linked from ``objects`` (what a wheel carries: the
    objects' symbol tables and relocations are gone, the host code and fat binaries stay)."""
    lib = work / "libkernels.so"
    subprocess.run(["g++", "-shared", "-o", str(lib), *map(str, objects)], check=True)
    subprocess.run(["strip", "--strip-unneeded", str(lib)], check=True)
    return lib.stat().st_size


def measure(manifest: dict[str, Any], kernels: list[str], work: Path) -> list[dict[str, Any]]:
    build_dir = Path(manifest["source"]["built_in"]) / "build"
    times = ninja_times(build_dir)
    rows = []
    for k in kernels:
        obj = build_dir / OBJ.format(k)
        sass = sorted({e.arch for e in read_elf(obj).fatbin if e.kind == "sass"})
        rows.append({"kernel": k, "seconds": times[OBJ.format(k)], "bytes": obj.stat().st_size,
                     "fatbin_bytes": fatbin_bytes(obj), "sass": sass})  # fmt: skip
    objects = [build_dir / OBJ.format(k) for k in kernels]
    rows.append({"kernel": "linked", "bytes": linked_bytes(objects, work)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-root", type=Path, required=True)
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--name", default="cuda-archs", help="docs/measured/<name>.json")
    args = parser.parse_args()
    load_before = _measured.load()
    kernels = args.kernel or KERNELS
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-archs-"))
    sets = {"one": "8.6", "official": official()}
    results = {}
    for name, archs in sets.items():
        manifest = build(args.cache_root, work / name, archs, kernels)
        results[name] = measure(manifest, kernels, work / name)
        print(f"{name} ({archs}):")
        for row in results[name][:-1]:
            device = row["fatbin_bytes"] / 1e6
            print(f"  {row['kernel']:<16} {row['seconds']:7.1f} s {row['bytes'] / 1e6:7.2f} MB "
                  f"(device {device:.2f} MB) {' '.join(row['sass'])}")  # fmt: skip
        print(f"  linked, stripped  {results[name][-1]['bytes'] / 1e6:.2f} MB")
    one, full = results["one"][:-1], results["official"][:-1]
    pairs = (("seconds", "seconds"), ("objects", "bytes"), ("device code", "fatbin_bytes"))
    for what, key in pairs:
        a, b = sum(r[key] for r in one), sum(r[key] for r in full)
        print(f"{what}: {a:.6g} vs {b:.6g} ({b / a:.2f}x)")
    a, b = results["one"][-1]["bytes"], results["official"][-1]["bytes"]
    print(f"linked library: {a} vs {b} bytes ({b / a:.2f}x)")
    print(json.dumps(results))
    print("wrote", _measured.write(args.name, {"sets": sets, "n": 1, **results}, load_before))


if __name__ == "__main__":
    main()
