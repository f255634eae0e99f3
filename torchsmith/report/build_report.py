"""``torchsmith report``: write the HTML build report and the Chrome trace of a workspace."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from torchsmith.atomic import write_text
from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.report.advice import Advice, advise
from torchsmith.report.analysis import analyse
from torchsmith.report.figures import figures
from torchsmith.report.inputs import load_inputs
from torchsmith.report.ninja_log import chrome_trace
from torchsmith.report.page import render_page

HTML_NAME = "build-report.html"
TRACE_NAME = "build-trace.json"


@dataclass(frozen=True)
class WrittenReport:
    html: Path
    trace: Path | None
    advice: list[Advice]
    missing: list[str]


def default_output(named: Path) -> Path:
    """``<workspace>/report`` for a workspace, the manifest's directory for a manifest."""
    return (named if named.is_dir() else named.parent) / "report"


def write_report(named: Path, output: Path | None = None) -> WrittenReport:
    inputs = load_inputs(named)
    data = analyse(inputs)
    advice = advise(data)
    folder = output or default_output(named)
    page = folder / HTML_NAME
    trace = folder / TRACE_NAME if inputs.edges else None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_text(page, render_page(data, figures(data), advice))
        if trace is not None:
            write_text(trace, json.dumps(chrome_trace(inputs.edges)))
    except OSError as exc:
        raise UsageError(
            f"cannot write the report into {folder}: {exc}", "give --output a folder you can write"
        ) from exc
    return WrittenReport(page, trace, advice, inputs.missing)


def report_line(workspace: Path) -> str:
    """The line ``build`` ends with: where the report is, or why none was written (a report
    that cannot be made never fails the build it describes)."""
    try:
        written = write_report(workspace)
    except (TorchsmithError, OSError) as exc:
        return f"report: not written ({exc})"
    return f"report: {written.html}"
