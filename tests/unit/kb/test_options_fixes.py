"""The options catalogue and the fix registry: they load, say what the seeds need, and the fix
machinery (applicability, idempotent patching) behaves."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.kb import KnowledgeBase, load
from torchsmith.kb.models import Fix, FixApplies, PatchEdit
from torchsmith.plan_model import PlannedFix
from torchsmith.planner.fixes import applicable_fixes
from torchsmith.spec import Features
from torchsmith.steps.edits import apply_edits

SEED_004 = {
    "cpp-extension-cuda118-compiler-bounds",
    "cpp-extension-sm89-sm90",
    "split-cuda-library",
}
# Fixes of older releases against today's tools, which a 1.13.1 build gets as well.
GENERAL_113 = {
    "cpp-extension-pkg-resources-packaging",
    "cmake4-policy-version-minimum",
    "numpy-below-2",
    "cpu-dispatch-relative-include",
    "aten-config-relative-include",
    "codegen-set-order",
}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load()


def _ids(fixes: list[Fix]) -> set[str]:
    return {f.id for f in fixes}


# -- options -----------------------------------------------------------------------------------
def test_every_feature_but_mkl_has_a_switch(kb: KnowledgeBase) -> None:
    mapped = {o.feature for o in kb.options if o.feature}
    assert mapped <= set(Features.model_fields)
    # MKL is chosen with BLAS=MKL; there is no USE_MKL switch in 1.13/2.6.
    assert set(Features.model_fields) - mapped == {"mkl"}
    assert kb.option("BLAS").feature is None


@pytest.mark.parametrize(
    ("name", "legacy"),
    [
        ("USE_CUDA", "NO_CUDA"),
        ("USE_CUDNN", "NO_CUDNN"),
        ("USE_FBGEMM", "NO_FBGEMM"),
        ("USE_MIOPEN", "NO_MIOPEN"),
        ("USE_MKLDNN", "NO_MKLDNN"),
        ("USE_NNPACK", "NO_NNPACK"),
        ("USE_QNNPACK", "NO_QNNPACK"),
        ("USE_DISTRIBUTED", "NO_DISTRIBUTED"),
        ("USE_SYSTEM_NCCL", "NO_SYSTEM_NCCL"),
        ("BUILD_TEST", "NO_TEST"),
    ],
)
def test_torch_11_legacy_spellings(kb: KnowledgeBase, name: str, legacy: str) -> None:
    opt = kb.option(name)
    assert opt.legacy == legacy
    assert opt.legacy_inverted
    assert "legacy" in opt.sources or "*" in opt.sources


def test_seed_000_switches_have_no_legacy_on_spelling(kb: KnowledgeBase) -> None:
    # Seed 000 writes USE_NCCL=1 and USE_SYSTEM_NCCL=1 for 1.1.0: NO_* can only switch off.
    assert kb.option("USE_NCCL").legacy is None
    for name in ("NCCL_ROOT_DIR", "NCCL_INCLUDE_DIR", "NCCL_LIB_DIR", "TORCH_CUDA_ARCH_LIST"):
        assert kb.option(name).description


def test_qnnpack_switch_per_era(kb: KnowledgeBase) -> None:
    first = kb.options_for_feature("qnnpack")
    assert [o.name for o in first] == ["USE_QNNPACK", "USE_PYTORCH_QNNPACK"]
    assert first[0].until == "1.13.1"
    assert first[1].until is None


def test_split_cuda_range_and_static_cuda_spelling(kb: KnowledgeBase) -> None:
    split = kb.option("BUILD_SPLIT_CUDA")
    assert (split.since, split.until, split.feature) == ("1.8.0", "1.13.1", "split_cuda")
    # The environment does not reach CAFFE2_STATIC_LINK_CUDA; USE_CUDA_STATIC_LINK does.
    assert "USE_CUDA_STATIC_LINK" in kb.option("CAFFE2_STATIC_LINK_CUDA").description


# -- applicability -----------------------------------------------------------------------------
def test_torch_1131_cuda_118_gets_the_seed_004_fixes(kb: KnowledgeBase) -> None:
    found = applicable_fixes(
        kb, torch="1.13.1", cuda="11.8", gcc="11", python="3.10", source_kind="git"
    )
    assert _ids(found) == SEED_004 | GENERAL_113
    split = next(f for f in found if f.id == "split-cuda-library")
    assert split.env == {"BUILD_SPLIT_CUDA": "1"}


def test_torch_251_cuda_124_gets_none_of_them(kb: KnowledgeBase) -> None:
    found = applicable_fixes(
        kb, torch="2.5.1", cuda="12.4", gcc="13", python="3.11", source_kind="git"
    )
    assert not _ids(found) & (SEED_004 | {"numpy-below-2", "cpp-extension-pkg-resources-packaging"})
    assert _ids(found) == {"cmake4-policy-version-minimum"}


def test_cuda_118_fixes_need_cuda_118(kb: KnowledgeBase) -> None:
    for cuda in (None, "11.7"):
        found = _ids(applicable_fixes(kb, torch="1.13.1", cuda=cuda, gcc="11", python="3.10"))
        assert "cpp-extension-cuda118-compiler-bounds" not in found
        assert "cpp-extension-pkg-resources-packaging" in found


def test_gcc12_refusal_only_for_git_sources(kb: KnowledgeBase) -> None:
    def ids(gcc: str | None, source: str) -> set[str]:
        return _ids(
            applicable_fixes(
                kb, torch="1.13.1", cuda=None, gcc=gcc, python="3.10", source_kind=source
            )
        )

    assert "gcc12-gloo-before-torch2" in ids("12", "git")
    assert "gcc12-gloo-before-torch2" not in ids("11", "git")
    assert "gcc12-gloo-before-torch2" not in ids("12", "debian")
    assert "gcc12-gloo-before-torch2" not in ids(None, "git")  # not GCC: unknown, not refused


def test_debian_sources_get_no_pip_commands(kb: KnowledgeBase) -> None:
    found = applicable_fixes(
        kb, torch="1.13.1", cuda=None, gcc="12", python="3.11", source_kind="debian"
    )
    assert "numpy-below-2" not in _ids(found)
    assert {"cmake4-policy-version-minimum", "cpp-extension-pkg-resources-packaging"} <= _ids(found)


def test_a_debian_tree_with_packages_from_pypi_gets_numpy_below_2(kb: KnowledgeBase) -> None:
    """Debian's tree built for another Python than the suite's: pip fills its venv."""
    found = applicable_fixes(
        kb, torch="1.13.1", cuda=None, gcc="12", python="3.10", source_kind="debian",
        python_packages="pypi",
    )  # fmt: skip
    assert "numpy-below-2" in _ids(found) and "debian-113-system-protobuf" in _ids(found)
    for kind in ("git", "path", "tarball"):
        found = applicable_fixes(kb, torch="1.13.1", cuda=None, gcc="11", python="3.10",
                                 source_kind=kind)  # fmt: skip
        assert "numpy-below-2" in _ids(found), kind


def test_every_fix_carries_what_its_action_needs(kb: KnowledgeBase) -> None:
    payload = {
        "patch": lambda f: bool(f.edits),
        "env": lambda f: bool(f.env),
        "command": lambda f: bool(f.command),
        "refuse": lambda f: bool(f.advice),
    }
    assert [f.id for f in kb.fixes if not payload[f.action](f)] == []
    assert len({f.id for f in kb.fixes}) == len(kb.fixes)


def test_unparsable_torch_matches_only_unrestricted_fixes() -> None:
    anywhere = Fix(
        id="anywhere", title="t", applies=FixApplies(), action="env", env={"A": "1"},
        explanation="e", sources={"*": "https://example.org/x"},
    )  # fmt: skip
    old = anywhere.model_copy(update={"id": "old", "applies": FixApplies(torch="<2.0")})
    kb = KnowledgeBase((), (), (), (), (), (anywhere, old))
    assert _ids(applicable_fixes(kb, torch="main", cuda=None, gcc=None, python=None)) == {
        "anywhere"
    }
    assert _ids(applicable_fixes(kb, torch="1.13.1", cuda=None, gcc=None, python=None)) == {
        "anywhere",
        "old",
    }


def test_cpu_flag_and_prereleases() -> None:
    cpu_only = Fix(
        id="cpu-only", title="t", applies=FixApplies(cpu=True, torch=">=2.6"), action="env",
        env={"A": "1"}, explanation="e", sources={"*": "https://example.org/x"},
    )  # fmt: skip
    kb = KnowledgeBase((), (), (), (), (), (cpu_only,))
    assert applicable_fixes(kb, torch="2.7.0a0", cuda=None, gcc=None, python=None)
    assert not applicable_fixes(kb, torch="2.7.0", cuda="12.8", gcc=None, python=None)


# -- apply_edits -------------------------------------------------------------------------------
SETUP = "cmdclass = {\n    'install': install,\n    'sdist': sdist,\n}\n"
ARCHES = "supported = ['8.0', '8.6']\nvalid = supported\n"


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "setup.py").write_text(SETUP)
    (tmp_path / "pkg" / "arches.py").write_text(ARCHES)
    (tmp_path / "setup.py").chmod(0o640)
    return tmp_path


def _fix(*edits: PatchEdit) -> Fix:
    return Fix(
        id="demo", title="demo", applies=FixApplies(), action="patch", edits=list(edits),
        explanation="e", sources={"*": "https://example.org/x"},
    )  # fmt: skip


INSTALL = PatchEdit(
    path="setup.py", find="    'install': install,\n", replace="    'install': stock.install,\n"
)
ARCH = PatchEdit(path="pkg/arches.py", find="'8.6']", replace="'8.6', '8.9']")
# replace contains find: the already-applied check must not count it as a second occurrence.
GROW = PatchEdit(
    path="pkg/arches.py", find="valid = supported\n", replace="valid = supported\n# +\n"
)


def test_apply_edits_applies_then_is_a_no_op(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    fix = _fix(INSTALL, ARCH, GROW)
    assert apply_edits(root, fix, dry_run=True) == [
        "setup.py: would apply",
        "pkg/arches.py: would apply",
        "pkg/arches.py: would apply",
    ]
    assert (root / "setup.py").read_text() == SETUP  # dry run wrote nothing
    assert apply_edits(root, fix) == [
        "setup.py: applied",
        "pkg/arches.py: applied",
        "pkg/arches.py: applied",
    ]
    once = {p: (root / p).read_text() for p in ("setup.py", "pkg/arches.py")}
    assert "'install': stock.install," in once["setup.py"]
    assert once["pkg/arches.py"] == "supported = ['8.0', '8.6', '8.9']\nvalid = supported\n# +\n"
    assert stat.S_IMODE((root / "setup.py").stat().st_mode) == 0o640  # mode kept
    assert set(apply_edits(root, fix)) == {
        "setup.py: already applied",
        "pkg/arches.py: already applied",
    }
    assert {p: (root / p).read_text() for p in once} == once
    assert sorted(p.name for p in root.rglob("*")) == ["arches.py", "pkg", "setup.py"]


def test_apply_edits_accepts_planned_edit_dicts(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert apply_edits(root, [ARCH.model_dump()]) == ["pkg/arches.py: applied"]


def test_apply_edits_accepts_a_planned_fix_and_names_it(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    planned = PlannedFix(
        id="planned-demo", title="t", action="patch", edits=[ARCH.model_dump()],
        explanation="e", source="https://example.org/x",
    )  # fmt: skip
    assert apply_edits(root, planned) == ["pkg/arches.py: applied"]
    (root / "pkg" / "arches.py").write_text("something else\n")
    with pytest.raises(SourceError, match=r"fix planned-demo: pkg/arches\.py"):
        apply_edits(root, planned)


def test_mismatch_raises_and_changes_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    missing = PatchEdit(path="pkg/arches.py", find="'7.5']", replace="'7.5', '8.0']")
    with pytest.raises(SourceError, match=r"fix demo: pkg/arches.py: .* occurs 0 times"):
        apply_edits(root, _fix(INSTALL, missing))
    assert (root / "setup.py").read_text() == SETUP  # the good edit was not written either


def test_ambiguous_find_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    twice = PatchEdit(path="pkg/arches.py", find="supported", replace="archs")
    with pytest.raises(SourceError, match="occurs 2 times"):
        apply_edits(root, _fix(twice))


def test_paths_outside_the_tree_or_missing_are_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "src")
    outside = PatchEdit(path="../evil.py", find="a", replace="b")
    with pytest.raises(SourceError, match="leaves the source tree"):
        apply_edits(root, _fix(outside))
    absent = PatchEdit(path="nope.py", find="a", replace="b")
    with pytest.raises(SourceError, match=r"nope\.py does not exist"):
        apply_edits(root, _fix(absent))


def test_cuda118_cpp_extension_bounds_are_the_kb_cuda_118_record() -> None:
    kb = load()
    cuda = kb.cuda("11.8")
    fix = next(f for f in kb.fixes if f.id == "cpp-extension-cuda118-compiler-bounds")
    rows = [e.replace.strip().splitlines()[1].strip() for e in fix.edits]
    assert rows == [
        f"'11.8': ((6, 0, 0), ({cuda.gcc_max + 1}, 0, 0)),",
        f"'11.8': ((6, 0, 0), ({cuda.clang_max + 1}, 0, 0)),",  # type: ignore[operator]
    ]
    assert "(15, 0, 0)" in rows[1]  # nvcc 11.8's host_config.h accepts clang 14
    assert "{kb:" not in fix.explanation and f"Clang <= {cuda.clang_max}" in fix.explanation


def test_a_quoted_fact_the_kb_lacks_is_a_load_error() -> None:
    from torchsmith.errors import KnowledgeBaseError
    from torchsmith.kb.facts import render

    cudas = load().cuda_releases
    assert render("x {kb:cuda 11.8 gcc_max} y", cudas, "t") == "x 11 y"
    with pytest.raises(KnowledgeBaseError, match="does not hold"):
        render("{kb:cuda 9.0 clang_max+1}", cudas, "fix t")


def test_no_fix_turns_setup_py_install_into_an_egg_install(kb: KnowledgeBase) -> None:
    """Mapping cmdclass 'install' to setuptools' own class makes `setup.py install` an .egg
    install (pytorch/pytorch#16236); nothing ties it to the CMake permission error it claimed."""
    edits = [e for f in kb.fixes for e in f.edits if e.path == "setup.py"]
    assert not [e for e in edits if "setuptools.command.install.install" in e.replace]


def test_kb_facts_measured_here_cite_a_committed_file(kb: KnowledgeBase) -> None:
    import re

    root = Path(__file__).parents[3]
    records = [*kb.fixes, *kb.releases, *kb.cuda_releases, *kb.options, *kb.debian_packages]
    cited = {m for r in records for s in r.sources.values() for m in re.findall(r"repo:(\S+)", s)}
    assert "docs/measured/debian-source-builds.md" in cited
    assert all((root / path).is_file() for path in cited), cited
    texts = [s for r in records for s in r.sources.values()]
    assert not [s for s in texts if re.search(r"(?<![\w-])notes(/|@)", s)]
