"""The generic diagnosis of a typed error's class, for a failure no specific rule explains.

A missing header, an undefined symbol, a library not found, a module not found: each names the
component that provides it (``components.toml``: Debian package, PyPI wheel, conda-forge name, the
variable that points the build at it); a killed compiler is memory; a crash at import is a
native library of another build; a CMake error names the package or version it wants.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchsmith.doctor.components import (
    MessageFact,
    by_message,
    by_name,
    by_symbol,
    mentioned,
)
from torchsmith.doctor.generic_compiler import compiler_error, missing_header
from torchsmith.doctor.generic_messages import read_message
from torchsmith.doctor.generic_parts import (
    command_failed,
    import_module,
    import_version,
    install_text,
    library_finding,
    pip_failure,
    points_text,
    python_exception,
    with_component,
)
from torchsmith.doctor.linear import compile_linear
from torchsmith.doctor.models import Evidence, Finding, TypedError

GENERIC_SCORE = 1.0  # below every specific rule that matched an error anywhere in the log
_CMAKE_PACKAGE = compile_linear(
    r'Could NOT find (\w+)|provided by "(\w+)"|[Ff]ind(\w+)\.cmake|Could not find (\w+)'
)


_FLOOR = compile_linear(
    r"(?i)(?:requires?|required|needs?|at least|or (?:higher|newer|later|above)|too old|"
    r"minimum|>=|newer than|older than|not supported|unsupported|incompatible|mismatch)"
    r"[^\n]{0,80}?\d+\.\d+|\d+\.\d+[^\n]{0,40}?(?:or (?:higher|newer|later)|is required)"
)


def _enrich(fields: dict[str, Any], error: TypedError) -> dict[str, Any]:
    """Tags of the components the message names; a version floor or ceiling when it quotes
    one (a category of its own unless the class already says more)."""
    tags = tuple(dict.fromkeys((*fields.get("tags", ()), *mentioned(error.message))))
    fields = fields | {"tags": tags}
    if _FLOOR.search(error.message) is not None:
        fields["tags"] = (*tags, "version-floor")
        if fields["category"] in ("python", "unknown-error", "build-step", "compiler", "cmake"):
            fields["category"] = "version-floor"
    return fields


# classes whose message itself says what went wrong (an exception, a crash, an unknown line):
# a sourced fact about that message (components.toml [[message]]) beats the class's default
_FACT_KINDS = frozenset({"python", "other", "crash", "ninja", "pip"})
# classes whose message's wording class says more than the class (generic_messages)
_READ_KINDS = frozenset({"python", "other", "pip", "import-module", "import-symbol"})


def _informed(error: TypedError, block: Sequence[str] = ()) -> dict[str, Any] | None:
    """What a sourced message fact or the message's wording class says, if either knows it."""
    fact = by_message(error.message) if error.kind in _FACT_KINDS else None
    if fact is None and error.kind == "other":
        # an unrecognised first line (a report's heading, a wrapper's prefix): a known message
        # further down its block says more (round 17's ComfyUI report: its Exception Message)
        fact = next((f for f in map(by_message, block) if f is not None), None)
    if fact is not None:
        return _from_fact(fact)
    return read_message(error, block) if error.kind in _READ_KINDS else None


def knows_message(error: TypedError, block: Sequence[str] = ()) -> bool:
    """Whether the generic diagnosis says more than the error's class: a message fact or the
    wording class knows it."""
    return _informed(error, block) is not None


def _class_fields(error: TypedError, block: Sequence[str] = ()) -> dict[str, Any]:
    informed = _informed(error, block)
    if informed is not None:
        return informed
    fields: dict[str, Any] = _BY_KIND.get(error.kind, _other)(error)
    return fields


def _from_fact(fact: MessageFact) -> dict[str, Any]:
    return {
        "category": fact.category,
        "tags": fact.tags,
        "stage": "runtime",
        "title": fact.title,
        "cause": fact.cause,
        "fix": fact.fix,
        "source": fact.source,
    }


def diagnose_generic(error: TypedError, block: Sequence[str] = ()) -> Finding:
    """The generic finding for ``error``'s class, with the facts its fields lead to (and, for an
    unrecognised line, the facts of the other lines of its ``block``)."""
    fields = _enrich(_class_fields(error, block), error)
    return Finding.model_validate(
        {
            "rule_id": f"generic-{error.kind}",
            "severity": "error",
            "fix_env": {},
            "affected": "any build",
            "evidence": (Evidence(line=error.line, text=error.message),),
            "count": 1,
            "in_first_error": True,
            "score": GENERIC_SCORE,
            "generic": True,
            **fields,
        }
    )


# a demangled signature with the old ABI's std::string (the new ABI's reads std::__cxx11::)
_OLD_ABI = compile_linear(r"\(.*\bstd::(?:string\b|basic_string<char, std::char_traits<char>)")


