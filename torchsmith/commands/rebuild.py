"""`torchsmith rebuild MANIFEST`: build the recorded plan again in a new workspace and say
whether the wheels are identical (else which members differ, and diffoscope's first lines)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any

from rich.markup import escape

from torchsmith.attest.compare import diffoscope
from torchsmith.commands.spec_args import load_host
from torchsmith.console import err, out, print_json, shown
from torchsmith.errors import VerifyError
from torchsmith.proc import HOST
from torchsmith.rebuild.plan_check import read_manifest
from torchsmith.rebuild.run import RebuildRequest, Rebuilt, rebuild
from torchsmith.report.progress import make_reporter

SHOWN = 20


def _request(args: argparse.Namespace) -> RebuildRequest:
    root = Path(args.cache_root).expanduser().resolve()
    output = Path(args.output_dir).expanduser().resolve() if args.output_dir else root / "dist"
    return RebuildRequest(
        manifest=Path(args.manifest),
        cache_root=root,
        output_dir=output,
        allow_toolchain_drift=args.allow_toolchain_drift,
        install_deps=args.install_deps,
        verify=not args.no_verify,
    )


def _print(done: Rebuilt) -> None:
    for wheel in done.wheels:
        if wheel.identical:
            said = f"[bold green]identical[/]: {escape(wheel.name)} sha256 {wheel.new_sha256}"
            out.print(said, soft_wrap=True)
            continue
        out.print(f"[bold red]differs[/]: {escape(wheel.name)}", soft_wrap=True)
        out.print(f"  recorded sha256 {wheel.recorded_sha256}, rebuilt {wheel.new_sha256}")
        out.print(f"  members compared with {shown(wheel.basis)}:", markup=False)
        for line in wheel.differing[:SHOWN]:
            out.print(f"    {shown(line)}", markup=False)
        for line in wheel.diffoscope:
            out.print(f"  | {shown(line)}", markup=False)


def _handler(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    read_manifest(Path(args.manifest))  # a bad manifest is named before the host is probed
    diff = None if args.no_diffoscope else diffoscope(HOST, env)
    reporter = make_reporter(err if args.json else out)
    try:
        done = rebuild(_request(args), load_host(args), env, HOST, reporter=reporter, diff=diff)
    finally:
        reporter.close()
    if args.json:
        rows = [{**dataclasses.asdict(w), "identical": w.identical} for w in done.wheels]
        print_json({"identical": done.identical, "wheels": rows})
    else:
        _print(done)
    if not done.identical:
        names = ", ".join(w.name for w in done.wheels if not w.identical)
        raise VerifyError(
            f"the rebuild is not identical: {names}",
            "the differing members are listed above; docs/reproducible.md says what the "
            "build fixes and what is still known to vary",
        )
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("rebuild", help="build a manifest's plan again and compare the wheels")
    parser.add_argument("manifest", help="the manifest.json `torchsmith build` wrote")
    parser.add_argument(
        "--cache-root",
        type=Path,
        required=True,
        help="the new workspace's cache root (sources, build dirs): not the recorded one",
    )
    parser.add_argument(
        "--output-dir", help="where the rebuilt wheels go (default CACHE_ROOT/dist)"
    )
    parser.add_argument(
        "--allow-toolchain-drift",
        action="store_true",
        help="another compiler version only warns (default: refused, naming both)",
    )
    parser.add_argument(
        "--host-facts", type=Path, help="plan with recorded `torchsmith host --json`"
    )
    parser.add_argument("--install-deps", action="store_true", help="as for build")
    parser.add_argument("--no-verify", action="store_true", help="as for build")
    parser.add_argument("--no-diffoscope", action="store_true", help="do not run diffoscope")
    parser.add_argument("--json", action="store_true", help="machine-readable comparison")
    parser.set_defaults(handler=_handler)
