"""Planner logic, from small spec snippets, no subprocess."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.planner.kb import ci_host, gpu_host, mini_kb
from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts, PythonInfo
from torchsmith.plan import BuildPlan, resolve
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.spec_sources import resolve_spec


def plan(host: HostFacts | None = None, **cli: Any) -> BuildPlan:
    """The planner's knowledge, whatever the pipeline carries out today (that refusal is
    tested in tests/unit/planner/test_support.py)."""
    return resolve(resolve_spec(cli=cli), mini_kb(), host or ci_host(), can=KNOWLEDGE_ONLY)


def problems(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_default_is_newest_release_cpu() -> None:
    p = plan()
    assert p.torch.value == "2.5.1" and p.torch.origin == "default"
    assert p.cuda.value is None and p.arch_list == ""
    assert p.env_dict()["USE_CUDA"] == "0"


def test_arch_names_and_ccs_are_merged_sorted_and_ptx_kept() -> None:
    p = plan(torch="2.5.1", accelerator="12.4", gpus=("RTX 4090", "8.6", "sm_80", "9.0+PTX"))
    assert p.arch_list == "8.0;8.6;8.9;9.0+PTX"
    assert p.archs.origin == "user"
    assert p.env_dict()["TORCH_CUDA_ARCH_LIST"] == "8.0;8.6;8.9;9.0+PTX"


def test_ptx_newest_policy_adds_ptx_to_highest_arch() -> None:
    p = plan(torch="2.5.1", accelerator="12.4", gpus=("8.6", "8.0"), ptx="newest")
    assert p.arch_list == "8.0;8.6+PTX"


def test_official_arch_list_is_the_default_for_cuda_builds() -> None:
    p = plan(torch="2.5.1", accelerator="12.4")
    assert p.arch_list == "5.0;6.0;7.0;7.5;8.0;8.6;9.0"
    assert p.archs.origin == "kb"


def test_native_uses_detected_gpus_and_refuses_without_any() -> None:
    p = plan(host=gpu_host(), torch="2.5.1", accelerator="12.4", gpus=("native",))
    assert p.arch_list == "9.0"
    assert "none was detected" in problems(torch="2.5.1", accelerator="12.4", gpus=("native",))


def test_arch_the_cuda_cannot_build_is_refused_naming_both_sides() -> None:
    text = problems(torch="2.5.1", accelerator="12.4", gpus=("3.5", "8.6"))
    assert "sm_35 needs CUDA ≤ 11.8; you asked for CUDA 12.4" in text
    assert "drop 3.5 or use --cuda 11.8" in text


def test_too_new_arch_names_the_first_cuda_that_builds_it() -> None:
    text = problems(torch="1.13.1", accelerator="11.7", gpus=("9.0",))
    assert "sm_90 needs CUDA ≥ 11.8" in text and "use --cuda 11.8" in text


def test_python_outside_the_release_range_is_refused() -> None:
    text = problems(torch="1.13.1", python="3.12")
    assert "Python 3.12 needs torch ≥ 2.5.1: torch 1.13.1 supports Python 3.7–3.10" in text
    assert "use --python 3.10, or --torch 2.5.1" in text  # the mini KB's first 3.12 release


def test_compiler_the_cuda_rejects_is_refused_with_the_one_that_works() -> None:
    text = problems(torch="1.13.1", accelerator="11.7", compiler="gcc-12", gpus=("8.6",))
    assert "CUDA 11.7 accepts gcc ≤ 11; you asked for gcc-12" in text
    assert "--compiler gcc-11" in text and "apt-get install gcc-11 g++-11" in text


def test_missing_fitting_compiler_is_planned_with_a_readiness_row() -> None:
    p = plan(torch="1.13.1", accelerator="11.8", gpus=("8.6",))
    assert p.compiler.value == "gcc-11" and p.compiler.origin == "kb"
    row = next(r for r in p.readiness if r.tool == "host compiler")
    assert row.needed.startswith("gcc-11") and not row.ready and row.provisionable
    assert not any("gcc-11 is needed" in w for w in p.warnings)  # the machine's, not a warning
    assert any("not among torch 1.13.1's official CUDA versions" in w for w in p.warnings)


def test_unknown_version_gpu_and_companion_all_reported_at_once() -> None:
    with pytest.raises(PlanError) as info:
        plan(torch="2.5.1", accelerator="12.4", gpus=("RTX 9999",), companions=("torchtext",))
    assert len(info.value.problems) == 2
    text = info.value.render()
    assert "GPU 'RTX 9999' is not in the knowledge base" in text
    assert "torchtext has no release matching torch 2.5.1" in text
    assert "torch '2.5.9' is not a release" in problems(torch="2.5.9")


def test_companion_pins_must_match() -> None:
    assert "torchvision 0.4.0 does not match torch 1.1.0" in problems(
        torch="1.1.0", companions=("torchvision==0.4.0",)
    )
    p = plan(torch="1.13.1", companions=("auto",))
    assert [(c.name, c.version) for c in p.companions] == [
        ("torchvision", "0.14.1"),
        ("torchaudio", "0.13.1"),
        ("torchtext", "0.14.1"),
    ]


def test_legacy_release_gets_no_spellings() -> None:
    p = plan(torch="1.1.0", python="3.5", **{"features.fbgemm": False, "features.tests": False})
    env = p.env_dict()
    assert env["NO_FBGEMM"] == "1" and "USE_FBGEMM" not in env
    assert env["NO_TEST"] == "1" and env["NO_CUDA"] == "1"
    p = plan(torch="1.13.1", **{"features.fbgemm": False})
    assert p.env_dict()["USE_FBGEMM"] == "0" and "NO_FBGEMM" not in p.env_dict()


def test_cuda_only_feature_on_cpu_build_is_refused() -> None:
    assert "cudnn needs a CUDA build" in problems(torch="2.5.1", **{"features.cudnn": True})
    assert "need a CUDA build" in problems(torch="2.5.1", gpus=("8.6",))


def test_jobs_follow_ram_not_just_cores() -> None:
    p = plan(host=ci_host(cores=16, ram_gib=8.0), torch="2.5.1", accelerator="12.4")
    assert p.max_jobs.value == 4 and "limited by RAM" in p.max_jobs.reason
    assert p.max_jobs_cuda.value == 2
    p = plan(torch="2.5.1")
    assert p.max_jobs.value == 2 and "limited by cores" in p.max_jobs.reason
    assert plan(torch="2.5.1", max_jobs=7).env_dict()["MAX_JOBS"] == "7"


def test_ccache_is_the_launcher_and_use_ccache_is_pinned() -> None:
    env = plan(torch="2.5.1").env_dict()
    assert env["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache"
    assert env["USE_CCACHE"] == "0"
    assert (
        "CMAKE_CXX_COMPILER_LAUNCHER"
        not in plan(torch="2.5.1", **{"cache.kind": "none"}).env_dict()
    )


def test_plan_is_json_and_its_hash_is_stable() -> None:
    a = plan(torch="2.5.1", accelerator="12.4", gpus=("8.6",))
    b = plan(torch="2.5.1", accelerator="12.4", gpus=("8.6",))
    assert a.plan_hash() == b.plan_hash()
    assert BuildPlan.model_validate_json(json.dumps(a.model_dump(mode="json"))) == a
    c = plan(torch="2.5.1", accelerator="12.4", gpus=("8.9",))
    assert c.plan_hash() != a.plan_hash()


def test_partial_build_steps_end_with_a_manifest() -> None:
    p = plan(torch="1.13.1", targets=("c10",))
    assert [s.name for s in p.steps][-2:] == ["compile", "publish"]
    assert p.targets == ["c10"]


def test_arch_suffixes_need_their_cuda_and_torch_support() -> None:
    from torchsmith.kb import load

    real = load()
    kb = mini_kb()
    kb = type(kb)(**{**kb.__dict__, "arch_suffixes": real.arch_suffixes})

    def refused(**cli: Any) -> str:
        with pytest.raises(PlanError) as info:
            resolve(resolve_spec(cli=cli), kb, ci_host())
        return info.value.render()

    assert "sm_90a needs CUDA ≥ 12.0; you asked for CUDA 11.8" in refused(
        torch="2.5.1", accelerator="11.8", gpus=("9.0a",)
    )
    assert "cannot express '9.0f'" in refused(torch="2.5.1", accelerator="12.4", gpus=("9.0f",))
    p = resolve(
        resolve_spec(cli={"torch": "2.5.1", "accelerator": "12.4", "gpus": ("9.0a", "8.6"),
                          "ptx": "newest"}), kb, ci_host())  # fmt: skip
    assert p.arch_list == "8.6+PTX;9.0a"  # PTX goes on the newest *plain* arch


def test_nvcc_jobs_bound_max_jobs_of_cuda_builds() -> None:
    p = plan(host=ci_host(cores=64, ram_gib=128.0), torch="2.5.1", accelerator="12.4")
    assert p.max_jobs.value == 64 and p.max_jobs_cuda.value == 32
    assert p.env_dict()["MAX_JOBS"] == "32"


def test_pep440_build_version_and_none_for_main() -> None:
    assert plan(torch="2.5.1", accelerator="12.4").env_dict()["PYTORCH_BUILD_VERSION"] == (
        "2.5.1+cu124"
    )
    from torchsmith.errors import SpecError

    with pytest.raises(SpecError, match="not a PEP 440 version"):
        plan(build_version="[/x]")


def test_cuda_no_provider_can_supply_is_a_readiness_row_naming_the_ways_out() -> None:
    p = plan(torch="1.13.1", accelerator="11.7", gpus=("8.6",))  # valid: planned, not ready
    row = next(r for r in p.readiness if r.tool == "CUDA toolkit (nvcc)")
    assert not p.ready and not row.ready and not row.provisionable
    assert p.toolkit.value == "system" and "no CUDA 11.7 on this machine yet" in p.toolkit.reason
    text = row.provider
    assert "nvidia/cuda:11.7" in text and "conda install" in text
    assert "--backend docker" not in text  # not offered while the pipeline cannot run it
    assert "cuda-toolkit-11-7" in text  # NVIDIA's apt/dnf repository
    p = plan(torch="1.13.1", accelerator="11.7", gpus=("8.6",), backend="docker")
    assert p.toolkit.value == "container"


def test_a_missing_compiler_is_not_promised_by_apt() -> None:
    """New-user trial §4: the plan said `apt-get install gcc-6` on Debian 12, which has none."""
    p = plan(torch="1.13.1", accelerator="11.8", gpus=("8.6",))  # the CI host has only gcc 12
    note = next(r.provider for r in p.readiness if r.needed.startswith("gcc-11"))
    assert "where this distribution packages it" in note and "apt-cache policy gcc-11" in note


def test_a_container_build_never_takes_its_python_from_this_host() -> None:
    """New-user trial §4 seed 002: planned Python 3.6 because this host has a pyenv 3.6."""
    host = ci_host(pythons=[PythonInfo(path="/root/.pyenv/versions/3.6.15/bin/python3",
                                        version="3.6.15")])  # fmt: skip
    local = plan(host, torch="1.1.0", accelerator="cpu")
    assert local.python.value == "3.6" and local.python.origin == "host"
    p = resolve(resolve_spec(cli={"torch": "1.1.0", "accelerator": "cpu", "backend": "docker"}),
                mini_kb(), host, can=KNOWLEDGE_ONLY)  # fmt: skip
    assert p.python.value == "3.7" and p.python.origin == "kb" and "docker image" in p.python.reason


def test_a_partial_build_needs_the_disk_of_its_targets_not_of_a_whole_build() -> None:
    """CI's seed 004 test (c10_cuda and one kernel) was refused with 13.5 GiB free against a
    whole CUDA build's 23 GiB estimate."""
    cli = {"torch": "2.5.1", "accelerator": "12.4", "gpus": ("8.6", "9.0")}
    whole, partial = plan(**cli), plan(**cli, targets=("c10_cuda",))
    assert whole.disk_gb.value == 8.0 + 3.0 + 12.0 + 2 * 1.5
    assert partial.disk_gb.value == 3.0 + 3.0 + 5.0 < 13.5
    assert "partial CUDA build" in partial.disk_gb.reason
    assert plan(torch="2.5.1", targets=("c10",)).disk_gb.value == 3.0 + 3.0


def test_code_generation_gets_a_fixed_hash_seed_for_the_compiler_cache() -> None:
    """A full 1.13.1 build in a second workspace missed the cache on autograd/generated/*.cpp:
    their line order followed Python's random string hash (docs/benchmarks.md)."""
    for p in (plan(torch="1.13.1"), plan(torch="2.5.1", accelerator="12.4", gpus=("8.6",))):
        setting = next(e for e in p.env if e.name == "PYTHONHASHSEED")
        assert setting.value == "0" and "pytorch/pytorch#58944" in setting.reason
