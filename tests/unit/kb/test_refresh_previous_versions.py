"""scripts/refresh_previous_versions.py: the previous-versions page's pip lines → companions and
CUDA variants, compared with releases.toml."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from torchsmith import kb

ROOT = Path(__file__).resolve().parents[3]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_previous_versions", ROOT / "scripts" / "refresh_previous_versions.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_previous_versions", module)
    spec.loader.exec_module(module)
    return module


rpv = _module()

# The page's three spellings of a CUDA variant (a comment above the line, a +cuXYZ local
# version, an .../cuXYZ index URL), ROCm and CPU lines, as the v1.8.2 / v1.7.1 sections use them.
PAGE = """\
### v1.8.2 with LTS support
# CUDA 10.2
pip3 install torch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 --extra-index-url https://download.pytorch.org/whl/lts/1.8/cu102
# CUDA 11.1
pip3 install torch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 --extra-index-url https://download.pytorch.org/whl/lts/1.8/cu111
# CPU Only
pip3 install torch==1.8.2 torchvision==0.9.2 torchaudio==0.8.2 --extra-index-url https://download.pytorch.org/whl/lts/1.8/cpu
### v1.7.1
# CUDA 11.0
pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 torchaudio==0.7.2 -f https://download.pytorch.org/whl/torch_stable.html
# CUDA 10.2
pip install torch==1.7.1 torchvision==0.8.2 torchaudio==0.7.2
# ROCM 4.0.1 (Linux only)
pip install torch==1.7.1+rocm4.0.1 torchvision==0.8.2+rocm4.0.1 -f https://download.pytorch.org/whl/torch_stable.html
# CPU only
pip install torch==1.7.1+cpu torchvision==0.8.2+cpu torchaudio==0.7.2 -f https://download.pytorch.org/whl/torch_stable.html
"""


def test_pip_lines_give_companions_and_cuda_variants() -> None:
    page = rpv.parse_page(PAGE.splitlines())
    assert page["1.8.2"] == {
        "torchvision": "0.9.2",
        "torchaudio": "0.8.2",
        "cuda": ["10.2", "11.1"],
    }
    assert page["1.7.1"]["cuda"] == ["10.2", "11.0"]


def test_the_kb_agrees_with_the_lts_section_and_differences_are_named() -> None:
    page = rpv.parse_page(PAGE.splitlines())
    records = [r.model_dump() for r in kb.load().releases]
    assert [ln for ln in rpv.diff(page, records) if "1.8.2" in ln] == []
    wrong = [{"torch": "1.8.2", "torchvision": "0.9.1", "torchaudio": "0.8.2", "cuda": ["10.2"]}]
    assert rpv.diff(page, wrong) == [
        "~ torch 1.8.2: torchvision: kb='0.9.1' page='0.9.2'",
        "~ torch 1.8.2: cuda: the page has ['11.1'], not in kb",
    ]
