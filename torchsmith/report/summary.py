"""The one-screen summary printed at the end of a build."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text


def _stages_table(manifest: dict[str, Any]) -> Table:
    table = Table(title="stages", show_header=True)
    table.add_column("stage")
    table.add_column("seconds", justify="right")
    for name, seconds in manifest.get("stages", {}).items():
        table.add_row(name, f"{seconds:.1f}")
    table.add_row("[bold]total[/]", f"{manifest.get('total_seconds', 0.0):.1f}")
    return table


def _lines(manifest: dict[str, Any], manifest_path: str) -> list[str]:
    ninja = manifest.get("ninja", {})
    cache = manifest.get("compiler_cache", {})
    rate = cache.get("hit_rate")
    lines = [
        f"plan {manifest['plan_hash']}  torch {manifest['plan']['torch']['value']}  "
        f"source {manifest['source']['kind']} {manifest['source']['version']}",
        f"ninja: {ninja.get('edges_run', 0)}/{ninja.get('edges_total', 0)} edges run "
        f"for {', '.join(ninja.get('targets', []))}",
        f"compiler cache ({cache.get('kind')}): "
        + (
            "n/a"
            if rate is None
            else f"{rate:.0%} hits ({cache['hits']}/{cache['hits'] + cache['misses']})"
        ),
    ]
    for art in manifest.get("artifacts", []):
        lines.append(
            f"artifact {art['name']}  {art['size'] / 2**20:.1f} MiB  sha256 {art['sha256']}"
        )
    lines.append(f"manifest {manifest_path}")
    return lines


def render_summary(
    manifest: dict[str, Any], manifest_path: str, wheel: str | None
) -> RenderableType:
    head = Text(f"wheel {wheel}" if wheel else "partial build finished", style="bold green")
    body = Text("\n".join(_lines(manifest, manifest_path)))
    return Group(head, body, _stages_table(manifest))
