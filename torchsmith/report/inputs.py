"""What a build report is made from: the manifest and ninja's ``.ninja_log`` of one workspace.

``torchsmith report`` accepts a workspace directory (``<cache root>/builds/<plan hash>``) or a
manifest file; the ``.ninja_log`` is ``<workspace>/src/build/.ninja_log`` (the manifest's
``source.built_in``). A failed build has a log but no manifest; a manifest copied away from its
workspace has no log: the report is made from what there is and says what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.errors import UsageError
from torchsmith.report.ninja_log import NinjaEdge, building_runs, end_to_end, parse_runs


@dataclass(frozen=True)
class ReportInputs:
    """The manifest (None when absent), the edges of every ninja run that built something (a
    resumed build's runs end to end; setup.py's trailing install run left out), how many runs
    the log holds and how many are shown, and where they came from."""

    manifest: dict[str, Any] | None
    edges: list[NinjaEdge]
    runs_in_log: int
    runs_shown: int
    manifest_path: Path | None
    ninja_log: Path | None
    missing: list[str] = field(default_factory=list)


MAX_MANIFEST = 64 * 2**20
"""A build manifest is a few hundred KiB; anything past this is not one (trial R13: a 766 MB
wheel was read whole for 7 s, then 'utf-8 codec can't decode')."""
_HINT = "pass a *.manifest.json written by `torchsmith build`, or its workspace directory"


def _check_file(path: Path) -> None:
    """Refuse a zip (a wheel, a bundle) or an oversized file before reading it whole."""
    try:
        with path.open("rb") as handle:
            head, size = handle.read(4), path.stat().st_size
    except OSError as exc:
        raise UsageError(f"cannot read the manifest {path}: {exc}", _HINT) from exc
    if head == b"PK\x03\x04":
        raise UsageError(
            f"{path} is a zip archive (a wheel?), not a build manifest",
            "`torchsmith inspect` reads a wheel; " + _HINT,
        )
    if size > MAX_MANIFEST:
        raise UsageError(
            f"{path} is {size / 2**20:.0f} MiB, not a build manifest (they are a few hundred "
            f"KiB; at most {MAX_MANIFEST // 2**20} MiB is read)",
            _HINT,
        )


def _read_manifest(path: Path) -> dict[str, Any]:
    _check_file(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path} is not UTF-8 text (a binary file?), not a manifest", _HINT
        ) from exc
    except (OSError, json.JSONDecodeError, RecursionError) as exc:
        raise UsageError(  # RecursionError: '[[[[…' deeper than json's C scanner goes (N16)
            f"cannot read the manifest {path}: {exc or type(exc).__name__}", _HINT
        ) from exc
    if not isinstance(data, dict) or "stages" not in data:
        raise UsageError(
            f"{path} is not a torchsmith build manifest (no 'stages')",
            "pass a *.manifest.json written by `torchsmith build`, or its workspace directory",
        )
    _check_shape(path, data)
    return data


