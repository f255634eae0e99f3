"""How a plan is shown to a person: its tables (the JSON that ``torchsmith plan --json`` prints
is :mod:`torchsmith.report.plan_json`, without rich). Shared by ``plan``, ``build --backend
docker`` and ``image``; commands only call these."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from torchsmith.console import out, print_table, table
from torchsmith.plan_model import BuildPlan, Decision


def _decisions_table(plan: BuildPlan) -> Table:
    grid = table(f"torchsmith plan {plan.plan_hash()}", "what", "value", "from", "why")
    rows: list[tuple[str, Decision[object]]] = [
        ("torch", plan.torch), ("python", plan.python), ("cuda", plan.cuda),
        ("toolkit", plan.toolkit), ("compiler", plan.compiler), ("archs", plan.archs),
        ("frontend", plan.frontend), ("max_jobs", plan.max_jobs),
        ("max_jobs (nvcc)", plan.max_jobs_cuda), ("disk (GB)", plan.disk_gb),
        ("cache", plan.cache),
    ]  # fmt: skip
    rows += [(f"feature {k}", d) for k, d in plan.features.items() if d.value is not None]
    rows += [(f"link {k}", d) for k, d in plan.linking.items() if d.value is not None]
    for name, d in rows:
        value = ";".join(d.value) if isinstance(d.value, list) else d.value
        shown = "—" if value is None else str(value)
        grid.add_row(escape(name), escape(shown), d.origin, escape(d.reason))
    return grid


def print_plan(plan: BuildPlan) -> None:
    """The plan as a person reads it: source, decisions with reasons, environment, fixes, steps."""
    src = plan.source
    ref = f" {src.ref}" if src.ref and src.ref != src.location else ""  # a bundle: ref == path
    out.print(f"[bold]source[/]: {escape(f'{src.kind} {src.location}{ref}')}")
    fetch = next((s for s in plan.steps if s.name == "fetch" and s.subject is None), None)
    if src.kind == "git" and fetch is not None:  # the commit the fetch insists on, or none
        out.print(f"  fetch: {escape(fetch.what)}")
    for comp in plan.companions:
        out.print(f"[bold]{comp.name}[/] {escape(f'{comp.version} ({comp.reason})')}")
    print_table(_decisions_table(plan))
    if plan.cache_setup is not None:  # where the cache stores, level by level (not hashed)
        out.print(f"[bold]compiler cache[/]: {escape(plan.cache_setup.reason)}")
    if plan.companion_build is not None:  # torch is not built: only the companions' settings
        _print_companion_builds(plan)
        print_readiness(plan)
        return
    env = table("environment", "variable", "value", "why")
    for setting in plan.env:
        env.add_row(escape(setting.name), escape(setting.value), escape(setting.reason))
    print_table(env)
    for fix in plan.fixes:
        out.print(f"[bold]fix {fix.id}[/] ({fix.action}): {escape(fix.title)}")
        out.print(f"  {fix.explanation}\n  source: {fix.source}", markup=False)
    out.print("[bold]steps[/]: " + " → ".join(s.label for s in plan.steps))
    for warning in plan.warnings:
        out.print(f"[yellow]warning:[/] {escape(warning)}")
    print_readiness(plan)


def print_readiness(plan: BuildPlan) -> None:
    """The machine's answer, after the combination's: the readiness table and a one-line
    verdict (the combination is valid either way: `plan` printed it)."""
    if not plan.readiness:
        return
    grid = table("this machine (readiness)", "tool", "needed", "found", "provided by")
    for item in plan.readiness:
        mark = "" if item.ready else "✗ "
        grid.add_row(escape(mark + item.tool), escape(item.needed), escape(item.found),
                     escape(item.provider))  # fmt: skip
    print_table(grid)
    if plan.ready:
        out.print("[bold]ready[/]: yes — this machine can run the plan")
        return
    stop = any(not i.provisionable for i in plan.readiness if not i.ready)
    then = (
        "install the ✗ rows first (`torchsmith build` refuses until then)"
        if stop
        else "`torchsmith build` checks the ✗ rows before any work (--install-deps installs them)"
    )
    verdict = "no — the combination is valid; this machine cannot run it yet"
    out.print(f"[bold]ready[/]: {verdict}: {then}")


def _print_companion_builds(plan: BuildPlan) -> None:
    build = plan.companion_build
    assert build is not None
    torch = build.torch
    abi = f"C++11 ABI {torch.cxx11_abi} ({torch.abi_evidence})"
    out.print(
        f"[bold]against[/]: {escape(f'torch {torch.runtime_version} {torch.location}; {abi}')}"
    )
    for comp in build.builds:
        grid = table(f"{comp.name} {comp.version}: {comp.reason}", "variable", "value", "why")
        for v in comp.env:
            grid.add_row(escape(v.name), escape(v.value), escape(v.reason))
        print_table(grid)
        for pkg in comp.system_packages:
            out.print(f"  needs {escape(pkg.name)} ({escape(pkg.value)}): {escape(pkg.reason)}")
        out.print(f"  smoke test: {escape(comp.smoke)}")
    out.print("[bold]steps[/]: " + " → ".join(s.label for s in plan.steps))
    for warning in plan.warnings:
        out.print(f"[yellow]warning:[/] {escape(warning)}")
