"""The machine's answer, kept apart from the combination's: what the machine the plan is made
for (this host, ``--host-facts``, or a container image's facts) has of the tools the build
needs. A missing tool is a row of the readiness table (tool, needed, found, how it is
provided), never a conflict: ``plan`` answers for a valid combination whatever the machine,
and ``build`` refuses to start only where a row is neither here nor suppliable (see
:func:`not_ready_problems`). Pure: host facts only, no process."""

from __future__ import annotations

from collections.abc import Sequence

from torchsmith.errors import NotReadyError, Problem
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan, ReadinessItem
from torchsmith.planner.toolkit_offers import Offer
from torchsmith.planner.toolkit_select import ELSEWHERE

TOOLKIT = "CUDA toolkit (nvcc)"
COMPILER = "host compiler"


def toolkits_found(host: HostFacts) -> str:
    """The CUDA toolkits the machine has, e.g. '13.0 (/usr/local/cuda-13.0)', or 'none'."""
    return ", ".join(f"{t.version} ({t.root})" for t in host.cuda_toolkits) or "none"


def install_ways(cuda: str) -> str:
    """Where a CUDA ``cuda`` toolkit comes from when no provider of ours has it (numbered)."""
    dash = cuda.replace(".", "-")
    ways = [w.format(cuda=cuda, dash=dash) for w in ELSEWHERE]
    return "; ".join(f"({i}) {w}" for i, w in enumerate(ways, start=1))


def first_toolkit(found: Sequence[Offer]) -> Offer | None:
    """The first offer (in order of preference) that can supply a whole toolkit."""
    return next((o for o in found if o.capability == "toolkit"), None)


def toolkit_row(cuda: str, host: HostFacts, found: Sequence[Offer]) -> ReadinessItem:
    """The toolkit's row from the providers' offers (``found``, in order of preference)."""
    needed, have = f"CUDA {cuda} (nvcc, headers, runtime)", toolkits_found(host)
    offer = first_toolkit(found)
    if offer is not None:
        how = "this machine" if offer.provider == "system" else "torchsmith downloads it"
        return ReadinessItem(
            tool=TOOLKIT, needed=needed, found=have,
            provider=f"{how} ({offer.provider}: {offer.reason})", ready=True,
        )  # fmt: skip
    why = "; ".join(f"{o.provider}: {o.reason}" for o in found)
    return ReadinessItem(
        tool=TOOLKIT,
        needed=needed,
        found=have,
        provider=f"you install it — no provider can supply a CUDA {cuda} compiler here "
        f"({why}): {install_ways(cuda)}; then torchsmith finds it (--toolkit system)",
        ready=False,
        provisionable=False,
    )


def image_toolkit_row(cuda: str, backend: str) -> ReadinessItem:
    """A container build's toolkit: its NVIDIA CUDA devel image's (the machine is the image)."""
    return ReadinessItem(
        tool=TOOLKIT,
        needed=f"CUDA {cuda} (nvcc, headers, runtime)",
        found=f"the {backend} backend's image",
        provider=f"the image (nvidia/cuda:{cuda}.*-devel holds nvcc)",
        ready=True,
    )


def compiler_row(label: str, found: str, why: str, here: bool) -> ReadinessItem:
    """The host compiler's row: ``label`` (e.g. 'gcc-13') is here, or is installed by the user
    or `build --install-deps` (build checks it before any work)."""
    major = label.rsplit("-", maxsplit=1)[-1]
    provider = (
        "this machine"
        if here
        else f"apt-get install gcc-{major} g++-{major} (where this distribution packages it: "
        f"`apt-cache policy gcc-{major}`), or `torchsmith build --install-deps`"
    )
    return ReadinessItem(
        tool=COMPILER, needed=f"{label} ({why})", found=found, provider=provider, ready=here
    )


def compilers_found(host: HostFacts) -> str:
    return ", ".join(sorted({c.label for c in host.compilers})) or "none"


def not_ready_problems(plan: BuildPlan) -> list[Problem]:
    """What keeps `torchsmith build` from starting: rows neither here nor suppliable by it."""
    return [
        Problem(
            f"{item.tool}: {item.needed} is needed; this machine has {item.found}",
            item.provider,
            "readiness",
        )
        for item in plan.readiness
        if not item.ready and not item.provisionable
    ]


def refuse_not_ready(plan: BuildPlan) -> None:
    """`torchsmith build`'s gate: raise :class:`NotReadyError` with the rows this machine lacks and
    cannot be given by torchsmith (before anything is downloaded)."""
    problems = not_ready_problems(plan)
    if problems:
        raise NotReadyError(
            problems,
            "the combination is valid, this machine cannot build it yet: install what the rows "
            "name, then build again (`torchsmith plan` shows the readiness table); nothing was "
            "built",
        )
