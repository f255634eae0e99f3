"""Parse the text of ``torch.__config__.show()`` into fields.

The text is a list of ``  - item`` lines (``GCC 13.3``, ``C++ Version: 201703``, ``CUDA Runtime
13.0``, ``CuDNN 91.0.2``...) ending in ``Build settings: KEY=VALUE, KEY=VALUE, ...``; written by
``at::show_config()``
(pytorch/pytorch@44f1f672a1c8b5b8d40b67ba09bbb277f117e724:aten/src/ATen/Version.cpp)."""

from __future__ import annotations

import re

from torchsmith.inspect.model import BuildConfig

_SETTING = re.compile(r"(?:^|,\s*)([A-Z][A-Z0-9_]*)=")
_ITEMS: dict[str, re.Pattern[str]] = {
    "compiler": re.compile(r"^((?:GCC|clang|Clang|MSVC|Intel)\b.*)$"),
    "cxx_standard": re.compile(r"^C\+\+ Version: (\S+)"),
    "cuda_runtime": re.compile(r"^CUDA Runtime (\S+)"),
    "cudnn": re.compile(r"^CuDNN (\S+)"),
    "mkl": re.compile(r"^(Intel\(R\) (?:oneAPI )?Math Kernel Library.*)$"),
    "mkldnn": re.compile(r"^Intel\(R\) MKL-DNN (v\S+)"),
    "openmp": re.compile(r"^OpenMP (\S+)"),
    "cpu_capability": re.compile(r"^CPU capability usage: (\S+)"),
    "nvcc_arch_flags": re.compile(r"^NVCC architecture flags: (\S+)"),
}


def parse_settings(text: str) -> dict[str, str]:
    """``KEY=VALUE, KEY=VALUE`` where a value may itself hold commas and spaces."""
    marks = list(_SETTING.finditer(text))
    settings: dict[str, str] = {}
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt else len(text)
        settings[mark.group(1)] = text[mark.end() : end].strip().rstrip(",").strip()
    return settings


def _items(text: str) -> tuple[dict[str, str], str]:
    found: dict[str, str] = {}
    settings = ""
    for line in text.splitlines():
        item = line.strip().removeprefix("- ").strip()
        if item.startswith("Build settings:"):
            settings = item.removeprefix("Build settings:")
            continue
        for key, pattern in _ITEMS.items():
            match = pattern.match(item)
            if match and key not in found:
                found[key] = match.group(1)
    return found, settings


def _use_flags(settings: dict[str, str]) -> dict[str, bool]:
    truthy = {"ON", "1", "TRUE", "YES"}
    return {
        key: value.upper() in truthy
        for key, value in sorted(settings.items())
        if key.startswith("USE_") and value
    }


def parse_show(text: str) -> BuildConfig:
    """Every field we can read from ``torch.__config__.show()``; unknown lines are kept in raw."""
    found, settings_text = _items(text)
    settings = parse_settings(settings_text)
    return BuildConfig(
        source="show",
        cuda_runtime=found.get("cuda_runtime") or settings.get("CUDA_VERSION"),
        cudnn=settings.get("CUDNN_VERSION") or found.get("cudnn"),
        nccl=None,
        mkl=found.get("mkl"),
        mkldnn=found.get("mkldnn"),
        openmp=found.get("openmp"),
        lapack="LAPACK is enabled" in text,
        compiler=found.get("compiler"),
        cxx_standard=found.get("cxx_standard"),
        cxx_flags=settings.get("CXX_FLAGS"),
        cpu_capability=found.get("cpu_capability"),
        nvcc_arch_flags=found.get("nvcc_arch_flags"),
        use=_use_flags(settings),
        settings=settings,
        raw=text,
    )
