"""`torchsmith report WORKSPACE|MANIFEST`: the HTML build report and a Chrome trace."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from torchsmith.console import out, print_json, shown


def _handle(args: argparse.Namespace) -> int:
    from torchsmith.report.build_report import write_report  # plotly: only for this command

    written = write_report(Path(args.path).expanduser(), args.output)
    if args.json:
        print_json(
            {
                "html": str(written.html),
                "trace": str(written.trace) if written.trace else None,
                "advice": [vars(a) for a in written.advice],
                "not_recorded": written.missing,
            }
        )
        return 0
    # shown(): a .ninja_log target or a manifest may carry terminal escapes (review f1b4bec N17)
    out.print(f"report: {shown(written.html)}")
    if written.trace:
        out.print(f"trace:  {shown(written.trace)} (chrome://tracing, ui.perfetto.dev)")
    for advice in written.advice:
        out.print(f"faster: {shown(advice.what)} ({shown(advice.why)})", highlight=False)
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "report", help="HTML build report + Chrome trace of a workspace or manifest"
    )
    parser.add_argument(
        "path", help="a workspace (<cache root>/builds/<plan hash>) or a *.manifest.json"
    )
    parser.add_argument(
        "--output", type=Path, help="folder for the report (default: <workspace>/report)"
    )
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(handler=_handle)