def _symbol_finding(e: TypedError, stage: str) -> dict[str, Any]:
    symbol = e.symbol or "?"
    abi = "__cxx11" in symbol or "B5cxx11" in symbol
    c = by_symbol(symbol)
    who = f"{c.title}" if c else "a library missing from the link line or of another version"
    cause = f"Nothing linked defines {symbol}: it should come from {who}."
    if abi:
        cause += (
            " It is a std::__cxx11 (new C++ ABI) symbol: the two sides were built with different "
            "_GLIBCXX_USE_CXX11_ABI settings."
        )
    elif stage == "link" and _OLD_ABI.search(symbol) is not None:
        abi = True  # round 23's libtorch-yolov3#23 (train): OpenCV, pre-cxx11 libtorch
        cause += (
            " Its std::string is the old (pre-C++11) ABI's: this program was compiled with "
            "_GLIBCXX_USE_CXX11_ABI=0 (the pre-cxx11 libtorch download sets it through "
            "find_package(Torch)), while the library was built with the new ABI (it defines the "
            "std::__cxx11 version), or the library is missing from the link line."
        )
    if stage == "import":
        cause = f"At import a loaded library lacks {symbol} (from {who}): it was built against "
        cause += "another version of it than the one found at run time."
    fix = (
        install_text(c) + points_text(c) + "; rebuild against the version that is loaded"
        if c
        else "add the library that defines it to the link line (-l...), in the right order"
        if stage != "import"
        else "reinstall the package whose library failed to load with the build made for the "
        "libraries installed now (its wheel for this torch/CUDA/Python), or rebuild it from "
        "source against them; a torch extension or companion (torchvision, torchaudio, "
        "torchtext, torch-scatter) must be the release paired with the installed torch"
    )
    if abi and stage == "link" and not c:
        fix = (
            "build both sides with one _GLIBCXX_USE_CXX11_ABI: with libtorch use its cxx11-ABI "
            "download (or libtorch built from source), or rebuild the library with the old ABI; "
            "if the library is simply not linked, add it to the link line (-l...)"
        )
    if stage == "import" and c is not None and c.name == "torch":
        cause, fix = _TORCH_SYMBOL_AT_IMPORT
    return with_component(c, ("undefined-symbol", *(("abi", "cxx11-abi") if abi else ()))) | {
        "category": "abi" if abi or stage == "import" else "linker",
        "stage": stage,
        "title": f"undefined symbol {symbol.split(' (')[0]}",
        "cause": cause,
        "fix": fix + ".",
        "source": c.source if c else "https://sourceware.org/binutils/docs/ld/Options.html",
    }


# an extension's .so lacks one of torch's own symbols at import: what the rules
# extension-built-against-other-torch and extension-imported-before-torch say, from their threads
_TORCH_SYMBOL_AT_IMPORT = (
    "An extension needs a torch C++ symbol (c10::, at::, torch::) the loaded torch does not "
    "export: it was compiled against another torch release than the one installed (torch was "
    "upgraded or downgraded after it was built, or a wheel built for another torch was "
    "installed), or it was imported before torch.",
    "import torch before the extension; then rebuild the extension against the installed "
    "torch (remove its build/ directory; pip install --no-build-isolation --no-cache-dir "
    "--force-reinstall <package>), or install the extension wheel built for this exact torch "
    "and CUDA version",
)


def _linker_undefined(e: TypedError) -> dict[str, Any]:
    return _symbol_finding(e, "link")


def _import_symbol(e: TypedError) -> dict[str, Any]:
    return _symbol_finding(e, "import")


def _linker_missing_lib(e: TypedError) -> dict[str, Any]:
    return library_finding(e, "link")


def _import_missing_lib(e: TypedError) -> dict[str, Any]:
    return library_finding(e, "import")


def _tool_missing(e: TypedError) -> dict[str, Any]:
    tool = e.tool or "a build tool"
    msvc = tool.startswith("Visual C++")
    name = "msvc" if msvc else tool.lower()
    fix = (
        "install the Visual Studio Build Tools (the C++ workload) and build from a "
        "'x64 Native Tools' prompt so cl.exe is on PATH"
        if msvc
        else f"install {tool} (pip install {name} works for cmake and ninja) or put it on PATH"
    )
    return {
        "category": "toolchain",
        "tags": (name, "missing-tool", *(("compiler",) if msvc else ())),
        "stage": "configure",
        "title": f"{tool} not found",
        "cause": f"The build runs {tool}, which is not installed or not on PATH.",
        "fix": fix + ".",
        "source": "https://pytorch.org/docs/stable/cpp_extension.html",
    }


