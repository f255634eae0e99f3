"""Official arch lists of the non-default CUDA variants of torch 2.6+ (kb/data/arch_lists.toml),
and what the planner does for the pairs still without one."""

from __future__ import annotations

from torchsmith import kb

# Every (release, CUDA) the KB says shipped now has its list; the planner's fallback for any
# other CUDA (nearest list, clipped) is tested in test_planner_ranges.py.
WITHOUT_LIST: set[tuple[str, str]] = set()


def test_every_shipped_pair_has_its_official_list() -> None:
    base = kb.load()
    missing = {
        (r.torch, c)
        for r in base.releases
        if r.torch != "main"
        for c in r.cuda
        if base.official_arch_list(r.torch, c) is None
    }
    assert missing == WITHOUT_LIST


def test_variant_lists_read_from_the_ci_scripts() -> None:
    base = kb.load()

    def listed(torch: str, cuda: str) -> str:
        entry = base.official_arch_list(torch, cuda)
        assert entry is not None
        return entry.arch_list

    assert listed("2.6.0", "11.8") == "5.0;6.0;7.0;7.5;8.0;8.6;3.7;9.0"
    assert listed("2.6.0", "12.6") == "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX"
    assert listed("2.7.1", "12.8") == "7.5;8.0;8.6;9.0;10.0;12.0+PTX"  # no sm_70 before 2.8
    assert listed("2.8.0", "12.8").startswith("7.0;")  # sm_70 back (pytorch#157517)
    assert listed("2.10.0", "13.0") == "7.5;8.0;8.6;9.0;10.0;12.0+PTX"
    assert listed("2.11.0", "12.8") == "7.5;8.0;8.6;9.0;10.0;12.0"  # sm_70 gone again
    assert listed("2.13.0", "13.2") == "7.5;8.0;8.6;9.0;10.0;12.0+PTX"  # experimental build
    assert listed("2.14.1", "12.6").startswith("5.0;6.0;7.0;")  # the last legacy build
    for torch, cuda in [
        ("2.6.0", "11.8"),
        ("2.7.0", "12.8"),
        ("2.9.0", "12.6"),
        ("2.11.0", "12.6"),
    ]:
        entry = base.official_arch_list(torch, cuda)
        assert entry is not None
        source = entry.sources["*"]
        assert ".ci/manywheel/build_cuda.sh" in source or "github.com/pytorch/pytorch/" in source
