"""Release ranges checked together, from the real knowledge base: every request outside a
release's range is refused naming the first release (or version) that works, and a CUDA the
release never shipped gets a default arch list with its reason instead of a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.planner.kb import ci_host
from torchsmith.errors import PlanError
from torchsmith.host.model import GpuInfo, HostFacts
from torchsmith.kb import load
from torchsmith.plan import BuildPlan, resolve
from torchsmith.planner.context import Ctx
from torchsmith.planner.ranges import check_python
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import resolve_spec


def _plan(host: HostFacts | None = None, **cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli=cli), load(), host or ci_host())


def _refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        _plan(**cli)
    return info.value.render()


# (request, what is refused, the named way out)
REFUSALS: list[tuple[dict[str, Any], str, str]] = [
    ({"torch": "1.13.1", "python": "3.12"},
     "Python 3.12 needs torch ≥ 2.2.0: torch 1.13.1 supports Python 3.7–3.10",
     "use --python 3.10, or --torch 2.2.0"),
    ({"torch": "2.9.0", "python": "3.8"},
     "Python 3.8 needs torch ≤ 2.4.1", "--torch 2.4.1"),
    ({"torch": "2.5.1", "accelerator": "12.4", "gpus": ("RTX 5090",)},
     "sm_120 needs torch ≥ 2.7.0 and CUDA ≥ 12.8: torch 2.5.1's build does not accept '12.0' "
     "(its CMake arch parser stops with 'Unknown CUDA Architecture Name')",
     "use --torch 2.7.0 --cuda 12.8"),
    ({"torch": "2.6.0", "accelerator": "12.8", "gpus": ("12.0",), "companions": ("torchvision",)},
     "sm_120 needs torch ≥ 2.7.0: torch 2.6.0's build does not accept '12.0' "
     "(torch.utils.cpp_extension knows up to … 8.9, 9.0, 9.0a, 10.0",
     "use --torch 2.7.0"),
    ({"torch": "2.4.1", "accelerator": "12.4", "gpus": ("10.0",)},
     "sm_100 needs torch ≥ 2.6.0 and CUDA ≥ 12.8", "use --torch 2.6.0 --cuda 12.8"),
    ({"torch": "2.1.0", "accelerator": "12.1", "gpus": ("9.0a",)},
     "sm_90a needs torch ≥ 2.4.0", "use --torch 2.4.0, or 9.0 (without the arch-specific suffix)"),
    ({"torch": "1.13.1", "accelerator": "11.7", "gpus": ("RTX 4090",)},
     "sm_89 needs torch ≥ 2.0.0 and CUDA ≥ 11.8",
     "or build for 8.6 (its code runs on 8.9 GPUs: same major)"),
    ({"torch": "1.5.1", "accelerator": "10.2", "gpus": ("8.0",)},
     "sm_80 needs torch ≥ 1.6.0 and CUDA ≥ 11.0", "use --torch 1.6.0 --cuda 11.0"),
    ({"torch": "2.9.0", "accelerator": "11.8"},
     "CUDA 11.8 needs torch ≤ 2.8.0: torch 2.9.0's CMake requires CUDA ≥ 12.0",
     "use --cuda 13.0, or --torch 2.8.0"),
    ({"torch": "2.14.0", "accelerator": "12.4"},
     "CUDA 12.4 needs torch ≤ 2.13.0", "--torch 2.13.0"),
    ({"torch": "2.5.1", "accelerator": "11.8", "compiler": "gcc-13"},
     "CUDA 11.8 accepts gcc ≤ 11; you asked for gcc-13",
     "or --cuda 12.4 (the first CUDA that accepts gcc-13)"),
    ({"torch": "2.3.0", "compiler": "gcc-7"},
     "torch 2.3.0 needs GCC ≥ 9.3 (C++17); you asked for gcc-7",
     "use --compiler gcc-9 or newer, or --torch 2.1.2 (the last release that builds with gcc-7)"),
]  # fmt: skip


@pytest.mark.parametrize(("cli", "what", "way_out"), REFUSALS, ids=lambda v: str(v)[:40])
def test_a_request_outside_the_ranges_is_refused_naming_the_way_out(
    cli: dict[str, Any], what: str, way_out: str
) -> None:
    text = _refusal(**cli)
    assert what in text
    assert way_out in text


def test_a_known_fix_that_extends_cpp_extension_makes_the_arch_accepted() -> None:
    # fix cpp-extension-sm89-sm90 patches 1.13's supported_arches for CUDA 11.8 (seed 004)
    p = _plan(torch="1.13.1", accelerator="11.8", gpus=("8.6", "8.9"), python="3.10")
    assert p.arch_list == "8.6;8.9"
    assert "cpp-extension-sm89-sm90" in [f.id for f in p.fixes]


def test_an_unshipped_cuda_without_gpu_targets_gets_the_nearest_official_list_clipped() -> None:
    p = _plan(torch="1.13.1", accelerator="11.8", python="3.10")
    assert p.arch_list == "3.7;5.0;6.0;7.0;7.5;8.0;8.6"
    assert p.archs.origin == "kb"
    assert "nearest one (CUDA 11.7: 3.7;5.0;6.0;7.0;7.5;8.0;8.6)" in p.archs.reason


def test_the_nearest_list_drops_what_that_nvcc_cannot_target() -> None:
    # 2.0's CUDA 11.8 list has 3.7, which CUDA 12.1's nvcc no longer compiles
    p = _plan(torch="2.0.1", accelerator="12.1", python="3.10")  # valid; CI host: no 12.1
    assert not p.ready and p.arch_list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0"
    kb = load()
    ctx = Ctx(spec=BuildSpec(torch="2.0.1"), origins={}, kb=kb, host=ci_host())
    ctx.release = kb.release("2.0.1")
    from torchsmith.planner.archs import resolve_archs

    decision = resolve_archs(ctx, kb.cuda("12.1"))
    assert decision.value == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert "(CUDA 11.8: 3.7;5.0;6.0;7.0;7.5;8.0;8.6;9.0)" in decision.reason
    assert "dropped 3.7" in decision.reason
    assert not ctx.problems


def test_an_unshipped_cuda_with_a_gpu_here_builds_for_it() -> None:
    host = ci_host(
        gpus=[GpuInfo(index=0, name="NVIDIA GeForce RTX 3090", compute_capability="8.6")]
    )
    p = _plan(host=host, torch="1.13.1", accelerator="11.8", python="3.10")
    assert p.arch_list == "8.6"
    assert p.archs.reason.startswith("default 'native': torch 1.13.1 shipped no CUDA 11.8 build")


def test_a_gpu_here_the_release_does_not_accept_falls_back_to_the_nearest_list() -> None:
    host = ci_host(gpus=[GpuInfo(index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0")])
    p = _plan(host=host, torch="1.13.1", accelerator="11.8", python="3.10")
    assert p.arch_list == "3.7;5.0;6.0;7.0;7.5;8.0;8.6"
    assert any("9.0 are not ones torch 1.13.1's build accepts" in w for w in p.warnings)


def _python_problems(torch: str, python: str) -> list[str]:
    kb = load()
    ctx = Ctx(spec=BuildSpec(torch=torch), origins={}, kb=kb, host=ci_host())
    check_python(ctx, kb.release(torch), python)
    return [f"{p.what} → {p.fix}" for p in ctx.problems]


def test_free_threaded_python_names_the_first_release_with_its_wheels() -> None:
    (text,) = _python_problems("2.5.1", "3.13t")
    assert "free-threaded Python 3.13t needs torch ≥ 2.7.0: torch 2.5.1 has no official" in text
    assert "--torch 2.7.0" in text and "torch 2.6's Linux 3.13t binaries were experimental" in text
    (text,) = _python_problems("2.13.0", "3.13t")
    assert "needs torch ≤ 2.12.0" in text and "its free-threaded builds: 3.14t" in text


def test_free_threaded_python_within_the_range_is_planned() -> None:
    assert _python_problems("2.9.0", "3.14t") == []
    assert _python_problems("2.6.0", "3.13t") == []  # experimental: a warning (test_free_threaded)


def test_a_cuda_the_release_did_not_ship_takes_the_nearest_list_with_its_reason() -> None:
    kb = load()
    ctx = Ctx(spec=BuildSpec(torch="2.13.0"), origins={}, kb=kb, host=ci_host())
    ctx.release = kb.release("2.13.0")
    from torchsmith.planner.archs import resolve_archs

    decision = resolve_archs(ctx, kb.cuda("12.8"))
    assert decision.value == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert "shipped no CUDA 12.8 build" in decision.reason
    assert "nearest one (CUDA 12.6: 5.0;6.0;7.0;7.5;8.0;8.6;9.0)" in decision.reason
    assert not ctx.problems


def test_main_uses_the_newest_release_official_lists() -> None:
    kb = load()
    ctx = Ctx(spec=BuildSpec(torch="main"), origins={}, kb=kb, host=ci_host())
    ctx.release = kb.release("main")
    from torchsmith.planner.archs import resolve_archs

    decision = resolve_archs(ctx, kb.cuda("13.2"))
    assert decision.reason == "default: the official binaries' arch list for this release"
    assert decision.value == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]


def test_a_cuda_major_newer_than_the_release_names_the_tested_way() -> None:
    p = _plan(torch="2.0.1", accelerator="12.4", python="3.10", gpus=("8.9",))
    text = next(w for w in p.warnings if "not among torch 2.0.1's official" in w)
    assert "a CUDA major newer than any it was built with" in text
    assert "torch 2.4.0 or newer (official binaries with CUDA 12.4) is the tested way" in text


def test_a_companion_without_a_release_names_why_and_the_last_torch_it_followed() -> None:
    from torchsmith.planner.support import KNOWLEDGE_ONLY

    with pytest.raises(PlanError) as info:
        resolve(
            resolve_spec(cli={"torch": "2.4.0", "companions": ("torchtext",)}),
            load(),
            ci_host(),
            can=KNOWLEDGE_ONLY,
        )
    text = info.value.render()
    assert (
        "torchtext has no release matching torch 2.4.0 (last release 0.18.0, for torch 2.3" in text
    )
    assert "drop torchtext, or use --torch 2.3.1 (torchtext follows torch ≤ 2.3.1)" in text


def test_free_threaded_python_asked_on_the_command_line_is_refused_with_its_range() -> None:
    text = _refusal(torch="2.5.1", python="3.13t")
    assert "free-threaded Python 3.13t needs torch ≥ 2.7.0" in text
    assert "use --python 3.13 (with the GIL)" in text


def test_an_extension_only_arch_limit_is_a_warning_for_a_core_build() -> None:
    """Issue 24: torch 2.6.0's CMake takes 12.0 with CUDA 12.8 (only cpp_extension's list stops
    at 10.0), so a core build goes ahead, warned; its companions would be refused (above)."""
    p = resolve(
        resolve_spec(cli={"torch": "2.6.0", "accelerator": "12.8", "gpus": ("12.0",)}),
        load(),
        ci_host(),
    )
    assert p.arch_list == "12.0"
    assert any("torch 2.6.0's own build takes '12.0'" in w for w in p.warnings)