def _killed(e: TypedError) -> dict[str, Any]:
    return {
        "category": "resources",
        "tags": ("oom", "memory", "max-jobs"),
        "stage": "compile",
        "title": f"{e.tool or 'the compiler'} was killed (out of memory)",
        "cause": "The kernel's OOM killer (or a memory limit) ended a compiler process: too many "
        "parallel jobs for the RAM.",
        "fix": "lower the parallel jobs (torchsmith build --max-jobs N; MAX_JOBS=N for pip or "
        "setup.py) or add RAM/swap; torchsmith plans MAX_JOBS from free memory.",
        "fix_env": {"MAX_JOBS": "2"},
        "source": "https://github.com/pytorch/pytorch/blob/main/setup.py",
    }


def _crash(e: TypedError) -> dict[str, Any]:
    return {
        "category": "crash",
        "tags": ("crash", "import", "runtime"),
        "stage": "import",
        "title": "native crash (" + e.message[:60] + ")",
        "cause": "Native code crashed: a library built for another CPU, ABI or version of a "
        "dependency (two copies of libstdc++/OpenMP/protobuf loaded, an extension built "
        "against another torch) is the usual reason.",
        "fix": "run it again with python -X faulthandler (or under gdb) to see the library "
        "that crashed, and check `torchsmith doctor --env`.",
        "source": "https://docs.python.org/3/library/faulthandler.html",
    }


def _cmake(e: TypedError) -> dict[str, Any]:
    match = _CMAKE_PACKAGE.search(e.message)
    package = next((g for g in match.groups() if g), None) if match else None
    c = by_name(package) if package else None
    versions = ", ".join(e.versions)
    floor = "version" in e.message.lower() and bool(e.versions)
    cause = f"CMake stopped: {e.message[:300]}"
    if package:
        fix = (
            f"install {package} and point CMake at it ({package}_DIR, CMAKE_PREFIX_PATH)"
            if c is None
            else install_text(c) + points_text(c)
        )
    elif floor:
        fix = f"use versions that meet the requirement (versions in the message: {versions})"
    else:
        fix = "read the CMake message above; the named file and line hold the check that failed"
    return with_component(c, ("cmake", *(("version-floor",) if floor else ()))) | {
        "category": "version-floor" if floor else "cmake",
        "stage": "configure",
        "title": f"CMake error{f': {package} not found' if package else ''}",
        "cause": cause,
        "fix": fix + ".",
        "source": "https://cmake.org/cmake/help/latest/command/find_package.html",
    }


def _simple(
    category: str, title: str, cause: str, fix: str, source: str, *, tags: tuple[str, ...] = ()
) -> Any:
    def build(e: TypedError) -> dict[str, Any]:
        return {
            "category": category,
            "tags": (category, *tags),
            "stage": "install" if category == "pip" else "compile",
            "title": title.format(e=e),
            "cause": cause.format(e=e),
            "fix": fix,
            "source": source,
        }

    return build


_linker = _simple(
    "linker",
    "the link failed",
    "ld failed: {e.message}",
    "the linker's first message (its own line, or the lines above collect2's) names the "
    "symbol, library or object that failed.",
    "https://sourceware.org/binutils/docs/ld/Options.html",
)
_ninja_plain = _simple(
    "build-step",
    "build step {e.target} failed",
    "A build edge failed without a recognised message: {e.message}",
    "read the failed command's output (shown as the first error block).",
    "https://ninja-build.org/manual.html",
)


def _ninja(e: TypedError) -> dict[str, Any]:
    """A failed edge; in bundled third-party code with no error shown, the usual answer (round
    15's pytorch#22346, train data) is that project's -Werror meeting a newer compiler."""
    fields: dict[str, Any] = _ninja_plain(e)
    if "third_party/" in (e.target or "").replace("\\", "/"):
        fields["fix"] = (
            "read the failed command's output (shown as the first error block); a bundled "
            "third_party project that builds with -Werror fails on a newer compiler's warnings: "
            "build with the compiler version the release was tested with, or add -Wno-error for "
            "it (CFLAGS/CXXFLAGS), or take the upstream fix (a newer torch)."
        )
    return fields


_other = _simple(
    "unknown-error",
    "an error no rule knows",
    "{e.message}",
    "the first error block above is the place to look; most such errors come from a version "
    "the project was not written for: install the versions the project pins (torch, its "
    "companions, CUDA, the compiler) or search the message in the project's issue tracker.",
    "https://github.com/pytorch/pytorch/issues",
    tags=("version-pin",),  # the cause its fix names first
)
_BY_KIND = {
    "missing-header": missing_header,
    "linker-undefined": _linker_undefined,
    "import-symbol": _import_symbol,
    "linker-missing-lib": _linker_missing_lib,
    "import-missing-lib": _import_missing_lib,
    "import-version": import_version,
    "import-module": import_module,
    "tool-missing": _tool_missing,
    "killed": _killed,
    "crash": _crash,
    "cmake": _cmake,
    "compiler": compiler_error,
    "pip": pip_failure,
    "python": python_exception,
    "linker": _linker,
    "ninja": _ninja,
    "command-failed": command_failed,
}
