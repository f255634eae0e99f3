"""The report's plots, drawn by plotly (https://plotly.com/python/): stage times, the timeline
of parallel compile jobs, jobs running versus the job limit, the slowest translation units."""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from torchsmith.report.analysis import ReportData, edge_group, stage_times
from torchsmith.report.inputs import cpu_samples
from torchsmith.report.ninja_log import NinjaEdge, assign_slots, concurrency

COLOURS = {"codegen": "#8c6bb1", "compile": "#2b8cbe", "cuda": "#41ab5d", "link": "#e6550d"}


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(title=title, height=height, margin={"l": 60, "r": 20, "t": 50, "b": 40})
    return fig


def stages_figure(data: ReportData) -> go.Figure | None:
    stages = stage_times(data.inputs.manifest)
    if not stages:
        return None
    # escaped like the other figures' text: plotly renders <a href> in labels (review N14)
    names = [html.escape(name) for name in stages]
    fig = go.Figure(go.Bar(x=list(stages.values()), y=names, orientation="h"))
    fig.update_xaxes(title="seconds")
    title = "Stage times, every run of the workspace (manifest)"
    return _layout(fig, title, 120 + 30 * len(stages))


def _lane_trace(group: str, edges: Sequence[NinjaEdge], slots: Sequence[int]) -> go.Bar:
    return go.Bar(
        name=group,
        orientation="h",
        base=[e.start for e in edges],
        x=[e.duration for e in edges],
        y=[f"job {s}" for s in slots],
        marker_color=COLOURS[group],
        hovertext=[f"{html.escape(e.name)}<br>{e.duration:.1f} s" for e in edges],
        hoverinfo="text",
    )


def timeline_figure(data: ReportData) -> go.Figure | None:
    edges = data.inputs.edges
    if not edges:
        return None
    slots = assign_slots(edges)
    fig = go.Figure()
    for group in COLOURS:
        chosen = [i for i, e in enumerate(edges) if edge_group(e) == group]
        if chosen:
            fig.add_trace(
                _lane_trace(group, [edges[i] for i in chosen], [slots[i] for i in chosen])
            )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title="seconds of ninja work (a resumed build's runs end to end)")
    fig.update_yaxes(categoryorder="category descending")
    lanes = max(slots) + 1
    return _layout(fig, "Timeline of parallel ninja jobs (.ninja_log)", 160 + 40 * lanes)


def jobs_figure(data: ReportData) -> go.Figure | None:
    steps = concurrency(data.inputs.edges)
    if not steps:
        return None
    fig = go.Figure(
        go.Scatter(
            x=[t for t, _ in steps], y=[n for _, n in steps], line_shape="hv", name="jobs running"
        )
    )
    samples = cpu_samples(data.inputs.manifest)
    if samples:
        fig.add_trace(
            go.Scatter(
                x=[t for t, _ in samples],
                y=[b for _, b in samples],
                name="cores busy (whole machine, /proc/stat; x: seconds since compile began)",
            )
        )
    limit = data.utilisation.job_limit
    if limit:
        fig.add_hline(y=limit, line_dash="dash", annotation_text=f"job limit {limit}")
    fig.update_xaxes(title="seconds of ninja work (a resumed build's runs end to end)")
    fig.update_yaxes(title="jobs", rangemode="tozero")
    return _layout(fig, "Jobs running versus the job limit", 320)


def slowest_figure(data: ReportData) -> go.Figure | None:
    units = data.slowest
    if not units:
        return None
    names = [html.escape(e.outputs[0].rsplit("/", 1)[-1]) for e in reversed(units)]
    fig = go.Figure(
        go.Bar(
            x=[e.duration for e in reversed(units)],
            y=names,
            orientation="h",
            hovertext=[html.escape(e.outputs[0]) for e in reversed(units)],
        )
    )
    fig.update_xaxes(title="seconds")
    return _layout(fig, f"Slowest {len(units)} translation units", 140 + 22 * len(units))


def figures(data: ReportData) -> dict[str, go.Figure]:
    """The plots there are data for, by the element id they get in the page."""
    made = {
        "stages": stages_figure(data),
        "timeline": timeline_figure(data),
        "jobs": jobs_figure(data),
        "slowest": slowest_figure(data),
    }
    return {name: fig for name, fig in made.items() if fig is not None}
