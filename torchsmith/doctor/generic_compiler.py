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

from torchsmith.doctor.linear import compile_linear
from torchsmith.doctor.models import TypedError

_STD_MISSING = compile_linear(
    r"""[‘'"](?:std::)?(?P<gcc>\w+)[’'"]:? is not a member of [‘'"]std[’'"]|"""
    r"""[‘'"](?P<type>\w+)[’'"] in namespace [‘'"]std[’'"] does not name a (?:template )?type|"""
    r"""no (?:member|template|type) named [‘'"](?P<clang>\w+)[’'"] in namespace [‘'"]std[’'"]|"""
    r"""namespace "std" has no member (?:class )?"(?P<nvcc>\w+)\""""
)
# the header of the standard names old sources most often use without it (cppreference)
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
