"""The torch releases of the KB (kb/data/releases.toml) and scripts/refresh_releases.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.version import Version
from pydantic import ValidationError

from torchsmith import kb
from torchsmith.kb import schema
from torchsmith.kb.models import Release

ROOT = Path(__file__).resolve().parents[3]


def _refresh_module() -> ModuleType:
    path = ROOT / "scripts" / "refresh_releases.py"
    spec = importlib.util.spec_from_file_location("refresh_releases", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_releases", module)
    spec.loader.exec_module(module)
    return module


refresh = _refresh_module()


@pytest.fixture(scope="module")
def releases() -> dict[str, Release]:
    return {r.torch: r for r in kb.load().releases}


def numbered(releases: dict[str, Release]) -> list[str]:
    return sorted((v for v in releases if v != "main"), key=Version)


# -- coverage -----------------------------------------------------------------------------------
def test_releases_cover_1_0_0_to_newest_without_gaps(releases: dict[str, Release]) -> None:
    versions = numbered(releases)
    assert versions[0] == "1.0.0"
    assert kb.load().newest_release().torch == versions[-1]
    assert Version(versions[-1]) >= Version("2.15.0")
    minors = {Version(v).release[:2] for v in versions}
    for major, top in ((1, 13), (2, Version(versions[-1]).minor)):
        assert {(major, m) for m in range(top + 1)} <= minors, f"a {major}.x minor is missing"
    for patch in ("1.0.1", "1.3.1", "1.5.1", "1.10.2", "2.1.2", "2.5.1", "2.12.1", "2.14.1"):
        assert patch in releases


def test_main_row_exists(releases: dict[str, Release]) -> None:
    assert releases["main"].tag == "main"


def test_every_record_is_tagged_v_version(releases: dict[str, Release]) -> None:
    for version, rel in releases.items():
        if version != "main":
            assert rel.tag == f"v{version}"


def test_python_range_is_ordered(releases: dict[str, Release]) -> None:
    for rel in releases.values():
        assert Version(rel.python_min) <= Version(rel.python_max), rel.torch


def test_cuda_lists_are_sorted_versions(releases: dict[str, Release]) -> None:
    for rel in releases.values():
        assert rel.cuda, rel.torch
        assert rel.cuda == sorted(rel.cuda, key=Version), rel.torch
        if rel.cuda_min:
            assert Version(rel.cuda_min) <= Version(rel.cuda[0]), rel.torch


# -- known facts ----------------------------------------------------------------------------------
def test_torch_1_1_0_matches_seed_000(releases: dict[str, Release]) -> None:
    rel = releases["1.1.0"]
    assert rel.torchvision == "0.3.0"
    assert rel.torchaudio is None
    assert Version(rel.python_min) <= Version("3.5") <= Version(rel.python_max)
    assert "9.0" in rel.cuda
    assert rel.env_style == "legacy-no"
    assert rel.frontend == "setup.py"
    assert rel.cxx_standard == 11


def test_torch_1_13_1(releases: dict[str, Release]) -> None:
    rel = releases["1.13.1"]
    assert (rel.torchvision, rel.torchaudio, rel.torchtext) == ("0.14.1", "0.13.1", "0.14.1")
    assert (rel.python_min, rel.python_max) == ("3.7", "3.10")
    assert rel.cuda == ["11.6", "11.7"]
    assert rel.split_cuda is True
    assert rel.cxx_standard == 14
    assert rel.cmake_min == "3.13"
    assert rel.cxx11_abi_official is False


def test_torch_2_5_1(releases: dict[str, Release]) -> None:
    rel = releases["2.5.1"]
    assert (rel.torchvision, rel.torchaudio, rel.torchtext) == ("0.20.1", "2.5.1", None)
    assert rel.cuda == ["11.8", "12.1", "12.4"]
    assert rel.cxx_standard == 17
    assert rel.split_cuda is False


def test_companions_that_stopped(releases: dict[str, Release]) -> None:
    assert releases["2.3.0"].torchtext == "0.18.0"
    assert all(
        releases[v].torchtext is None for v in numbered(releases) if Version(v) >= Version("2.4")
    )
    assert releases["2.11.0"].torchaudio == "2.11.0"
    assert all(
        releases[v].torchaudio is None for v in numbered(releases) if Version(v) >= Version("2.12")
    )


def test_eras(releases: dict[str, Release]) -> None:
    for version in numbered(releases):
        rel, ver = releases[version], Version(version)
        assert rel.env_style == ("legacy-no" if ver < Version("1.2") else "forward-prefixes")
        assert rel.split_cuda == (Version("1.8") <= ver < Version("2.0")), version
        assert rel.frontend == ("pep517" if ver >= Version("2.14") else "setup.py"), version


def test_gcc_min_is_at_least_the_language_floor(releases: dict[str, Release]) -> None:
    floor = {11: "4.8", 14: "5", 17: "7", 20: "10"}  # gcc.gnu.org/projects/cxx-status.html
    for rel in releases.values():
        assert rel.gcc_min, rel.torch
        assert Version(rel.gcc_min) >= Version(floor[rel.cxx_standard]), rel.torch


def test_1_8_2_lts_names_its_companions_and_no_torchtext(releases: dict[str, Release]) -> None:
    lts = releases["1.8.2"]
    assert (lts.torchvision, lts.torchaudio, lts.torchtext) == ("0.9.2", "0.8.2", None)
    assert lts.cuda == ["10.2", "11.1"] and lts.python_max == "3.8"
    assert "v1.8.2 with LTS support" in lts.sources["torchvision"]


def test_a_release_without_a_companion_says_why(releases: dict[str, Release]) -> None:
    for rel in releases.values():
        for name in ("torchvision", "torchaudio", "torchtext"):
            if getattr(rel, name) is None:
                assert name in rel.sources, f"{rel.torch}: no {name} and no word why"


def test_2_2_needs_gcc_9_3_from_its_cmake_check(releases: dict[str, Release]) -> None:
    # pytorch/pytorch#112858 (CMakeLists.txt 'GCC-9.3 or newer is required') landed before the
    # release/2.2 branch cut; the C++17.h header's 'GCC 5' is the extension check.
    for version in ("2.2.0", "2.2.1", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0"):
        assert releases[version].gcc_min == "9.3"
        assert "CMakeLists.txt" in releases[version].sources["gcc_min"]
    assert "pull/112858" in releases["2.2.0"].sources["gcc_min"]
    assert releases["2.1.2"].gcc_min == "7"


# -- the loader rejects unsourced facts -----------------------------------------------------------
def _record(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "torch": "1.13.1",
        "tag": "v1.13.1",
        "python_min": "3.7",
        "python_max": "3.10",
        "cxx_standard": 14,
        "frontend": "setup.py",
        "env_style": "forward-prefixes",
        "sources": {"*": "https://pypi.org/project/torch/1.13.1/"},
    }
    return {**base, **overrides}


def test_a_sourced_record_validates() -> None:
    assert schema.Release.model_validate(_record()).torch == "1.13.1"


def test_a_fact_without_a_source_is_rejected() -> None:
    sources = dict.fromkeys(("python_min", "python_max"), "https://pypi.org/project/torch/1.13.1/")
    sources |= {"cxx_standard": "pytorch/pytorch@v1.13.1:CMakeLists.txt"}
    sources |= dict.fromkeys(("frontend", "env_style"), "pytorch/pytorch@v1.13.1:setup.py")
    sources |= {"split_cuda": "pytorch/pytorch@v1.13.1:CMakeLists.txt"}
    assert schema.Release.model_validate(_record(sources=sources))
    with pytest.raises(ValidationError, match="torchvision"):
        schema.Release.model_validate(_record(sources=sources, torchvision="0.14.1"))


def test_a_malformed_source_is_rejected() -> None:
    with pytest.raises(ValidationError, match="malformed"):
        schema.Release.model_validate(_record(sources={"*": "somewhere on the web"}))


# -- scripts/refresh_releases.py: pure parts ------------------------------------------------------
def test_python_range_from_wheel_names() -> None:
    names = [
        "torch-2.10.0-3-cp310-cp310-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-cp314-cp314-manylinux_2_28_x86_64.whl",
        "torch-2.10.0-cp314-cp314t-manylinux_2_28_x86_64.whl",
        "torch-1.0.0-cp27-cp27mu-manylinux1_x86_64.whl",
    ]
    assert refresh.python_range(names[:3]) == ("3.10", "3.14")
    assert refresh.python_range(names[3:]) == ("2.7", "2.7")
    assert refresh.python_range(["torchvision-0.2.1-py2.py3-none-any.whl"]) is None


def test_torch_pin_of_companion_metadata() -> None:
    assert refresh.torch_pin("Requires-Dist: torch (==1.13.1)\n") == "1.13.1"
    assert refresh.torch_pin("Requires-Dist: torch==2.6.0\n") == "2.6.0"
    assert refresh.torch_pin("Requires-Dist: torch (>=2.14.0)\n") is None
    assert refresh.torch_pin("Requires-Dist: torch (==1.10.0+cpu)\n") is None


def test_wheel_facts_from_file_texts() -> None:
    facts = refresh.wheel_facts(
        {
            "version": "cuda: Optional[str] = '12.4'\ngit_version = '" + "a" * 40 + "'\n",
            "torchconfig": 'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")\n'
            "    CXX_STANDARD 17\n",
            "cuda_cmake": 'message(FATAL_ERROR "PyTorch requires cuDNN 8.1 and above.")\n'
            '  message(FATAL_ERROR "PyTorch requires CUDA 11.0 or above.")\n',
            "cpp17": '#error "... too old version of GCC. We need GCC 9 or later."\n',
            "wheel": "Wheel-Version: 1.0\nGenerator: scikit-build-core 1.0.3\n",
            "cpp_extension": "BUILD_SPLIT_CUDA = os.getenv('BUILD_SPLIT_CUDA')\n",
        }
    )
    assert facts["default_cuda"] == "12.4"
    assert facts["cxx_standard"] == 17
    assert facts["cxx11_abi"] is False
    assert (facts["cuda_min"], facts["cudnn_min"], facts["gcc_min"]) == ("11.0", "8.1", "9")
    assert facts["split_cuda"] is True
    assert refresh.frontend_of(facts["generator"]) == "pep517"
    assert refresh.frontend_of("setuptools (81.0.0)") == "setup.py"


def test_diff_reports_missing_and_different_records() -> None:
    derived = {
        "1.0.0": {"date": "2018-12-07", "python_min": "2.7", "python_max": "3.7"},
        "1.0.1": {"date": "2019-02-05", "python_min": "2.7", "python_max": "3.7"},
    }
    records = [
        {"torch": "1.0.0", "date": "2018-12-08", "python_min": "2.7", "python_max": "3.7"},
        {"torch": "0.4.1", "date": "2018-07-26"},
        {"torch": "main"},
    ]
    lines = refresh.diff(derived, records)
    assert "+ torch 1.0.1: on PyPI, missing from releases.toml" in lines
    assert "~ torch 1.0.0: date: kb='2018-12-08' derived='2018-12-07'" in lines
    assert "- torch 0.4.1: in releases.toml, not a release on PyPI" in lines
    assert not any("main" in line for line in lines)


def test_the_lts_release_off_pypi_is_not_reported_missing() -> None:
    records = [{"torch": "1.8.2", "date": None}, {"torch": "0.4.1"}]
    lines = refresh.diff({}, records)
    assert lines == ["- torch 0.4.1: in releases.toml, not a release on PyPI"]
