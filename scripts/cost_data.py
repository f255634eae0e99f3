#!/usr/bin/env python3
"""Write the ETA's cost data for a release from a real build's .ninja_log (its last run):
   scripts/cost_data.py BUILD/.ninja_log --release 2.6.0 --accelerator cpu --jobs 2 \
       --edges 1371 --source "where and how the build ran" \
       > torchsmith/report/data/cost-2.6.0-cpu.toml
The groups are those of the 1.13.1 data (torchsmith/report/data/cost-1.13.1-cpu.toml); the
run is the log's build run (the one with the most compile edges)."""

import argparse
from pathlib import Path

from torchsmith.report.costdata import build_run, cost_toml, group_sums
from torchsmith.report.eta import CostModel, find_model
from torchsmith.report.ninja_log import parse_runs

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ninja_log", type=Path)
    parser.add_argument("--release", required=True)
    parser.add_argument("--accelerator", default="cpu")
    parser.add_argument("--jobs", type=int, required=True, help="ninja -j of that build")
    parser.add_argument("--edges", type=int, required=True, help="edges of the whole build")
    parser.add_argument("--source", required=True, help="machine, date, command of that build")
    args = parser.parse_args()
    template = find_model("1.13.1", "cpu")
    assert template is not None
    edges = build_run(parse_runs(args.ninja_log.read_text(encoding="utf-8", errors="replace")))
    model = CostModel(args.release, args.accelerator, args.edges, template.groups, args.source)
    print(cost_toml(model, group_sums(edges, template), args.jobs), end="")
