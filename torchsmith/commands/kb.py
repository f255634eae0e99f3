"""`torchsmith kb`: look things up in the knowledge base."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from torchsmith import kb as kbmod
from torchsmith.console import print_json, print_table
from torchsmith.console import table as console_table
from torchsmith.kb.view import load_view

if TYPE_CHECKING:  # the records are read without pydantic (kb.view): start-up time
    from torchsmith.kb.models import CudaRelease, Gpu, Release


def release_json(rel: Release) -> dict[str, Any]:
    return {
        "torch": rel.torch,
        "tag": rel.tag,
        "date": rel.date,
        "torchvision": rel.torchvision,
        "torchaudio": rel.torchaudio,
        "torchtext": rel.torchtext,
        "python": {"min": rel.python_min, "max": rel.python_max},
        "cuda": list(rel.cuda),
        "cxx_standard": rel.cxx_standard,
        "gcc_min": rel.gcc_min,
        "cuda_min": rel.cuda_min,
        "cudnn_min": rel.cudnn_min,
        "cmake_min": rel.cmake_min,
        "frontend": rel.frontend,
        "env_style": rel.env_style,
        "split_cuda": rel.split_cuda,
        "cxx11_abi_official": rel.cxx11_abi_official,
        "sources": dict(rel.sources),
        "notes": rel.notes,
    }


def cuda_json(rel: CudaRelease) -> dict[str, Any]:
    return {
        "version": rel.version,
        "gcc_max": rel.gcc_max,
        "clang_max": rel.clang_max,
        "archs": list(rel.archs),
        "deprecated_archs": list(rel.deprecated_archs),
        "driver_min_linux": rel.driver_min_linux,
        "sources": dict(rel.sources),
        "notes": rel.notes,
    }


def gpu_json(gpu: Gpu) -> dict[str, Any]:
    return {
        "name": gpu.name,
        "aliases": list(gpu.aliases),
        "compute_capability": gpu.compute_capability,
        "family": gpu.family,
        "architecture": gpu.architecture,
        "sources": dict(gpu.sources),
    }


def _cell(key: str, value: Any) -> str:
    if key == "sources":
        return "\n".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return "none" if value is None else str(value)


def _table(title: str, data: dict[str, Any]) -> Table:
    table = console_table(title, "key", "value", show_header=False)
    for key, value in data.items():
        table.add_row(key, escape(_cell(key, value)))
    return table


def _show(args: argparse.Namespace, title: str, data: dict[str, Any]) -> int:
    if args.json:
        print_json(data)
    else:
        print_table(_table(title, data))
    return 0


def _release(args: argparse.Namespace) -> int:
    base = load_view()
    rel = base.release(args.version)
    return _show(args, f"torch {rel.torch}", _with_ranges(release_json(rel), base, rel))


def _with_ranges(data: dict[str, Any], base: kbmod.KnowledgeBase, rel: Release) -> dict[str, Any]:
    """What the release's own build accepts as GPU targets, and its free-threaded Pythons."""
    parser = base.arch_parser(rel.torch)
    if parser is None:
        return data
    accepts = ", ".join(parser.extension_archs) or f"anything matching {parser.cmake_pattern}"
    sources = {
        **data["sources"],
        "gpu_targets": parser.sources["extension_archs"],
        "free_threaded": parser.sources["free_threaded"],
    }
    free = ", ".join(f"{p}t" for p in parser.free_threaded) or "none"
    return {**data, "gpu_targets": accepts, "free_threaded": free, "sources": sources}


def _cuda(args: argparse.Namespace) -> int:
    rel = load_view().cuda(args.version)
    return _show(args, f"CUDA {rel.version}", cuda_json(rel))


_CC = re.compile(r"^(sm_\d{2,3}|\d{1,2}\.\d[af]?)(\+PTX)?$", re.IGNORECASE)


def _capability(args: argparse.Namespace) -> int:
    """`kb gpu 8.6`: the GPUs of that compute capability and the CUDA versions that build it."""
    gpus, cudas = load_view().compute_capability(args.name)
    data = {
        "compute_capability": args.name,
        "gpus": [g.name for g in gpus],
        "cuda": cudas,
        "sources": {
            "gpus": "; ".join(sorted({v for g in gpus for v in g.sources.values()})),
            "cuda": "the archs of each CUDA record (`torchsmith kb cuda VERSION` names them)",
        },
    }
    return _show(args, f"compute capability {args.name}", data)


def _gpu(args: argparse.Namespace) -> int:
    if _CC.match(args.name.strip()):
        return _capability(args)
    gpu = load_view().gpu(args.name)
    return _show(args, gpu.name, gpu_json(gpu))


def _releases(args: argparse.Namespace) -> int:
    rows = [release_json(r) for r in load_view().releases]
    if args.json:
        print_json(rows)
        return 0
    cols = ("torch", "torchvision", "torchaudio", "torchtext", "python", "cuda")
    table = console_table("torch releases", *cols)
    for r in rows:
        py = f"{r['python']['min']}–{r['python']['max']}"
        comp = [r[c] or "—" for c in ("torchvision", "torchaudio", "torchtext")]
        cuda = " ".join(r["cuda"]) or "cpu only"
        table.add_row(*(escape(str(c)) for c in (r["torch"], *comp, py, cuda)))
    print_table(table)
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("kb", help="look up the knowledge base")
    kinds = parser.add_subparsers(dest="kb_kind", metavar="KIND", required=True)
    for name, func, arg, helptext in (
        ("release", _release, "version", "a torch release: companions, Python, CUDA, build facts"),
        ("cuda", _cuda, "version", "a CUDA release: host compiler limits, buildable archs"),
        (
            "gpu",
            _gpu,
            "name",
            "a GPU model (its compute capability) or a compute capability (its GPUs)",
        ),
    ):
        p = kinds.add_parser(name, help=helptext)
        p.add_argument(arg)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(handler=func)
    p = kinds.add_parser("releases", help="every torch release known")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_releases)
