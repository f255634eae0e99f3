"""`torchsmith source fetch|bundle`: get the source a plan names, or pack it for offline use."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import Any

from torchsmith import kb as kbmod
from torchsmith.commands.spec_args import add_spec_arguments, spec_from_args
from torchsmith.console import err, out, print_json
from torchsmith.plan import resolve
from torchsmith.proc import HOST, LineCallback
from torchsmith.sources import fetch_source
from torchsmith.sources.base import SourceTree
from torchsmith.sources.bundle import bundle_spec, write_bundle
from torchsmith.sources.bundle_write import check_output
from torchsmith.terminal import strip_terminal_codes


def _cache_root(args: argparse.Namespace) -> Path:
    from torchsmith.cache_root import default_cache_root
    from torchsmith.workspace import check_cache_root

    root = args.cache_root or default_cache_root(os.environ)
    return check_cache_root(Path(root).expanduser().resolve()) / "sources"


def _fetch(args: argparse.Namespace, *, for_bundle: bool = False) -> SourceTree:
    """The source tree; a bundle is built on another machine, so this one is not asked for
    the build dependencies (Debian's -dev packages)."""
    from torchsmith.commands.spec_args import load_host

    plan = resolve(spec_from_args(args), kbmod.load(), load_host(args))
    return fetch_source(
        plan.source,
        _cache_root(args),
        dict(os.environ),
        runner=HOST,
        install_deps=getattr(args, "install_deps", False),
        check_deps=not for_bundle,
        on_line=_progress(args),
    )


def _progress(args: argparse.Namespace) -> LineCallback | None:
    """Progress lines: none with --quiet; on stderr with --json (stdout is only the JSON)."""
    if args.quiet:
        return None
    console = err if args.json else out
    return lambda line: console.print(strip_terminal_codes(line), markup=False, highlight=False)


def _tree_json(tree: SourceTree) -> dict[str, Any]:
    return {
        "kind": tree.kind,
        "root": str(tree.root),
        "identity": tree.identity,
        "version": tree.version,
        "owned": tree.owned,
        "details": tree.details,
    }


def _handle_fetch(args: argparse.Namespace) -> int:
    tree = _fetch(args)
    if args.json:
        print_json(_tree_json(tree))
    else:
        out.print(
            strip_terminal_codes(
                f"{tree.kind} source {tree.version} at {tree.root}\nidentity {tree.identity}"
            ),
            markup=False,
        )
    return 0


def _handle_bundle(args: argparse.Namespace) -> int:
    output: Path = check_output(args.bundle_file.expanduser().resolve())
    tree = _fetch(args, for_bundle=True)
    digest = write_bundle(tree, output, _progress(args))
    spec = bundle_spec(output, digest)
    if args.json:
        print_json({**_tree_json(tree), "bundle": str(output), "bundle_sha256": digest,
                    "source": spec})  # fmt: skip
    else:
        out.print(
            f"wrote {output} (sha256 {digest})\nbuild offline with: --source {shlex.quote(spec)}",
            markup=False,
        )
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    add_spec_arguments(parser)
    parser.add_argument("--cache-root", help="torchsmith's cache (sources go to CACHE/sources)")
    parser.add_argument("--host-facts", type=Path, help="use recorded `torchsmith host --json`")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def register(sub: Any) -> None:
    parser = sub.add_parser("source", help="fetch a source tree, or bundle it for offline builds")
    actions = parser.add_subparsers(dest="source_action", required=True)
    fetch = actions.add_parser("fetch", help="fetch the source the spec names (into the cache)")
    _common(fetch)
    fetch.add_argument("--install-deps", action="store_true",
                       help="install missing Debian -dev packages with apt")  # fmt: skip
    fetch.set_defaults(handler=_handle_fetch)
    bundle = actions.add_parser("bundle", help="write a tarball of the source with its hashes")
    _common(bundle)
    bundle.add_argument("-o", "--bundle-file", dest="bundle_file", type=Path, required=True,
                        help="bundle file to write")  # fmt: skip
    bundle.set_defaults(handler=_handle_bundle)
