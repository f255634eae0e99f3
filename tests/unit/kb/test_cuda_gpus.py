"""The CUDA, official-arch-list and GPU parts of the knowledge base, checked against recorded
toolkit files (tests/fixtures/cuda/) and against each other."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from torchsmith.kb import KnowledgeBase, load, normalize_gpu_name
from torchsmith.kb.models import CudaRelease

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "cuda"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_cuda", ROOT / "scripts" / "refresh_cuda.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_cuda", module)
    spec.loader.exec_module(module)
    return module


refresh = _script()


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load()


def _cc(text: str) -> tuple[int, int]:
    major, minor = text.split("+", maxsplit=1)[0].rstrip("af").split(".")
    return int(major), int(minor)


# -- loading and GPU lookups ----------------------------------------------------------------


def test_loads_with_enough_records(kb: KnowledgeBase) -> None:
    assert len(kb.gpus) >= 100
    assert {c.version for c in kb.cuda_releases} >= {
        "9.0",
        "9.2",
        "10.2",
        "11.0",
        "11.8",
        "12.0",
        "12.6",
        "12.8",
        "12.9",
        "13.0",
    }
    assert len(kb.arch_lists) >= 30


def test_gpu_names_and_aliases_are_unique_once_normalized(kb: KnowledgeBase) -> None:
    owner: dict[str, str] = {}
    for gpu in kb.gpus:
        for key in {normalize_gpu_name(n) for n in (gpu.name, *gpu.aliases)}:
            assert key not in owner, f"{key!r} names both {owner[key]} and {gpu.name}"
            owner[key] = gpu.name


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("RTX 3090", "8.6"),
        ("RTX 4090", "8.9"),
        ("NVIDIA GeForce RTX 4090", "8.9"),
        ("H100", "9.0"),
        ("A100", "8.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("Jetson AGX Orin", "8.7"),
        ("Tesla T4", "7.5"),
        ("Tesla K80", "3.7"),
        ("NVIDIA GeForce RTX 3080 Laptop GPU", "8.6"),
        ("RTX 5090", "12.0"),
        ("B200", "10.0"),
    ],
)
def test_gpu_lookup(kb: KnowledgeBase, name: str, cc: str) -> None:
    assert kb.gpu(name).compute_capability == cc


def test_every_gpu_cc_is_buildable_by_some_cuda(kb: KnowledgeBase) -> None:
    buildable = {a for c in kb.cuda_releases for a in c.archs}
    missing = {
        g.name: g.compute_capability for g in kb.gpus if g.compute_capability not in buildable
    }
    assert not missing


# -- CUDA records ---------------------------------------------------------------------------


def test_cuda_11_8(kb: KnowledgeBase) -> None:
    cuda = kb.cuda("11.8")
    assert cuda.gcc_max == 11
    assert {"3.5", "8.9", "9.0"} <= set(cuda.archs)


def test_cuda_12_0_drops_kepler(kb: KnowledgeBase) -> None:
    assert "3.5" in kb.cuda("11.8").archs
    assert not {"3.5", "3.7"} & set(kb.cuda("12.0").archs)


def test_cuda_13_0_drops_maxwell_to_volta_and_has_blackwell(kb: KnowledgeBase) -> None:
    archs = set(kb.cuda("13.0").archs)
    assert not {"5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2"} & archs
    assert {"7.5", "10.0", "11.0", "12.0"} <= archs
    assert "10.1" in kb.cuda("12.9").archs and "10.1" not in archs  # Thor renamed to 11.0


def test_cuda_versions_are_monotonic_in_gcc(kb: KnowledgeBase) -> None:
    ordered = sorted(kb.cuda_releases, key=lambda c: _cc(c.version))
    gccs = [c.gcc_max for c in ordered]
    assert gccs == sorted(gccs)


def test_deprecated_archs_are_still_buildable(kb: KnowledgeBase) -> None:
    for cuda in kb.cuda_releases:
        assert set(cuda.deprecated_archs) <= set(cuda.archs), cuda.version


# -- the KB agrees with the recorded toolkit files ------------------------------------------


def _fixture_version(path: Path) -> str:
    return ".".join(path.stem.split("-")[0].split(".")[:2])


@pytest.mark.parametrize(
    "header", sorted((FIXTURES / "host_config").glob("*.h")), ids=lambda p: p.stem
)
def test_host_config_fixture_matches_kb(kb: KnowledgeBase, header: Path) -> None:
    text = header.read_text()
    cuda = kb.cuda(_fixture_version(header))
    assert refresh.parse_gcc_max(text) == cuda.gcc_max
    assert refresh.parse_clang_max(text) == cuda.clang_max


@pytest.mark.parametrize(
    "listing",
    sorted([*(FIXTURES / "list-gpu-arch").glob("*.txt"), *(FIXTURES / "ptxas-help").glob("*.txt")]),
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_arch_fixture_matches_kb(kb: KnowledgeBase, listing: Path) -> None:
    assert (
        list(refresh.parse_archs(listing.read_text())) == kb.cuda(_fixture_version(listing)).archs
    )


def test_clang_parser_skips_the_hos_check() -> None:
    text = (FIXTURES / "host_config" / "13.4.92.h").read_text()
    assert "__clang_major__ >= 22" in text  # the HOS check comes first
    assert refresh.parse_clang_max(text) == 22  # generic check: >= 23


def test_compare_reports_differences() -> None:
    facts = refresh.ToolkitFacts("12.4", 13, 18, ("8.9", "9.0"))
    lines = refresh.compare(facts, {"gcc_max": 13, "clang_max": 17, "archs": ["9.0"]})
    assert lines[0].startswith("= gcc_max")
    assert lines[1].startswith("! clang_max")
    assert any("only in toolkit: 8.9" in line for line in lines)


def test_compare_marks_missing_facts_unknown() -> None:
    facts = refresh.ToolkitFacts("11.2", None, None, ())
    lines = refresh.compare(facts, {"gcc_max": 10, "clang_max": 11, "archs": ["8.6"]})
    assert all(line.startswith("?") for line in lines)


def test_cc_of() -> None:
    assert [refresh.cc_of(n) for n in (35, 86, 100, 121)] == ["3.5", "8.6", "10.0", "12.1"]


# -- official arch lists --------------------------------------------------------------------


def _ccs(arch_list: str) -> list[str]:
    return [a.split("+")[0] for a in arch_list.split(";") if a]


def _torch_arch_fixture(name: str) -> list[str]:
    text = (FIXTURES / "torch-arch" / f"{name}.txt").read_text().split()
    return sorted((refresh.cc_of(int(t.split("_")[1])) for t in text), key=_cc)


@pytest.mark.parametrize(
    "fixture", sorted(p.stem for p in (FIXTURES / "torch-arch").glob("*.txt")), ids=str
)
def test_official_arch_list_matches_the_published_wheel(kb: KnowledgeBase, fixture: str) -> None:
    torch, cu = fixture.split("+cu")
    entry = kb.official_arch_list(torch, f"{cu[:-1]}.{cu[-1]}")
    assert entry is not None
    assert sorted(_ccs(entry.arch_list), key=_cc) == _torch_arch_fixture(fixture)


def test_published_wheels_cover_every_era(kb: KnowledgeBase) -> None:
    names = {p.stem for p in (FIXTURES / "torch-arch").glob("*.txt")}
    assert {"1.13.1+cu117", "2.11.0+cu130", "2.14.1+cu130", "2.15.0+cu132"} <= names
    assert len(names) >= 20


def test_official_arch_list_examples(kb: KnowledgeBase) -> None:
    assert kb.official_arch_list("1.13.1", "11.7").arch_list == "3.7;5.0;6.0;7.0;7.5;8.0;8.6"  # type: ignore[union-attr]
    assert kb.official_arch_list("2.11.0", "13.0").arch_list == "7.5;8.0;8.6;9.0;10.0;12.0"  # type: ignore[union-attr]
    assert kb.official_arch_list("1.1.0", "9.0").arch_list == "3.5;5.0+PTX;6.0;7.0"  # type: ignore[union-attr]
    assert kb.official_arch_list("1.13.1", "12.1") is None


def test_every_official_arch_list_is_buildable_by_its_cuda(kb: KnowledgeBase) -> None:
    unbuildable = {}
    for entry in kb.arch_lists:
        cuda: CudaRelease = kb.cuda(entry.cuda)
        extra = set(_ccs(entry.arch_list)) - set(cuda.archs)
        if extra:
            unbuildable[(entry.torch, entry.cuda)] = sorted(extra)
    assert not unbuildable


def test_arch_list_ranges_do_not_overlap(kb: KnowledgeBase) -> None:
    probes = [
        f"{major}.{minor}.{patch}" for major in (1, 2) for minor in range(16) for patch in (0, 1, 2)
    ]
    for cuda in {e.cuda for e in kb.arch_lists}:
        for version in probes:
            hits = [e for e in kb.arch_lists if e.cuda == cuda and version in _spec(e.torch)]
            assert len(hits) <= 1, (version, cuda)


def _spec(text: str) -> object:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


def test_kb_gpu_accepts_a_compute_capability(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from torchsmith.cli import main

    assert main(["kb", "gpu", "8.6", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "GeForce RTX 3090" in data["gpus"] or "RTX 3090" in data["gpus"]
    assert "11.8" in data["cuda"] and "11.0" not in data["cuda"]
    assert main(["kb", "gpu", "sm_90"]) == 0
    assert main(["kb", "gpu", "9.9"]) == 6
    err = capsys.readouterr().err
    assert "compute capability '9.9' is not one the knowledge base knows" in err
    assert "--gpu 8.6" not in err
