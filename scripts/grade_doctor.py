#!/usr/bin/env python3
"""Grade the doctor on a directory of real failure logs it has never seen.

    python scripts/grade_doctor.py LOG_DIR EXPECTED [--min-accuracy 0.8] [--json]

EXPECTED maps each log file (its name relative to LOG_DIR) to the cause it should find, as

* CSV/TSV lines ``file,expected`` (a ``#`` starts a comment; a header row ``file,...`` is skipped),
* JSON ``{"file": "expected", ...}``, or
* TOML ``[causes]`` with ``"file" = "expected"``.

``expected`` is a rule id (``nvcc-host-gcc-too-new``), a rule category (``toolchain``,
``cuda-arch``, ``abi``, ``feature-off``, ...), a rule tag (``cudnn``, ``nccl``, ``mkl``,
``submodules``, ``stale-build``, ``oom``, ``disk``, ``permissions``, ...; case, spaces and
underscores do not matter), several such separated by ``|`` (any one is right), or
``unknown`` when no rule should claim the log. A log counts as
right at top-1 when the top-ranked finding has that id, category or tag (for ``unknown``: no
specific rule of severity error); top-3 likewise among the first three findings. A generic
diagnosis (``generic-<class>``, when no specific rule matched) counts when its id, category
or tags name the expected cause; the summary says how many logs got no finding at all. Prints
one line per log and the accuracy; exits 1 when top-1 accuracy is below ``--min-accuracy``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from pathlib import Path

from torchsmith.doctor import Diagnosis, diagnose

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def read_expected(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return {str(k): str(v) for k, v in json.loads(text).items()}
    if path.suffix == ".toml":
        return {str(k): str(v) for k, v in tomllib.loads(text).get("causes", {}).items()}
    delimiter = "\t" if "\t" in text else ","
    rows = csv.reader(
        (ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")),
        delimiter=delimiter,
    )
    return {r[0].strip(): r[1].strip() for r in rows if len(r) >= 2 and r[0].strip() != "file"}


def _norm(text: str) -> str:
    return re.sub(r"[\s_/]+", "-", text.strip().lower())


def hit(diagnosis: Diagnosis, expected: str, k: int) -> bool:
    """Right when one of the first ``k`` findings has the expected rule id, category or tag."""
    wants = {_norm(w) for w in expected.split("|")}
    if wants & {"unknown", "none"}:
        return diagnosis.cause is None
    return any(
        wants & {_norm(f.rule_id), _norm(f.category), *map(_norm, f.tags)}
        for f in diagnosis.findings[:k]
    )


def _log_lines(path: Path) -> list[str]:
    """The log without its fixture header (``#@ source: ...`` lines are not the log's)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if not line.startswith("#@ ")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("expected", type=Path)
    parser.add_argument("--min-accuracy", type=float, default=0.0)
    parser.add_argument("--json", action="store_true", help="one JSON report on stdout")
    args = parser.parse_args()
    expected = read_expected(args.expected)
    results = []
    for name, want in sorted(expected.items()):
        log = args.log_dir / name
        if not log.is_file():
            results.append({"log": name, "expected": want, "error": "missing log"})
            continue
        start = time.perf_counter()
        diagnosis = diagnose(_log_lines(log))
        top = diagnosis.top
        results.append(
            {
                "log": name,
                "expected": want,
                "got": top.rule_id if top else None,
                "category": top.category if top else None,
                "generic": bool(top and top.generic),
                "no_finding": not diagnosis.findings,
                "top1": hit(diagnosis, want, 1),
                "top3": hit(diagnosis, want, 3),
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
    graded = [r for r in results if "error" not in r]
    top1 = sum(bool(r["top1"]) for r in graded) / max(len(graded), 1)
    top3 = sum(bool(r["top3"]) for r in graded) / max(len(graded), 1)
    no_finding = sum(bool(r["no_finding"]) for r in graded)
    generic = sum(
        bool(r["generic"] and r["top1"]) and _norm(str(r["expected"])) not in ("unknown", "none")
        for r in graded
    )
    if args.json:
        summary = {"top1": top1, "top3": top3, "no_finding": no_finding, "generic_top1": generic}
        print(json.dumps({"results": results, **summary}, indent=2))
    else:
        for r in results:
            mark = "ERR " if "error" in r else ("ok  " if r["top1"] else "MISS")
            mark += "(generic) " if r.get("generic") else ""
            print(
                f"{mark} {r['log']}: expected {r['expected']}, got {r.get('got')} "
                f"({r.get('category')}) {r.get('error', '')}"
            )
        print(
            f"top-1 accuracy {top1:.1%}, top-3 {top3:.1%} over {len(graded)} logs "
            f"({len(results) - len(graded)} missing); {no_finding} with no finding at all, "
            f"{generic} right by the generic diagnosis"
        )
    return 0 if top1 >= args.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
