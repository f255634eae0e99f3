"""The generic reading of an installer's own lines by their wording class (issue 25, before the
round 20 freeze; rounds 1-19 are train data), for :mod:`torchsmith.doctor.generic_messages`: a
corrupt or truncated download, no candidate for this platform (poetry, pip, uv), no release of a
package that is not torch's own (a package with wheel pages per torch and CUDA pair)."""

from __future__ import annotations

from typing import Any

from torchsmith.doctor.linear import compile_linear

_CORRUPT = compile_linear(
    r"(?i)BadZipFile|not a zip file|invalid wheel|no item named '[^']*(?:WHEEL|RECORD|METADATA)|"
    r"DO NOT MATCH THE HASHES|hash mismatch|hashes? (?:do|does) not match|CRC-32|"
    r"unexpected end of (?:data|archive|file)|EOFError: Compressed file ended"
)


def corrupt_wheel(message: str) -> dict[str, Any] | None:
    if _CORRUPT.search(message) is None:
        return None
    return {
        "category": "corrupt-file",
        "tags": ("corrupt-file", "wheel", "pip", "download", "cache"),
        "stage": "install",
        "title": "a corrupt or truncated package file",
        "cause": "The wheel or archive the installer read is incomplete or damaged (a cut-off "
        "download, a stale cached copy, or a broken upload on the index).",
        "fix": "clear the cache and download it again (pip cache purge / pip install "
        "--no-cache-dir, uv cache clean, poetry cache clear --all, conda clean --all); if the "
        "fresh download fails the same way the file on the index is broken: use another release "
        "or wait for a re-upload.",
        "source": "https://pip.pypa.io/en/stable/topics/caching/",
    }


_NO_CANDIDATES = compile_linear(
    r"Unable to find installation candidates for ([\w.-]+)|"
    r"wheel\(s\) were skipped as your project's environment does not support|"
    r"has no wheels? (?:with a matching|for the current) (?:platform|Python)|"
    r"doesn't have a source distribution or wheel for the current platform"
)


def no_candidates(message: str) -> dict[str, Any] | None:
    match = _NO_CANDIDATES.search(message)
    if match is None:
        return None
    name = match.group(1) or "the package"
    torch = name.lower() in ("torch", "torchvision", "torchaudio", "the package")
    return {
        "category": "pip",
        "tags": ("wheel-tags-not-supported", "platform", "pip", "version-pin"),
        "stage": "install",
        "title": f"no wheel of {name} for this platform or Python",
        "cause": f"The index has {name} releases, but none whose wheel tags (OS, CPU, Python "
        "version, ABI) fit this environment.",
        "fix": (
            "torch publishes no macOS x86_64 (Intel Mac) wheels after 2.2.2 and each release "
            "only for the Pythons it supports: on an Intel Mac pin torch<=2.2.2 (with its paired "
            "companions) or use Linux/Apple silicon; otherwise use a supported Python"
            if torch
            else f"pick a {name} release with a wheel for this OS, CPU and Python (its PyPI "
            "page's files), or a supported Python"
        )
        + "; poetry: widen the python constraint or add platform markers.",
        "source": "https://github.com/pytorch/pytorch/issues/114602",
    }


_NO_DISTRIBUTION = compile_linear(
    r"No matching distribution found for ([A-Za-z][\w.-]*)(?:==([\w.+]+))?"
)
_TORCH_NAMES = frozenset(
    {"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "pytorch"}
)


def no_distribution(message: str) -> dict[str, Any] | None:
    """pip found no release of a package that is not torch's own (torch's are rules of their
    own); a package with wheel pages per torch and CUDA pair has none for that pair."""
    match = _NO_DISTRIBUTION.search(message)
    if match is None or match.group(1).lower() in _TORCH_NAMES:
        return None
    name, version = match.group(1), match.group(2)
    wanted = f"{name}=={version}" if version else name
    return {
        "category": "pip",
        "tags": ("pip", "wheel", "version-pin", name.lower()),
        "stage": "install",
        "title": f"no wheel of {wanted} for this environment",
        "cause": f"No index or find-links page pip used has {wanted} for this Python, platform "
        "and (for packages built per torch) this torch/CUDA pair.",
        "fix": f"`pip index versions {name}` lists what the index has; packages built against "
        "torch (PyG's torch-scatter/torch-sparse, kaolin, mmcv, dgl, detectron2) publish wheels "
        "on a page per torch+CUDA pair (…/torch-2.0.0_cu118.html): when that page has no "
        f"{wanted}, install the torch/CUDA pair the package lists for it, pick the {name} "
        "release built for your pair, or build it from source; otherwise relax the pin or use a "
        "Python the release supports.",
        "source": "https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages",
    }
