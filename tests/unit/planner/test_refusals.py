"""Impossible requests refused at plan time, from the real knowledge base (no process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.planner.kb import ci_host
from torchsmith.errors import PlanError, SpecError
from torchsmith.kb import load
from torchsmith.plan import BuildPlan, resolve
from torchsmith.spec_sources import feature_switches, resolve_spec


def plan(**cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli=cli), load(), ci_host())


def refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_torch_110_with_cuda_124_and_sm90_is_refused_naming_both_sides() -> None:
    text = refusal(torch="1.1.0", accelerator="12.4", gpus=("9.0",), python="3.7")
    assert "torch 1.1.0 was released for CUDA 9.0, 10.0" in text
    assert "CUDA 12.4 is 2 major versions newer" in text
    assert "use --cuda 10.0 with torch 1.1.0, or torch 2.4.0 or newer" in text
    assert "sm_90 is newer than any GPU torch 1.1.0 knew: its official binaries stop at 7.5" in text
    assert "9.0 needs CUDA ≥ 11.8" in text


def test_one_cuda_major_newer_stays_an_untested_warning() -> None:
    p = plan(torch="1.13.1", accelerator="11.8", gpus=("8.6", "8.9"), python="3.10")
    assert any("untested combination" in w for w in p.warnings)
    assert any("GPU target 8.9 is newer than torch 1.13.1's official targets" in w
               for w in p.warnings)  # fmt: skip


def test_enable_and_disable_of_one_feature_is_a_spec_error_in_either_order() -> None:
    for enabled, disabled in ((("mkl",), ("mkl", "cudnn")), (("cudnn", "mkl"), ("mkl",))):
        values, problems = feature_switches(enabled, disabled)
        assert [p.field for p in problems] == ["features.mkl"]
        assert "--enable mkl and --disable mkl were both given" in problems[0].what
        assert "features.mkl" not in values


def test_a_spec_file_cannot_set_one_feature_twice(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text("features.mkl = true\n[features]\nmkl = false\n", encoding="utf-8")
    with pytest.raises(SpecError, match="not valid TOML"):
        resolve_spec(file=spec)


def test_enable_and_disable_on_the_command_line_is_refused() -> None:
    import argparse

    from torchsmith.commands.spec_args import add_spec_arguments, spec_from_args

    parser = argparse.ArgumentParser()
    add_spec_arguments(parser)
    for argv in (["--enable", "mkl", "--disable", "mkl"], ["--disable", "mkl", "--enable", "mkl"]):
        with pytest.raises(SpecError, match="--enable mkl and --disable mkl were both given"):
            spec_from_args(parser.parse_args(argv), env={})


def _nccl_env(**cli: Any) -> dict[str, str]:
    env = plan(**cli).env_dict()
    return {k: v for k, v in env.items() if k.startswith("NCCL_")}


def test_system_nccl_location_is_spelled_the_way_the_release_reads_it() -> None:
    nccl = {"features.nccl": True, "features.system_nccl": True, "nccl.root": "/opt/nccl"}
    assert _nccl_env(torch="2.5.1", accelerator="12.4", gpus=("9.0",), **nccl) == {
        "NCCL_ROOT": "/opt/nccl",
        "NCCL_INCLUDE_DIR": "/opt/nccl/include",
        "NCCL_LIB_DIR": "/opt/nccl/lib",
    }


def test_a_nccl_location_without_system_nccl_is_refused() -> None:
    with pytest.raises(PlanError, match=r"features\.system_nccl is off"):
        plan(torch="2.5.1", accelerator="12.4", gpus=("9.0",), **{"nccl.root": "/usr"})
