"""`torchsmith inspect WHEEL|--python PY`: what a torch build really contains."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

from rich.table import Table

from torchsmith.console import err, print_json, print_table, shown, table
from torchsmith.errors import UsageError
from torchsmith.inspect import Inspection, inspect_artifact
from torchsmith.inspect.companion import CompanionInspection, inspect_companion_wheel, is_companion
from torchsmith.inspect.model import Component
from torchsmith.proc import HOST
from torchsmith.terminal import strip_terminal_codes


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


_UNRECORDED = "not recorded in the files"


def _recorded(insp: Inspection, version: str | None, component: Component) -> str:
    """A version the build recorded, else whether it is linked at all (the link rows say how)."""
    if version:
        return version
    linked = any(link.component == component and link.mode != "none" for link in insp.linkage)
    return f"version {_UNRECORDED} (linked: see link {component})" if linked else "—"


def summary_table(insp: Inspection) -> Table:
    title = shown(f"torch {insp.torch_version or '?'} ({insp.source})")
    grid = table(title, "key", "value", show_header=False)
    cfg = insp.config
    rows = [
        ("location", insp.location),
        ("git revision", insp.git_version or "?"),
        ("CUDA", insp.cuda or "none (CPU build)"),
        ("arch list", " ".join(insp.arch_list) or "—"),
        ("SASS", " ".join(insp.sass) or "—"),
        ("PTX", " ".join(insp.ptx) or "—"),
        ("kernel-specific targets", " ".join(insp.extra_archs) or "—"),
        (
            "cuDNN / NCCL",
            f"{_recorded(insp, cfg.cudnn, 'cudnn')} / {_recorded(insp, cfg.nccl, 'nccl')}",
        ),
        ("compiler / C++", f"{cfg.compiler or '?'} / {cfg.cxx_standard or _UNRECORDED}"),
        ("C++11 ABI", f"{insp.cxx11_abi} ({insp.cxx11_abi_evidence})"),
        ("needs GLIBC / GLIBCXX / CXXABI", f"{insp.glibc} / {insp.glibcxx} / {insp.cxxabi}"),
        ("size", _mib(insp.sizes.total)),
    ]
    rows += [(f"link {link.component}", f"{link.mode}: {link.evidence}") for link in insp.linkage]
    if insp.wheel is not None:
        honest = {True: "honest", False: "DISHONEST", None: "no manylinux tag"}[insp.wheel.honest]
        rows.append(("wheel tags", f"{' '.join(insp.wheel.tags)} ({honest})"))
    if insp.missing:
        rows.append(("MISSING libraries", " ".join(insp.missing)))
    if insp.cross_check is not None:
        agrees = "agrees" if insp.cross_check.agrees else "; ".join(insp.cross_check.differences)
        rows.append(("cuobjdump", agrees))
    for key, value in rows:
        grid.add_row(f"[bold]{shown(key)}[/]", shown(value))
    return grid


def library_table(insp: Inspection) -> Table:
    columns = ("library", "size", "GPU code", "SASS", "PTX", "GLIBC", "NEEDED (not bundled)")
    grid = table("libraries", *columns)
    names = [lib.path.rsplit("/", 1)[-1] for lib in insp.libraries]
    for lib in insp.libraries:
        external = [d.soname for d in lib.needed if d.provider not in ("bundled", "system")]
        gpu = lib.gpu
        name = lib.path.rsplit("/", 1)[-1]
        cells = (
            lib.path if names.count(name) > 1 else name,  # two _C.cpython-….so: say which
            _mib(lib.size),
            _mib(gpu.fatbin_bytes) if gpu else "—",
            " ".join(gpu.sass) if gpu else "",
            " ".join(gpu.ptx) if gpu else "",
            lib.glibc or "",
            " ".join(external),
        )
        grid.add_row(*(shown(cell) for cell in cells))
    return grid


def arch_table(insp: Inspection) -> Table:
    grid = table("GPU code by target", "target", "bytes stored")
    for arch, size in insp.sizes.by_arch.items():
        grid.add_row(shown(arch), _mib(size))
    return grid


def find_cuobjdump(choice: str) -> str | None:
    if choice == "none":
        return None
    if choice != "auto":
        return choice
    return shutil.which("cuobjdump", path=os.environ.get("PATH", ""))


def companion_table(insp: CompanionInspection) -> Table:
    grid = table(shown(f"{insp.name} {insp.version}"), "key", "value", show_header=False)
    abi = {True: "True (std::__cxx11)", False: "False (old std::string)", None: "not seen"}
    rows = [
        ("location", insp.location),
        ("requires torch", " ".join(insp.requires_torch) or "no torch requirement"),
        ("C++11 ABI", abi[insp.cxx11_abi]),
        ("SASS", " ".join(insp.sass) or "—"),
        ("PTX", " ".join(insp.ptx) or "—"),
    ]
    for mod in insp.modules:
        links = " ".join(mod.torch_libs) or "no torch library"
        rows.append((mod.path, f"links {links}; ABI: {mod.abi_evidence}"))
    for key, value in rows:
        grid.add_row(f"[bold]{shown(key)}[/]", shown(value))
    return grid


def _companion(path: Path, as_json: bool) -> int:
    insp = inspect_companion_wheel(path)
    if as_json:
        print_json(insp.model_dump(mode="json"))
    else:
        print_table(companion_table(insp))
    return 0


def _progress(line: str) -> None:
    """Progress on stderr (stdout stays the result, --json or not)."""
    err.print(strip_terminal_codes(line), markup=False, highlight=False)


def _handler(args: argparse.Namespace) -> int:
    if (args.wheel is None) == (args.python is None):
        raise UsageError("give either a wheel file or --python PATH", "torchsmith inspect --help")
    if args.wheel and is_companion(Path(args.wheel)):
        return _companion(Path(args.wheel), args.json)
    insp = inspect_artifact(
        wheel=Path(args.wheel) if args.wheel else None,
        python=args.python,
        env=dict(os.environ),
        runner=HOST,
        cuobjdump=find_cuobjdump(args.cuobjdump),
        say=_progress,
    )
    if args.json:
        print_json(insp.model_dump(mode="json"))
        return 0
    print_table(summary_table(insp))
    print_table(library_table(insp))
    if insp.sizes.by_arch:
        print_table(arch_table(insp))
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("inspect", help="what a torch wheel or installation really contains")
    parser.add_argument(
        "wheel",
        nargs="?",
        help="a torch wheel file, or a torchvision/torchaudio/torchtext wheel (not installed)",
    )
    parser.add_argument("--python", help="inspect the torch this interpreter imports")
    parser.add_argument(
        "--cuobjdump",
        default="auto",
        help="cross-check GPU code with cuobjdump: 'auto' (if on PATH), 'none', or a path",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handler)
