"""`torchsmith host`: what this machine has (compilers, CUDA toolkits, GPUs, RAM, disk, tools)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchsmith.host import HostFacts
from torchsmith.host import load as host_load
from torchsmith.host.probe import probe_host
from torchsmith.jsonout import print_json
from torchsmith.proc import HOST

if TYPE_CHECKING:
    from rich.table import Table


def _table(title: str, columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Table:
    from torchsmith.console import shown, table

    grid = table(title, *columns)
    for row in rows:
        grid.add_row(*(shown(cell) for cell in row))
    if not rows:
        grid.add_row(*(["none found"] + [""] * (len(columns) - 1)))
    return grid


def _system(host: HostFacts) -> Table:
    rows = [
        ("OS", f"{host.os_id} {host.os_version}".strip() or "unknown"),
        ("machine", host.machine),
        ("glibc", host.glibc or "unknown"),
        ("cores", str(host.cores)),
        ("RAM", f"{host.ram_gib:g} GiB"),
        ("free disk", f"{host.disk_free_gib:g} GiB at {host.disk_path}"),
        ("cuDNN", ", ".join(host.cudnn_versions) or "none found"),
        ("NCCL", ", ".join(host.nccl_versions) or "none found"),
        ("NVIDIA driver", host.driver_version or "none"),
        ("driver's CUDA", host.driver_cuda or "—"),
    ]
    return _table("system", ("what", "value"), rows)


def _tables(host: HostFacts) -> list[Table]:
    return [
        _system(host),
        _table("compilers", ("compiler", "version", "cc", "c++"),
               [(c.label, c.version, c.cc, c.cxx or "—") for c in host.compilers]),
        _table("CUDA toolkits", ("version", "root", "nvcc", "found via"),
               [(t.version, t.root, t.nvcc, t.origin) for t in host.cuda_toolkits]),
        _table("GPUs", ("#", "name", "compute capability", "memory"),
               [(str(g.index), g.name, g.compute_capability,
                 f"{g.memory_mib} MiB" if g.memory_mib else "?") for g in host.gpus]),
        _table("Python interpreters", ("version", "path"),
               [(p.version, p.path) for p in host.pythons]),
        _table("tools", ("tool", "version", "path"),
               [(t.name, t.version or "?", t.path) for t in host.tools.values()]),
    ]  # fmt: skip


def _host(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    host = probe_host(env, Path(args.disk_path), HOST, host_load.versions_file(env))
    if args.json:
        print_json(host.model_dump(mode="json"))
        return 0
    from rich.markup import escape  # rich: only for the tables

    from torchsmith.console import out, print_table

    for grid in _tables(host):
        print_table(grid)
    for warning in host.warnings:
        out.print(f"[yellow]warning:[/] {escape(warning)}")
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("host", help="what this machine has: compilers, CUDA, GPUs, tools")
    parser.add_argument("--json", action="store_true", help="machine-readable output (HostFacts)")
    parser.add_argument(
        "--disk-path", default=".", metavar="PATH", help="where to measure free disk (default: .)"
    )
    parser.set_defaults(handler=_host)
