"""`torchsmith verify WHEEL|--python PY --plan FILE`: prove the artifact holds what was asked."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

from torchsmith.console import err, print_json, print_table, shown, table
from torchsmith.errors import UsageError
from torchsmith.inspect.companion import is_companion
from torchsmith.interpreter import invocable
from torchsmith.proc import HOST
from torchsmith.report.progress import make_reporter
from torchsmith.verify import SmokeOptions, Verdict, load_plan, verify_artifact
from torchsmith.verify.attestation import attestation_checks
from torchsmith.verify.manifest_match import check_wheel_manifest, read_manifest
from torchsmith.verify.model import Check
from torchsmith.verify.smoke import SmokeMode, check_workdir

_MARK = {True: "[green]ok[/]", False: "[bold red]FAIL[/]", None: "[dim]skip[/]"}
_WARN = "[yellow]warn[/]"


def verdict_table(verdict: Verdict) -> Table:
    return checks_table(verdict.artifact, [*verdict.checks, *verdict.smoke])


def checks_table(artifact: str, rows: list[Check]) -> Table:
    grid = table(f"verify {shown(artifact)}", "check", "result", "expected", "found", "detail")
    for check in rows:
        secs = f" ({check.seconds:.1f} s)" if check.seconds is not None else ""
        mark = _WARN if check.ok is False and check.severity == "warning" else _MARK[check.ok]
        cells = (check.expected, check.actual + secs, check.detail)
        grid.add_row(shown(check.name), mark, *(shown(cell) for cell in cells))
    return grid


def _smoke(args: argparse.Namespace, workdir: Path) -> SmokeOptions | None:
    if args.no_smoke:
        return None
    mode: SmokeMode = args.smoke_mode or ("venv" if args.wheel else "interpreter")
    base = invocable(args.smoke_python or args.python or sys.executable)
    return SmokeOptions(
        python=base, workdir=workdir, runner=HOST, mode=mode, deps=not args.no_deps, gpu=args.gpu
    )


def _companion(args: argparse.Namespace) -> int:
    """A companion wheel (torchvision, torchaudio) against the manifest of its build."""
    from torchsmith.companions.manifest_check import raise_if_failed, verify_companion

    wheel, manifest = Path(args.wheel), Path(args.plan)
    check_wheel_manifest(wheel, manifest)
    checks = verify_companion(wheel, manifest) + _attested(args)
    if args.json:
        rows = [c.model_dump() for c in checks]
        print_json({"artifact": str(wheel), "checks": rows, "passed": all(c.ok for c in checks)})
    else:
        print_table(checks_table(str(wheel), checks))
    raise_if_failed(wheel, checks)
    return 0


def _attested(args: argparse.Namespace) -> list[Check]:
    """The wheel's SBOM, provenance and signature checks (none for --python)."""
    if not args.wheel:
        return []
    key = Path(args.public_key) if args.public_key else None
    return attestation_checks(Path(args.wheel), read_manifest(Path(args.plan)), key)


def _handler(args: argparse.Namespace) -> int:
    if (args.wheel is None) == (args.python is None):
        raise UsageError("give either a wheel file or --python PATH", "torchsmith verify --help")
    if args.wheel and is_companion(Path(args.wheel)):
        return _companion(args)
    plan = load_plan(Path(args.plan))
    if args.wheel:
        check_wheel_manifest(Path(args.wheel), Path(args.plan))
    attested = _attested(args)  # before the smoke test: a changed file fails at once
    reporter = make_reporter(err)  # on stderr: --json keeps stdout clean
    try:
        with tempfile.TemporaryDirectory(prefix="torchsmith-verify-") as tmp:
            workdir = check_workdir(Path(args.workdir)) if args.workdir else Path(tmp)
            verdict = verify_artifact(
                Path(args.wheel) if args.wheel else None,
                plan,
                dict(os.environ),
                runner=HOST,
                python=args.python,
                smoke=_smoke(args, workdir),
                reporter=reporter,
            )
    finally:
        reporter.close()
    verdict = verdict.model_copy(update={"checks": [*verdict.checks, *attested]})
    if args.json:
        data = verdict.model_dump(mode="json", exclude={"inspection"})
        print_json({**data, "passed": verdict.passed, "warnings": len(verdict.warnings)})
    else:
        print_table(verdict_table(verdict))
    verdict.raise_if_failed()
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("verify", help="check a wheel or installation against its plan")
    parser.add_argument(
        "wheel", nargs="?", help="the torch wheel to verify (or a companion's: torchvision…)"
    )
    parser.add_argument("--python", help="verify the torch this interpreter imports instead")
    parser.add_argument("--plan", required=True, help="plan JSON or build manifest JSON")
    parser.add_argument("--no-smoke", action="store_true", help="static checks only")
    parser.add_argument(
        "--smoke-mode",
        choices=("venv", "venv-system", "interpreter"),
        help="fresh venv (default for a wheel); venv-system: a venv that also sees the base "
        "interpreter's packages (offline machines); interpreter: run in --python as is "
        "(default with --python)",
    )
    parser.add_argument("--smoke-python", help="base interpreter for the venv (default: this one)")
    parser.add_argument("--no-deps", action="store_true", help="pip install the wheel --no-deps")
    parser.add_argument("--gpu", choices=("auto", "yes", "no"), default="auto")
    parser.add_argument("--workdir", help="keep the smoke venv and logs here")
    parser.add_argument(
        "--public-key",
        metavar="KEY.pub",
        help="Ed25519 public key (PEM) the provenance's DSSE signature must verify with",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handler)
