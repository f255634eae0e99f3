"""The generic diagnosis of a compiler's error in the code itself (gcc, clang, nvcc).

One class is told apart by its wording: a standard-library name the source uses without
including its header (``'runtime_error' is not a member of 'std'``, clang's ``no member named
'shared_ptr' in namespace 'std'``, nvcc's ``namespace "std" has no member "min"``). The source
relied on another standard header including that one, which a newer (or another) standard
library no longer does: GCC 11 and 13 dropped such transitive includes
(https://gcc.gnu.org/gcc-11/porting_to.html, https://gcc.gnu.org/gcc-13/porting_to.html), and
libc++ on macOS never had some of them (round 17's pytorch#2785 and round 21's pytorch#3295,
train data: old PyTorch sources fixed upstream by adding the include).
"""

from __future__ import annotations

from typing import Any

from torchsmith.doctor.components import by_header
from torchsmith.doctor.generic_parts import install_text, points_text, with_component
from torchsmith.doctor.linear import compile_linear
from torchsmith.doctor.models import TypedError

_STD_MISSING = compile_linear(
    r"""[‘'"](?:std::)?(?P<gcc>\w+)[’'"]:? is not a member of [‘'"]std[’'"]|"""
    r"""[‘'"](?P<type>\w+)[’'"] in namespace [‘'"]std[’'"] does not name a (?:template )?type|"""
    r"""no (?:member|template|type) named [‘'"](?P<clang>\w+)[’'"] in namespace [‘'"]std[’'"]|"""
    r"""namespace "std" has no member (?:class )?"(?P<nvcc>\w+)\""""
)
# the header of the standard names old sources most often use without it
# (https://en.cppreference.com/w/cpp/header)
_HEADER = {
    **dict.fromkeys(("min", "max", "sort", "find", "transform", "min_element", "max_element",
                     "reverse", "fill", "copy", "count", "unique", "clamp"), "algorithm"),
    **dict.fromkeys(("runtime_error", "logic_error", "invalid_argument", "out_of_range",
                     "overflow_error", "domain_error", "length_error"), "stdexcept"),
    **dict.fromkeys(("shared_ptr", "unique_ptr", "make_shared", "make_unique", "weak_ptr"),
                    "memory"),
    **dict.fromkeys(("numeric_limits",), "limits"),
    **dict.fromkeys(("function", "hash", "reference_wrapper", "bind"), "functional"),
    **dict.fromkeys(("accumulate", "iota", "inner_product"), "numeric"),
    **dict.fromkeys(("ostringstream", "stringstream", "istringstream"), "sstream"),
    **dict.fromkeys(("exchange", "pair", "move", "forward", "swap"), "utility"),
    **dict.fromkeys(("mutex", "lock_guard", "unique_lock"), "mutex"),
    **dict.fromkeys(("thread",), "thread"),
    **dict.fromkeys(("optional", "nullopt"), "optional"),
    **dict.fromkeys(("array",), "array"),
    **dict.fromkeys(("unordered_map",), "unordered_map"),
    **dict.fromkeys(("vector",), "vector"),
    **dict.fromkeys(("string", "to_string", "stoi", "stof"), "string"),
}  # fmt: skip


def compiler_error(e: TypedError) -> dict[str, Any]:
    found = _STD_MISSING.search(e.message)
    if found is not None:
        return _std_name_missing(e, next(v for v in found.groupdict().values() if v))
    versions = f" (versions named: {', '.join(e.versions)})" if e.versions else ""
    return {
        "category": "compiler",
        "tags": ("compiler", *((e.tool,) if e.tool else ())),
        "stage": "compile",
        "title": f"compile error in {e.file or 'a source file'}",
        "cause": f"{e.tool or 'The compiler'} rejects this source{versions}: most often a "
        "compiler or CUDA newer (or older) than the release supports, or a bundled "
        "third-party library broken by a newer gcc/glibc.",
        "fix": "build with the compiler version the release was tested with (torchsmith plan "
        "picks one), or apply the upstream fix for that file.",
        "source": "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html",
    }


