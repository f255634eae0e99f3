#!/usr/bin/env python3
"""N Pythons ≈ one build? The same partial torch 1.13.1 build (Debian source tree, as a
torchsmith workspace leaves it: fetched, fixed, configured once) for several Pythons, each in a
build directory of its own, sharing one ccache with ``CCACHE_BASEDIR`` = the tree (what
torchsmith's cache section does across workspaces). Objects that do not include Python.h
(c10) hit the cache for every Python after the first; torch_python objects miss.

    python bench/bench_pythons.py TREE [--python /path/python3.X ...] [--cache DIR]

TREE is ``<cache root>/builds/<hash>/src`` of a ``torchsmith build --source debian --torch
1.13.1`` (any target). Each Python gets a venv with pyyaml + typing_extensions (the code
generators run with it). Prints one line per Python and the ratio N Pythons / one Python.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _measured

PY_OBJECTS = tuple(
    f"caffe2/torch/CMakeFiles/torch_python.dir/csrc/{name}.cpp.o"
    for name in ("Size", "Dtype", "Layout", "Device", "TypeInfo")
)
TARGETS = ("c10", *PY_OBJECTS)
# The plan's switches for this tree (the configure log of `torchsmith build --source debian
# --torch 1.13.1`), numpy off: the other Pythons have none.
OFF = ("CUDA", "CUDNN", "DISTRIBUTED", "FBGEMM", "ITT", "KINETO", "MAGMA", "MKLDNN", "NCCL",
       "NNPACK", "NUMA", "NUMPY", "PYTORCH_QNNPACK", "QNNPACK", "ROCM", "XNNPACK",
       "CCACHE")  # fmt: skip
OPTIONS = ("BUILD_CUSTOM_PROTOBUF=0", "BUILD_PYTHON=True", "BUILD_TEST=False",
           "CMAKE_BUILD_TYPE=Release", "USE_SYSTEM_LIBS=1", "CMAKE_POLICY_VERSION_MINIMUM=3.5",
           *(f"USE_{name}=0" for name in OFF))  # fmt: skip


def python_facts(python: str) -> dict[str, str]:
    code = (
        "import sysconfig, json, sys; v = sysconfig.get_config_vars(); "
        "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], "
        "'include': sysconfig.get_paths()['include'], "
        "'library': v.get('LIBDIR', '') + '/' + (v.get('LDLIBRARY') or '')}))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    facts: dict[str, str] = json.loads(out.stdout)
    return facts


def venv_for(python: str, root: Path) -> Path:
    venv = root / f"venv-{Path(python).name}"
    if not (venv / "bin" / "python").exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "pyyaml", "typing_extensions"], check=True)
    return venv / "bin" / "python"


def timed(argv: list[str], env: dict[str, str], log: Path) -> float:
    start = time.monotonic()
    with log.open("a") as fh:
        subprocess.run(argv, env=env, stdout=fh, stderr=subprocess.STDOUT, check=True)
    return time.monotonic() - start


def ccache_counts(env: dict[str, str]) -> tuple[int, int]:
    argv = ["ccache", "--print-stats"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    values = dict(line.split("\t") for line in out.stdout.splitlines() if "\t" in line)
    hits = int(values["direct_cache_hit"]) + int(values["preprocessed_cache_hit"])
    return hits, int(values["cache_miss"])


def build_for(tree: Path, python: str, env: dict[str, str], work: Path) -> dict[str, Any]:
    facts, vpython = python_facts(python), venv_for(python, work)
    bdir = tree / f"build-py{facts['version']}"
    shutil.rmtree(bdir, ignore_errors=True)
    defs = [f"-D{o}" for o in OPTIONS] + [f"-DPYTHON_EXECUTABLE={vpython}",
            f"-DPYTHON_INCLUDE_DIR={facts['include']}", f"-DPYTHON_LIBRARY={facts['library']}",
            *(f"-DCMAKE_{lang}_COMPILER_LAUNCHER=ccache" for lang in ("C", "CXX"))]  # fmt: skip
    log = work / f"py{facts['version']}.log"
    before = ccache_counts(env)
    configure = timed(["cmake", "-GNinja", "-S", str(tree), "-B", str(bdir), *defs], env, log)
    build = timed(["cmake", "--build", str(bdir), "-j2", "--target", *TARGETS], env, log)
    after = ccache_counts(env)
    hits, misses = after[0] - before[0], after[1] - before[1]
    return {"python": facts["version"], "configure": configure, "build": build,
            "hits": hits, "misses": misses}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", type=Path)
    parser.add_argument("--python", action="append", default=[])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bench-pythons-ccache"))
    parser.add_argument("--name", default="pythons", help="docs/measured/<name>.json")
    args = parser.parse_args()
    load_before = _measured.load()
    pythons = args.python or [sys.executable]
    work = args.cache.parent / "bench-pythons-work"
    work.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(args.cache, ignore_errors=True)  # cold: the first Python fills it
    env = {**os.environ, "CCACHE_DIR": str(args.cache), "CCACHE_BASEDIR": str(args.tree),
           "CCACHE_NOHASHDIR": "1", "MAX_JOBS": "2"}  # fmt: skip
    rows = [build_for(args.tree.resolve(), p, env, work) for p in pythons]
    for row in rows:
        print(f"python {row['python']}: configure {row['configure']:.1f} s, build "
              f"{row['build']:.1f} s, ccache {row['hits']:.0f} hits / "
              f"{row['misses']:.0f} misses")  # fmt: skip
    one = rows[0]["configure"] + rows[0]["build"]
    total = sum(r["configure"] + r["build"] for r in rows)
    compile_ratio = sum(r["build"] for r in rows) / rows[0]["build"]
    print(f"{len(rows)} Pythons / one Python: {total / one:.2f}x wall "
          f"(build step alone {compile_ratio:.2f}x); sysconfig of this script: "
          f"{sysconfig.get_python_version()}")  # fmt: skip
    results = {"rows": rows, "n": 1, "ratio_wall": round(total / one, 3),
               "ratio_build_step": round(compile_ratio, 3)}  # fmt: skip
    print("wrote", _measured.write(args.name, results, load_before))


if __name__ == "__main__":
    main()
