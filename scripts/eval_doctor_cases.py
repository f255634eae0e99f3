#!/usr/bin/env python3
"""Replay the nearest-case search on scored blind rounds, as it would have run at each freeze.

    python scripts/eval_doctor_cases.py [--first 12] [--last 20] [--json OUT] [-v]

For each round N (its folder ``tests/fixtures/doctor/blindN`` with ``outcomes.csv``, the top
finding at N's freeze — its column ``got_at_<commit>`` names the frozen commit — and whether it
hit the label), the cases are only those known at N's freeze:
the rule fixtures in the frozen commit (``git show``), the grading set and the rounds before N.
A log whose top finding at the freeze was a generic diagnosis or nothing is searched with
today's ``similar.nearest_case`` — the gate ``diagnose`` uses (a weak error class no message fact
or wording class knows), its threshold, margin and minimum of shared words; a case found
replaces the freeze's answer. Counted per round: logs, hits at the freeze, hits with the case,
cases offered, hits gained and lost. This is train data (every round was trained on since); it
estimates what the search adds, the next blind round measures it.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from gen_doctor_cases import split_header  # scripts/, the directory Python runs this from

from torchsmith.doctor import diagnose
from torchsmith.doctor.ruledb import load_rules
from torchsmith.doctor.similar import CaseBase, case_record, nearest_case

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "doctor"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def _lines(text: str) -> list[str]:
    return split_header(text)[0]


def _case(rule: str, name: str, text: str) -> dict[str, object]:
    return case_record(rule, name, name, _lines(text))


def _round_number(folder: Path) -> int:
    digits = re.sub(r"\D", "", folder.name)
    return int(digits) if digits else 1


def cases_at(frozen: str, round_no: int, rules: set[str]) -> list[dict[str, object]]:
    cases = []
    for path in _git("ls-tree", "--name-only", frozen, "tests/fixtures/doctor/").split():
        rule = re.sub(r"--\d+$", "", Path(path).stem)
        if path.endswith(".log") and rule in rules:
            cases.append(_case(rule, path, _git("show", f"{frozen}:{path}")))
    for expected in sorted(FIXTURES.glob("*/expected.csv")):
        known = expected.parent.name == "grading" or _round_number(expected.parent) < round_no
        for row in csv.DictReader(expected.read_text(encoding="utf-8").splitlines()):
            rule = next((w for w in row["expected"].split("|") if w in rules), None)
            log = expected.parent / row["file"]
            if known and rule is not None and log.is_file():
                cases.append(_case(rule, str(log), log.read_text(encoding="utf-8")))
    return cases


def _hits(rule: str, expected: str, meta: dict[str, tuple[str, ...]]) -> bool:
    wants = {w.strip().lower() for w in expected.split("|")}
    if wants & {"unknown", "none"}:
        return True  # a case is a generic finding: the log still has no specific cause
    return bool(wants & {rule, *meta[rule]})


def replay(round_no: int, meta: dict[str, tuple[str, ...]], verbose: bool) -> Counter[str]:
    folder = FIXTURES / f"blind{round_no}"
    rows = list(csv.DictReader((folder / "outcomes.csv").read_text(encoding="utf-8").splitlines()))
    got_column = next(k for k in rows[0] if k.startswith("got"))
    base = CaseBase(cases_at(got_column.removeprefix("got_at_"), round_no, set(meta)))
    counts: Counter[str] = Counter()
    for row in rows:
        before = row["label_hit"] == "yes"
        counts.update(logs=1, before=before)
        got = re.split(r"[ :]", row[got_column].strip() or "none")[0]
        diagnosis = diagnose(_lines((folder / row["file"]).read_text(encoding="utf-8")))
        error, block = diagnosis.error, diagnosis.first_error
        texts = [e.text for e in (*block.lines, *block.context)] if block else []
        weak = got == "none" or got.startswith("generic-")
        match = nearest_case(error, texts, base) if weak and error is not None else None
        after = _hits(match.rule, row["expected"], meta) if match else before
        counts.update(after=after, offered=match is not None, gained=after and not before)
        counts.update(lost=before and not after)
        if verbose and match:
            print(f"{round_no} {row['file']}: {row['expected']} -> {match.rule} "
                  f"{match.similarity:.2f} {'hit' if after else 'miss'}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=12)
    parser.add_argument("--last", type=int, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument("-v", action="store_true")
    args = parser.parse_args()
    meta = {r.id: (r.category, *r.tags) for r in load_rules() if r.severity == "error"}
    per_round = {n: replay(n, meta, args.v) for n in range(args.first, args.last + 1)}
    total: Counter[str] = sum(per_round.values(), Counter())
    for n, c in [*per_round.items(), ("all", total)]:
        print(f"round {n}: {c['logs']} logs, {c['before']} -> {c['after']} by label "
              f"({c['offered']} cases offered, +{c['gained']} -{c['lost']})")
    if args.json:
        report = {"commit": _git("rev-parse", "HEAD").strip(), "rounds": per_round, "all": total}
        args.json.write_text(json.dumps(report, indent=2, default=dict) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
