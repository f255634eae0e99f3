"""One entry point for both kinds of artifact, with the optional cuobjdump cross-check."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from torchsmith.errors import UsageError
from torchsmith.inspect.crosscheck import compare_listing, run_cuobjdump, summary
from torchsmith.inspect.installed import inspect_installed
from torchsmith.inspect.model import Inspection
from torchsmith.inspect.wheel import inspect_wheel
from torchsmith.runner import Runner


def _cross_check(insp: Inspection, listings: dict[str, Counter[str]], tool: str) -> Inspection:
    diffs: list[str] = []
    for lib in insp.libraries:
        if lib.gpu is not None or lib.path in listings:
            diffs += compare_listing(lib.path, lib.gpu, listings.get(lib.path, Counter()))
    return insp.model_copy(update={"cross_check": summary(tool, diffs)})


def inspect_artifact(
    *,
    wheel: Path | None = None,
    python: str | None = None,
    env: Mapping[str, str],
    runner: Runner,
    cuobjdump: str | None = None,
    say: Callable[[str], None] | None = None,
) -> Inspection:
    """Inspect a wheel file or the torch ``python`` imports; cross-check with ``cuobjdump``
    (a path) when given; ``say`` hears progress lines."""
    listings: dict[str, Counter[str]] = {}

    def listing(member: str, path: Path) -> None:
        if cuobjdump is not None:
            listings[member] = run_cuobjdump(cuobjdump, path, env, member, runner=runner)

    if wheel is not None:
        insp = inspect_wheel(wheel, listing, say)
    elif python is not None:
        insp = inspect_installed(python, env, runner)
        site = Path(insp.location).parent
        for lib in insp.libraries:
            if lib.gpu is not None:
                listing(lib.path, site / lib.path)
    else:
        raise UsageError(
            "inspect needs a wheel file or --python PATH (an empty path names neither)",
            "torchsmith inspect path/to/torch-….whl, or --python /path/to/python",
        )
    return _cross_check(insp, listings, cuobjdump) if cuobjdump else insp
