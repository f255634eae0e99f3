"""`torchsmith doctor`: say why a build failed, from its whole log, and check this machine.

    torchsmith doctor build.log [--json] [--manifest M]
    torchsmith doctor --env [--json] [--python P] [--disk DIR]
    torchsmith doctor --list-rules [--json]

Exit codes (also in ``--help``):
  0   nothing wrong found
  20  a known cause was found (a rule matched an error), or --env found an error
  21  the log shows an error that no specific rule explains (the first error block, its
      class and the generic diagnosis of that class are printed)
  22  no error, but warnings: a feature was quietly switched off, or --env warnings
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from torchsmith import kb as kbmod
from torchsmith.console import out, print_json, print_table, shown, table
from torchsmith.doctor import Diagnosis, ErrorBlock, Finding, diagnose
from torchsmith.doctor.context import load_context
from torchsmith.doctor.envcheck import EnvProblem, check_all
from torchsmith.doctor.envprobe import gather, gather_plan
from torchsmith.doctor.plancheck import PlanNeeds, check_plan
from torchsmith.doctor.ruledb import load_rules
from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.proc import HOST
from torchsmith.verify.expect import load_plan

EXIT_OK, EXIT_CAUSE, EXIT_UNKNOWN, EXIT_WARNINGS = 0, 20, 21, 22
EPILOG = """exit codes:
  0   nothing wrong found
  20  a known cause was found (or --env found an error)
  21  the log shows an error no specific rule explains (its first error block, its
      class and that class's generic diagnosis are shown)
  22  no error, only warnings (a feature quietly switched off, or --env warnings)"""


def log_exit_code(diagnosis: Diagnosis) -> int:
    if diagnosis.known_cause:
        return EXIT_CAUSE
    if diagnosis.failed:
        return EXIT_UNKNOWN
    return EXIT_WARNINGS if diagnosis.warnings() else EXIT_OK


def env_exit_code(problems: list[EnvProblem]) -> int:
    if any(p.severity == "error" for p in problems):
        return EXIT_CAUSE
    return EXIT_WARNINGS if problems else EXIT_OK


# -- text output ----------------------------------------------------------------------------
def _show_block(block: ErrorBlock) -> None:
    where = f", {block.kind} target {block.target}" if block.target else ""
    out.print(f"[bold]first error[/] (line {block.start_line}{where}):")
    shown = {e.line for e in block.context}
    lines = sorted(
        [*block.context, *(e for e in block.lines if e.line not in shown)], key=lambda e: e.line
    )
    for ev in lines[:16]:
        out.print(f"  {ev.line:>9} | {ev.text}", markup=False, highlight=False)


def _tags(f: Finding) -> str:
    """'rule; category, stage', each said once ('install, install' read as a typo)."""
    kinds = dict.fromkeys((f.category, f.stage))
    return f"{f.rule_id}; {', '.join(k for k in kinds if k)}"


def _show_finding(rank: int, f: Finding) -> None:
    colour = "red" if f.severity == "error" else "yellow"
    kind = "generic diagnosis: " if f.generic else ""
    out.print(f"\n[bold {colour}]{rank}. {kind}{escape(f.title)}[/]  [dim]({_tags(f)})[/]")
    out.print(f"   cause: {f.cause}", markup=False)
    for ev in f.evidence:
        out.print(f"   line {ev.line}: {ev.text}", markup=False)
    if f.count > len(f.evidence):
        out.print(f"   … {f.count} matching lines in all")
    out.print(f"   fix: {f.fix}", markup=False)
    for name, value in f.fix_env.items():
        out.print(f"        {name}={value}", markup=False)
    if f.fix_packages:
        out.print(f"        packages: {', '.join(f.fix_packages)}", markup=False)
    out.print(f"   affects: {f.affected}", markup=False)
    out.print(f"   learned from: {f.source}", markup=False)


def _show_diagnosis(name: str, d: Diagnosis) -> None:
    out.print(f"{name}: {d.lines_scanned:,} lines, {d.error_blocks} error block(s)", markup=False)
    if d.first_error is not None:
        _show_block(d.first_error)
    if d.error is not None:
        fields = _typed_fields(d)
        out.print(f"error class: {d.error.kind}{fields}", markup=False, highlight=False)
    if not d.known_cause and d.failed:
        out.print(
            "\n[bold]no known cause[/]: no specific rule matches; the first error block above "
            "is the place to look, and the generic diagnosis of its class follows"
        )
    for rank, finding in enumerate(d.findings[:5], 1):
        _show_finding(rank, finding)
    if not d.findings and not d.failed:
        out.print("no error and no result-changing warning found")
    if d.cut_short:
        out.print(f"[yellow]warning:[/] {escape(d.cut_short)}; only the lines before were read")


def _typed_fields(d: Diagnosis) -> str:
    error = d.error
    assert error is not None
    named = {
        "tool": error.tool,
        "file": error.file,
        "header": error.header,
        "symbol": error.symbol,
        "library": error.library,
        "module": error.module,
    }
    shown_fields = ", ".join(f"{k} {v}" for k, v in named.items() if v)
    return f" ({shown_fields})" if shown_fields else ""


def _show_problems(problems: list[EnvProblem]) -> None:
    if not problems:
        out.print("environment: no problem found")
    for p in problems:
        colour = "red" if p.severity == "error" else "yellow"
        out.print(f"[bold {colour}]{p.severity}[/] {p.id}: {shown(p.what)}", highlight=False)
        for ev in p.evidence:  # paths, tool output: data, printed without markup or controls
            out.print(f"    {shown(ev)}", highlight=False)
        out.print(f"    fix: {shown(p.fix)}", highlight=False)
        if p.source:
            out.print(f"    source: {p.source}", markup=False)


# -- handlers -------------------------------------------------------------------------------
def _diagnose_log(args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    log = Path(args.log)
    if not log.is_file():
        raise UsageError(f"no log file at {log}", "give the path of a build log")
    context = load_context(Path(args.manifest)) if args.manifest else {}
    diagnosis = diagnose(log, context)
    if diagnosis.cut_short and log_exit_code(diagnosis) == EXIT_OK:
        raise UsageError(
            f"{diagnosis.cut_short}; the {diagnosis.lines_scanned:,} lines before hold no error",
            "give the whole log (copy it again, or the uncompressed file)",
        )
    if not args.json:
        _show_diagnosis(str(log), diagnosis)
    data = diagnosis.model_dump(mode="json")
    data["context"] = context
    return log_exit_code(diagnosis), data


def _plan_needs(manifest: str | None) -> PlanNeeds | None:
    """What the plan in ``--manifest`` (a plan --json file or a build manifest) needs; None
    for a file without a plan (a spec, another tool's manifest: versions only)."""
    if not manifest or not manifest.endswith(".json"):
        return None
    try:
        return PlanNeeds.of(load_plan(Path(manifest)))
    except UsageError:
        return None


def _check_env(args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    context = load_context(Path(args.manifest)) if args.manifest else {}
    needs = _plan_needs(args.manifest)
    env = dict(os.environ)
    compiler = needs.compiler if needs and not needs.in_container else None
    facts = gather(env, Path(args.disk), args.python, context.get("cuda"), compiler, runner=HOST)
    if args.python and facts.python is None:
        raise UsageError(
            f"--python {args.python}: it cannot be run as a Python interpreter, so no torch "
            "install of it was checked",
            "give the interpreter whose torch installs to check, e.g. --python "
            "/path/to/venv/bin/python (default: the one running torchsmith)",
        )
    try:
        kb: kbmod.KnowledgeBase | None = kbmod.load()
    except TorchsmithError:
        kb = None
    plan = gather_plan(needs, env, HOST) if needs else None
    problems = check_all(facts, kb, in_container=bool(needs and needs.in_container))
    if plan is not None:
        problems = sorted(
            [*problems, *check_plan(facts, plan)], key=lambda p: p.severity != "error"
        )
    if not args.json:
        _show_problems(problems)
    report = {
        "facts": facts.model_dump(mode="json"),
        "problems": [p.model_dump(mode="json") for p in problems],
    }
    if plan is not None:
        report["plan"] = plan.model_dump(mode="json")
    return env_exit_code(problems), report


def _list_rules(args: argparse.Namespace) -> int:
    rules = load_rules()
    if args.json:
        print_json([r.model_dump(mode="json") for r in rules])
        return EXIT_OK
    grid = table(f"{len(rules)} known failure modes", "id", "category", "severity", "title")
    grid.add_column("learned from", overflow="fold")
    for r in rules:
        grid.add_row(*(shown(cell) for cell in (r.id, r.category, r.severity, r.title, r.source)))
    print_table(grid)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        return _list_rules(args)
    if not args.log and not args.env:
        raise UsageError("nothing to diagnose", "give a build log, or --env to check this machine")
    codes: list[int] = []
    report: dict[str, Any] = {}
    if args.log:
        code, report["log"] = _diagnose_log(args)
        codes.append(code)
    if args.env:
        code, report["env"] = _check_env(args)
        codes.append(code)
    if args.json:
        print_json(report)
    return _combine(codes)


def _combine(codes: list[int]) -> int:
    for code in (EXIT_CAUSE, EXIT_UNKNOWN, EXIT_WARNINGS):
        if code in codes:
            return code
    return EXIT_OK


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "doctor",
        help="diagnose a failed build from its log, or check this machine (--env)",
        description="Find the first real error of a build log, match it against known "
        "failures learned from public reports, and print cause, evidence and fix.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("log", nargs="?", help="the build log (any size; read as a stream)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--manifest", metavar="M", help="build manifest/plan: versions to rank by")
    parser.add_argument("--env", action="store_true", help="check this machine's environment")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python whose torch installs to check (default: this one)",
    )
    parser.add_argument("--disk", default=".", help="where the build will write (free space)")
    parser.add_argument("--list-rules", action="store_true", help="list the known failure modes")
    parser.set_defaults(handler=run)