def _std_name_missing(e: TypedError, name: str) -> dict[str, Any]:
    header = _HEADER.get(name)
    include = f"#include <{header}>" if header else "the standard header that declares it"
    return {
        "category": "compiler",
        "tags": ("compiler", "headers", "third-party", *((e.tool,) if e.tool else ())),
        "stage": "compile",
        "title": f"std::{name} used without its header in {e.file or 'a source file'}",
        "cause": f"The source uses std::{name} without including {include}: it relied on "
        "another standard header including it, which this compiler's standard library does "
        "not do (GCC 11 and 13 dropped such transitive includes; libc++ and MSVC differ).",
        "fix": f"add {include} to that file (or pass -include {header or '<header>'} in "
        "CXXFLAGS/CUDAFLAGS for a bundled library), take the upstream fix (a newer checkout or "
        "release of the project adds the include), or build with the compiler version the "
        "release was tested with.",
        "source": "https://gcc.gnu.org/gcc-11/porting_to.html",
    }


def missing_header(e: TypedError) -> dict[str, Any]:
    header = e.header or "?"
    c = by_header(header)
    base = {"category": "missing-header", "stage": "compile", "title": f"missing header {header}"}
    if _own_tree(header, e.file or ""):
        return base | _OWN_TREE
    if c is not None:
        return base | with_component(c, ("headers",)) | {
            "cause": f"{header} belongs to {c.title}, which is not installed or not on the "
            "include path.",
            "fix": install_text(c) + points_text(c) + ".",
            "source": c.source,
        }
    std = "." not in header.rsplit("/", 1)[-1]
    cause = (
        f"<{header}> is a C++ standard library header this compiler's library lacks (a "
        "compiler older than the C++ standard the code needs, or no libstdc++ -dev package)."
        if std
        else f"No installed package puts {header} on the include path."
    )
    fix = (
        "use a newer g++/clang++ (and its libstdc++-N-dev) that provides it"
        if std
        else f"find the package that ships {header} (Debian: apt-file search {header}, or "
        "packages.debian.org's Contents search) and install it, or add its directory with "
        "-I / CPATH / CMAKE_PREFIX_PATH"
    )
    return base | {
        "tags": ("compiler" if std else "headers",),
        "cause": cause,
        "fix": fix + ".",
        "source": "https://gcc.gnu.org/onlinedocs/cpp/Search-Path.html",
    }


# PyTorch's own headers, built or generated by its build (TH*/ of torch < 1.x, ATen's generated
# headers, the autograd bindings), included from its own sources: the build of the checkout is
# missing or partial (round 27's pytorch#1265, train data: `setup.py develop` without `build`)
_OWN_DIRS = frozenset({"TH", "THC", "THPP", "THNN", "THCUNN", "THS", "THCS", "THD", "ATen", "c10"})
_OWN_SOURCES = ("torch/csrc/", "aten/src/", "caffe2/", "c10/", "torch/lib/")
_OWN_TREE = {
    "tags": ("headers", "source-tree", "stale-build", "torch"),
    "cause": "The header is part of PyTorch's own source tree and is built or generated by its "
    "build (TH*/, ATen's generated headers), and a file of the same tree includes it: this "
    "checkout's build did not produce it (a `setup.py develop` without the build step, an "
    "interrupted or stale build, or submodules not checked out).",
    "fix": "build the checkout completely: git submodule update --init --recursive, then "
    "python setup.py clean and python setup.py build develop (or pip install -e . "
    "--no-build-isolation), as CONTRIBUTING.md says; reusing a build/ directory from another "
    "commit: remove it first.",
    "source": "https://github.com/pytorch/pytorch/issues/1265",
}


def _own_tree(header: str, file: str) -> bool:
    own = header.split("/", 1)[0] in _OWN_DIRS and "/" in header
    path = file.replace("\\", "/")
    return own and any(part in path for part in _OWN_SOURCES)
