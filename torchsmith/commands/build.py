"""`torchsmith build`: turn a plan into a torch wheel (or, with --target, a partial build)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from torchsmith import kb as kbmod
from torchsmith.backends import make_executor
from torchsmith.cache_root import default_cache_root
from torchsmith.commands.spec_args import add_spec_arguments, load_host, spec_from_args
from torchsmith.companions.facts import against_of
from torchsmith.console import err, out, print_json, shown
from torchsmith.doctor import diagnose
from torchsmith.errors import BuildError, UsageError
from torchsmith.host.scope import for_spec
from torchsmith.plan import resolve
from torchsmith.planner.readiness import refuse_not_ready
from torchsmith.proc import HOST
from torchsmith.report.eta import eta_for_plan
from torchsmith.report.progress import make_reporter
from torchsmith.report.summary import render_summary
from torchsmith.spec_sources import ResolvedSpec
from torchsmith.steps.context import BuildOptions
from torchsmith.steps.pipeline import BuildResult, run_build
from torchsmith.writable import check_build_paths


def _doctor_hint(exc: BuildError) -> str | None:
    """The doctor's top cause for the failed stage's log (None when it knows none)."""
    if not exc.log_path or not Path(exc.log_path).is_file():
        return None
    try:
        cause = diagnose(Path(exc.log_path)).cause
    except Exception:  # the doctor must never hide the build's own error
        return None
    if cause is None:
        return None
    return f"{cause.title}: {cause.cause} Fix: {cause.fix}"


def _with_diagnosis(exc: BuildError) -> BuildError:
    cause = _doctor_hint(exc)
    if not cause:
        return exc
    return BuildError(
        exc.message,
        f"likely cause (torchsmith doctor): {cause}\n{exc.hint}".rstrip(),
        log_path=exc.log_path,
        excerpt=exc.excerpt,
        returncode=exc.returncode,
    )


def _run(args: argparse.Namespace, env: dict[str, str]) -> BuildResult:
    resolved = spec_from_args(args, env)
    host = load_host(args, for_spec(resolved.spec))  # what plan probes for the same spec
    plan = resolve(resolved, kbmod.load(), host, against=against_of(resolved, env, HOST))
    refuse_not_ready(plan)  # the machine's answer: a toolkit nothing here can supply
    root = args.cache_root or default_cache_root(env)
    options = BuildOptions(
        cache_root=Path(root).expanduser().resolve(),
        output_dir=Path(plan.output_dir).expanduser().resolve(),
        install_deps=bool(args.install_deps),
        verify=not args.no_verify,
        request=resolved.recorded(),
    )
    eta = eta_for_plan(plan.torch.value, plan.cuda.value, plan.targets, plan.max_jobs.value)
    reporter = make_reporter(progress_console(args), eta)
    try:
        with make_executor(plan.backend, env) as executor:
            return run_build(plan, options, executor, reporter, host)
    except BuildError as exc:
        raise _with_diagnosis(exc) from exc
    finally:
        reporter.close()


def progress_console(args: argparse.Namespace) -> Console:
    """Where progress goes: stderr under --json, whose stdout is the one JSON document (issue 28
    item 9: build --json mixed progress lines into it)."""
    return err if getattr(args, "json", False) else out


class _Lines:
    """The container build's progress and the build inside's output: one line each, no
    markup, no terminal escapes (review N17)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def message(self, text: str) -> None:
        self.console.print(shown(text))


def _in_container(
    args: argparse.Namespace, rs: ResolvedSpec, env: dict[str, str], root: Path
) -> int:
    """`build --backend docker`: torchsmith builds inside a working container of the image."""
    from torchsmith.container import working

    w = working.prepare(rs, load_host(args, for_spec(rs.spec)), env, args.storage_root)
    said = progress_console(args)
    said.print(f"[bold]base image[/]: {escape(w.plan.base.image)} ({escape(w.plan.base.reason)})")
    said.print(f"[bold]engine[/]: {escape(w.engine.probe.describe())} — {escape(w.engine.reason)}")
    verify = not args.no_verify
    built = working.build(w, rs, root, pull=args.pull, verify=verify, say=_Lines(said))
    if args.json:
        print_json(built.data)
    else:
        out.print(f"[bold]manifest[/]: {escape(str(built.manifest))} (with the container's record)")
    return 0


def _handle(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    resolved = spec_from_args(args, env)
    root = Path(args.cache_root or default_cache_root(env)).expanduser()
    check_build_paths(resolved.spec.output_dir, resolved.spec.cache.dir, root)
    if resolved.spec.backend == "docker":  # the same pipeline, inside a container of the image
        root = Path(args.cache_root or default_cache_root(env)).expanduser().resolve()
        return _in_container(args, resolved, env, root)
    if args.storage_root is not None or args.pull != "missing":
        raise UsageError(
            "--storage-root and --pull apply to a build in a container, and this one runs on "
            "this machine (backend 'local')",
            "drop them, or build in a container: --backend docker",
        )
    result = _run(args, env)
    if args.json:
        print_json(result.manifest)
        return 0
    wheel = str(result.wheel) if result.wheel else None
    out.print(render_summary(result.manifest, str(result.manifest_paths[0]), wheel))
    out.print(f"logs: {result.log_dir}", markup=False)
    from torchsmith.report.build_report import report_line  # plotly: only once built

    out.print(report_line(result.workspace), markup=False)
    for warning in result.manifest.get("result_warnings", []):
        out.print(f"[yellow]warning (torchsmith doctor):[/] {escape(warning)}")
    return 0


def register(sub: Any) -> None:
    parser = sub.add_parser("build", help="build torch from source (a wheel, or --target only)")
    add_spec_arguments(parser)
    parser.add_argument(
        "--host-facts", type=Path, help="plan with recorded `torchsmith host --json`"
    )
    parser.add_argument(
        "--install-deps",
        action="store_true",
        help="let the source provider install the system packages it needs (apt)",
    )
    parser.add_argument(
        "--cache-root",
        type=Path,
        help="where sources, build dirs and the compiler cache live "
        "(default: $TORCHSMITH_CACHE_ROOT or ~/.cache/torchsmith)",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the last step (inspect the wheel against the plan, smoke tests)",
    )
    parser.add_argument("--json", action="store_true", help="print the manifest as JSON")
    g = parser.add_argument_group("container (--backend docker: the build runs inside the image)")
    g.add_argument("--pull", choices=("missing", "never", "always"), default="missing",
                   help="pulling the base image")  # fmt: skip
    g.add_argument("--storage-root", type=Path, metavar="DIR",
                   help="buildah's image store under DIR (overlay, else vfs)")  # fmt: skip
    parser.set_defaults(handler=_handle)
