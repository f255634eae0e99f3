"""What a built companion wheel's binaries must agree on with its torch (issue 11, part 3): its
extension modules link torch's own libraries (ones the torch wheel holds), with the torch's C++
ABI, and — for a build of its CUDA ops — GPU code for exactly the plan's archs."""

from __future__ import annotations

from typing import Any

from torchsmith.errors import VerifyError
from torchsmith.inspect.companion import CompanionInspection

_HINT = "rebuild the companion against this torch (same torch wheel, same build env)"


def expected_code(arch_list: str) -> tuple[list[str], list[str]]:
    """'8.6;9.0+PTX' -> (['sm_86', 'sm_90'], ['compute_90'])."""
    sass, ptx = [], []
    for entry in filter(None, (e.strip() for e in arch_list.replace(" ", ";").split(";"))):
        base = entry.removesuffix("+PTX")
        number = base.replace(".", "")
        sass.append(f"sm_{number}")
        if entry.endswith("+PTX"):
            ptx.append(f"compute_{number}")
    return sass, ptx


def _links(insp: CompanionInspection, shipped: frozenset[str]) -> list[str]:
    linked = sorted({lib for m in insp.modules for lib in m.torch_libs})
    if not linked:
        raise VerifyError(f"{insp.name}: no extension module links torch's libraries", _HINT)
    foreign = [lib for lib in linked if lib not in shipped]
    if foreign:
        raise VerifyError(
            f"{insp.name} links {', '.join(foreign)}, which its torch does not ship (torch/lib/)",
            _HINT,
        )
    return linked


def _abi(insp: CompanionInspection, torch_abi: bool | None) -> bool | None:
    if insp.cxx11_abi is not None and torch_abi is not None and insp.cxx11_abi != torch_abi:
        raise VerifyError(
            f"{insp.name}'s modules use _GLIBCXX_USE_CXX11_ABI={int(insp.cxx11_abi)}, its torch "
            f"{int(torch_abi)}: loading them fails with undefined symbols",
            _HINT,
        )
    return insp.cxx11_abi


def _gpu(insp: CompanionInspection, arch_list: str) -> dict[str, list[str]]:
    sass, ptx = expected_code(arch_list)
    if sorted(insp.sass) != sorted(sass) or sorted(insp.ptx) != sorted(ptx):
        raise VerifyError(
            f"{insp.name}'s GPU code is SASS {insp.sass or 'none'} / PTX {insp.ptx or 'none'}; "
            f"the plan's TORCH_CUDA_ARCH_LIST {arch_list!r} means SASS {sass} / "
            f"PTX {ptx or 'none'}",
            "TORCH_CUDA_ARCH_LIST did not reach the companion's build: see its build log",
        )
    return {"sass": insp.sass, "ptx": insp.ptx}


def check_binaries(
    insp: CompanionInspection, torch_libs: frozenset[str], torch_abi: bool | None, arch_list: str
) -> dict[str, Any]:
    """The companion's binary facts, each checked against its torch (``torch_libs``: what its
    torch/lib/ holds) and the plan."""
    record: dict[str, Any] = {
        "links": _links(insp, torch_libs),
        "cxx11_abi": _abi(insp, torch_abi),
        "modules": [m.path for m in insp.modules],
    }
    if arch_list:
        record["gpu"] = _gpu(insp, arch_list)
    elif insp.sass or insp.ptx:
        raise VerifyError(f"{insp.name} holds GPU code, but its build was planned CPU-only", _HINT)
    return record