# the types the report reads; a foreign manifest with others was a TypeError, exit 70 (N16)
_SHAPES: dict[str, type] = {
    "stages": dict,
    "stages_all_runs": dict,
    "resources": dict,
    "source": dict,
    "plan": dict,
    "compiler_cache": dict,
    "workspace": str,
}


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    nested = {f"source.{k}": v for k, v in _table(data.get("source")).items()}
    nested |= {f"resources.{k}": v for k, v in _table(data.get("resources")).items()}
    wrong = [
        k
        for k, kind in _SHAPES.items()
        if data.get(k) is not None and not isinstance(data[k], kind)
    ]
    if not isinstance(nested.get("source.built_in") or "", str):
        wrong.append("source.built_in")
    if not isinstance(nested.get("resources.cpu_during_compile") or {}, dict):
        wrong.append("resources.cpu_during_compile")
    if wrong:
        raise UsageError(
            f"{path} is not a torchsmith build manifest: {', '.join(wrong)} of the wrong type",
            "pass a *.manifest.json written by `torchsmith build`, or its workspace directory",
        )


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _newest_manifest(workspace: Path) -> Path | None:
    found = sorted(workspace.glob("*.manifest.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def _log_for(manifest: dict[str, Any] | None, workspace: Path | None) -> Path | None:
    candidates = []
    if workspace is not None:
        candidates.append(workspace / "src" / "build" / ".ninja_log")
    built_in = ((manifest or {}).get("source") or {}).get("built_in")
    if built_in:
        candidates.append(Path(built_in) / "build" / ".ninja_log")
    return next((c for c in candidates if c.is_file()), None)


def _locate(path: Path) -> tuple[Path | None, Path | None]:
    """(manifest path, workspace directory) for what the user named."""
    if path.is_dir():
        return _newest_manifest(path), path
    if path.is_file():
        return path, None
    raise UsageError(
        f"{path} does not exist",
        "pass a workspace directory (<cache root>/builds/<plan hash>) or a *.manifest.json",
    )


def _empty_log(log: Path | None, runs: list[list[NinjaEdge]]) -> list[str]:
    """Trial R06: a .ninja_log of its header only gave an empty report without a word."""
    if log is None or runs:
        return []
    return [f"{log} holds no finished edge (only its header): ninja built nothing, no timeline"]


def _nothing_to_report(path: Path, workspace: Path | None, log: Path | None) -> UsageError:
    """A workspace whose build stopped before ninja ran (it has timings.json) is named as such,
    with the way on (issue 28 item 9, trial R16: the hint pointed back at the same path); a
    .ninja_log of its header only (trial R06) is said to hold nothing."""
    what = f"no build manifest, and {log} holds no finished edge" if log else ""
    try:
        stages = list(json.loads((workspace or path).joinpath("timings.json").read_text()))
    except (OSError, ValueError, TypeError):
        return UsageError(
            f"{path} holds {what or 'neither a build manifest nor a .ninja_log'}",
            "pass the workspace of a build (its path is printed by `torchsmith build`)",
        )
    return UsageError(
        f"{path} is the workspace of a build that stopped before anything was compiled "
        f"(stages run: {', '.join(map(str, stages)) or 'none'}): there is no compile to report",
        f"see why it stopped in {path / 'logs'}; run the same `torchsmith build` again (it "
        "resumes), then `torchsmith report` on this workspace",
    )


def load_inputs(path: Path) -> ReportInputs:
    """Read the manifest and the ``.ninja_log`` that belong to ``path``."""
    manifest_path, workspace = _locate(path)
    manifest = _read_manifest(manifest_path) if manifest_path else None
    if workspace is None and manifest and manifest.get("workspace"):
        workspace = Path(manifest["workspace"])
    log = _log_for(manifest, workspace)
    runs = parse_runs(log.read_text(encoding="utf-8", errors="replace")) if log else []
    if manifest is None and not runs:
        raise _nothing_to_report(path, workspace, log)
    shown = building_runs(runs)
    return ReportInputs(
        manifest=manifest,
        edges=end_to_end(shown),
        runs_in_log=len(runs),
        runs_shown=len(shown),
        manifest_path=manifest_path,
        ninja_log=log,
        missing=_missing(manifest, log) + _empty_log(log, runs),
    )


def peak_rss_mib(manifest: dict[str, Any] | None) -> float | None:
    value = ((manifest or {}).get("resources") or {}).get("peak_process_rss_mib")
    return float(value) if isinstance(value, (int, float)) else None


def cpu_samples(manifest: dict[str, Any] | None) -> list[tuple[float, float]]:
    """(seconds since the compile began, cores busy) the compile step sampled."""
    cpu = ((manifest or {}).get("resources") or {}).get("cpu_during_compile") or {}
    samples = cpu.get("samples") if isinstance(cpu, dict) else None
    if not isinstance(samples, list):
        return []
    pairs = [s for s in samples if isinstance(s, list) and len(s) == 2]
    return [(float(t), float(b)) for t, b in pairs if _numbers(t, b)]


def _numbers(*values: object) -> bool:
    """True where every value is a JSON number: a foreign manifest may hold anything (N16)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _missing(manifest: dict[str, Any] | None, log: Path | None) -> list[str]:
    missing = []
    if not cpu_samples(manifest):
        missing.append(
            "CPU utilisation: this manifest records no CPU samples (torchsmith samples "
            "/proc/stat during the compile since the manifest's 'resources.cpu_during_compile'); "
            "the number of ninja jobs running (from .ninja_log) stands in for it"
        )
    if peak_rss_mib(manifest) is None:
        missing.append(
            "peak RAM: this manifest records no memory use (torchsmith records it "
            "since the manifest's 'resources' entry; never in a container backend)"
        )
    else:
        missing.append("RAM of parallel jobs together: only the largest single process is recorded")
    if manifest is None:
        missing.append("the manifest (a failed or stopped build writes none): no stage times")
    if log is None:
        missing.append(".ninja_log (the workspace's build directory is gone): no timeline")
    return missing
