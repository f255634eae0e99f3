"""scripts/refresh_arch_lists.py: a CI script's case block evaluated for one CUDA (x86_64)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_arch_lists", ROOT / "scripts" / "refresh_arch_lists.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_arch_lists", module)
    spec.loader.exec_module(module)
    return module


ral = _module()

# The shapes these scripts take (written for this test, not copied): a base list, arms that
# extend it, an aarch64 branch, a libtorch-only rewrite, glob and alternative labels.
SCRIPT = """\
# in some cases the case word appears in comments
TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0"
case ${CUDA_VERSION} in
    12.4 | 12.6)
        if [[ "$GPU_ARCH_TYPE" = "cuda-aarch64" ]]; then
            TORCH_CUDA_ARCH_LIST="9.0"
        else
            TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};9.0+PTX"
        fi
        ;;
    11.[67])
        TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};3.7"
        ;;
    12.9) TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};10.0;12.0+PTX"
        if [[ "$PACKAGE_TYPE" == "libtorch" ]]; then
            TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST//7.0;/}"
        fi
        ;;
    13.0)
        TORCH_CUDA_ARCH_LIST="7.5;$([[ "$ARCH" == "aarch64" ]] && echo "11.0;" || echo "")12.0"
        ;;
    *) exit 1 ;;
esac
"""


def test_each_arm_is_evaluated_for_x86_64_wheels() -> None:
    assert ral.evaluate(SCRIPT, "12.6") == "5.0;6.0;7.0;9.0+PTX"
    assert ral.evaluate(SCRIPT, "12.4") == "5.0;6.0;7.0;9.0+PTX"
    assert ral.evaluate(SCRIPT, "11.7") == "5.0;6.0;7.0;3.7"
    assert ral.evaluate(SCRIPT, "12.9") == "5.0;6.0;7.0;10.0;12.0+PTX"
    assert ral.evaluate(SCRIPT, "13.0") == "7.5;12.0"
    assert ral.evaluate(SCRIPT, "11.8") is None
    assert ral.evaluate("if [[ $CUDA_VERSION == 9.0 ]]; then\nfi\n", "9.0") is None


def test_only_script_sources_are_re_derived() -> None:
    src = "pytorch/builder@release/2.1:manywheel/build_cuda.sh ; same on release/2.2"
    assert ral.script_source(src) == ("pytorch/builder", "release/2.1", "manywheel/build_cuda.sh")
    assert ral.script_source("https://pypi.org/project/torch/2.6.0/ ...") is None
    records = [
        {"torch": ">=9.0", "cuda": "12.6", "arch_list": "5.0;6.0;7.0;9.0+PTX",
         "sources": {"*": "o/r@abc:.ci/manywheel/build_cuda.sh"}},
        {"torch": ">=9.0", "cuda": "11.6", "arch_list": "5.0",
         "sources": {"*": "o/r@abc:.ci/manywheel/build_cuda.sh"}},
        {"torch": ">=9.0", "cuda": "12.4", "arch_list": "x",
         "sources": {"*": "https://pypi.org/project/torch/"}},
    ]  # fmt: skip
    lines, derived = ral.compare(records, lambda repo, ref, path: SCRIPT)
    assert derived == 2
    assert lines[0] == "~ torch >=9.0 cuda 11.6: kb='5.0' script='5.0;6.0;7.0;3.7'"
    assert "not re-derivable" in lines[1]
    unfetched, _ = ral.compare(records[:1], lambda repo, ref, path: None)
    assert unfetched[0].startswith("? torch >=9.0 cuda 12.6: o/r@abc")


def test_every_script_record_of_the_kb_names_a_fetchable_source() -> None:
    records = ral.tomllib.loads((ROOT / "torchsmith/kb/data/arch_lists.toml").read_text())[
        "arch_list"
    ]
    named = [ral.script_source(r["sources"]["*"]) for r in records]
    assert sum(1 for n in named if n) >= 20
