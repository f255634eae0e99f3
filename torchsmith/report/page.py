"""The self-contained HTML build report: plotly's JavaScript inlined once, every text from the
manifest or the log HTML-escaped, no request to anywhere when it opens."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from torchsmith.report.advice import Advice
from torchsmith.report.analysis import ReportData, cache_by_stage, edge_group, stage_times
from torchsmith.report.inputs import peak_rss_mib

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1200px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
h2{margin-top:1.4em}.why{color:#555}"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _mib(value: float | None) -> str:
    return "not recorded" if value is None else f"{value:,.0f} MiB"


def _stages_total(manifest: dict[str, Any]) -> str:
    stages = stage_times(manifest)
    return f"{sum(stages.values()):.1f} s" if stages else "not recorded (no manifest)"


def _runs(data: ReportData) -> str:
    inputs = data.inputs
    left = inputs.runs_in_log - inputs.runs_shown
    if not inputs.runs_in_log:
        return "0"
    return f"{inputs.runs_in_log}: {inputs.runs_shown} that built shown" + (
        f", {left} that only ran CMake's install left out" if left else ""
    )


def _compiled(data: ReportData) -> int:
    return sum(1 for e in data.inputs.edges if edge_group(e) in ("compile", "cuda"))


def _field(manifest: Any, *keys: str) -> object:
    """The value under ``keys``, or "?" where the manifest has another shape (a hand-edited or
    foreign file: the report shows what it can)."""
    for key in keys:
        if not isinstance(manifest, dict) or key not in manifest:
            return "?"
        manifest = manifest[key]
    return manifest


def _targets(manifest: dict[str, Any]) -> str:
    targets = manifest.get("targets")
    names = [t for t in targets if isinstance(t, str)] if isinstance(targets, list) else []
    return ", ".join(names) or "all"


def _summary(data: ReportData) -> str:
    manifest = data.inputs.manifest or {}
    use = data.utilisation
    rows: list[tuple[str, object]] = [
        ("torch", _field(manifest, "plan", "torch", "value")),
        ("plan", manifest.get("plan_hash", "?")),
        ("targets", _targets(manifest)),
        ("total of this run (manifest)", f"{manifest.get('total_seconds', '?')} s"),
        ("stages of every run of the workspace", _stages_total(manifest)),
        ("ninja runs in the log", _runs(data)),
        ("ninja edges shown", len(data.inputs.edges)),
        ("compile edges shown (C++ and CUDA objects)", _compiled(data)),
        ("ninja wall time (runs end to end)", f"{use.wall:.1f} s"),
        ("mean jobs running / job limit", f"{use.mean_jobs:.2f} / {use.job_limit or '?'}"),
        ("peak RAM of one process", _mib(peak_rss_mib(data.inputs.manifest))),
    ]
    rows += [(f"{k} seconds (sum over jobs)", f"{v:.1f}") for k, v in data.by_group.items()]
    return _table(("what", "value"), rows)


def _count(counts: dict[str, Any] | None, key: str, stage: str) -> object:
    if counts is None:
        return "not recorded" if stage == "compile" else "not measured"
    value = counts.get(key)
    return "not recorded" if value is None else value


def _cache(data: ReportData) -> str:
    keys = ("hits", "local_hits", "remote_hits", "misses")
    kind = ((data.inputs.manifest or {}).get("compiler_cache") or {}).get("kind")
    rows = [
        (stage, kind, *(_count(counts, k, stage) for k in keys))
        for stage, counts in cache_by_stage(data.inputs.manifest).items()
    ]
    return _table(("stage", "cache", "hits", "local hits", "remote hits", "misses"), rows)


def _advice(advice: Sequence[Advice]) -> str:
    if not advice:
        return "<p>No rule found anything to change in this build.</p>"
    items = "".join(
        f"<li><b>{_e(a.what)}</b> <span class=why>({_e(a.rule)}: {_e(a.why)})</span></li>"
        for a in advice
    )
    return f"<ul id=advice>{items}</ul>"


def _plots(figs: dict[str, go.Figure]) -> str:
    parts = []
    for index, (name, fig) in enumerate(figs.items()):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=index == 0, div_id=name))
    return "\n".join(parts)


def render_page(data: ReportData, figs: dict[str, go.Figure], advice: Sequence[Advice]) -> str:
    sources = {
        "manifest": str(data.inputs.manifest_path or "missing"),
        ".ninja_log": str(data.inputs.ninja_log or "missing"),
    }
    missing = "".join(f"<li>{_e(m)}</li>" for m in data.inputs.missing)
    return (
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>torchsmith build report</title>"
        f"<style>{STYLE}</style></head><body><h1>torchsmith build report</h1>"
        f"<h2>Summary</h2>{_summary(data)}"
        f"<h2>What would make it faster</h2>{_advice(advice)}"
        f"<h2>Compiler cache per stage</h2>{_cache(data)}"
        f"{_plots(figs)}"
        f"<h2>Not recorded</h2><ul>{missing}</ul>"
        f"<h2>Made from</h2><pre>{_e(json.dumps(sources, indent=1))}</pre></body></html>"
    )
