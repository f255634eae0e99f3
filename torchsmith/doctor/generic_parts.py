"""The generic diagnosis's shared wording (how to install a component, the variable that
points a build at it) and its import-time classes: a library the loader cannot find (a
Windows DLL included), a glibc/libstdc++ symbol version, a Python module not found."""

from __future__ import annotations

import re
from typing import Any

from torchsmith.doctor.components import (
    PIP_NAMES,
    Component,
    by_library,
    by_module,
    component_names,
    mentioned,
)
from torchsmith.doctor.models import TypedError


def install_text(c: Component) -> str:
    return f"install {c.title}: Debian {c.debian}; PyPI {c.pypi}; conda-forge {c.conda}"


def points_text(c: Component) -> str:
    return f"; point the build at it with {', '.join(c.variables)}" if c.variables else ""


def with_component(component: Component | None, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    tags = (*((component.name,) if component else ()), *extra)
    return {"tags": tags, "fix_packages": (component.debian,) if component else ()}


def library_finding(e: TypedError, stage: str) -> dict[str, Any]:
    library = e.library or "?"
    c = by_library(library)
    where = (
        "the linker's search path (-L, LIBRARY_PATH)"
        if stage == "link"
        else ("the loader's search path (RPATH, LD_LIBRARY_PATH, ldconfig)")
    )
    if library.lower().endswith(".dll"):
        return dll_missing(library, c)
    return with_component(c, ("missing-library",)) | {
        "category": "libraries",
        "stage": stage,
        "title": f"library {library} not found",
        "cause": f"{library} ({c.title if c else 'a shared library'}) is not on {where}.",
        "fix": (
            install_text(c) + points_text(c) if c else f"install the package that ships {library}"
        )
        + f", or add its directory to {where}.",
        "source": c.source if c else "https://man7.org/linux/man-pages/man8/ld.so.8.html",
    }


def dll_missing(library: str, c: Component | None) -> dict[str, Any]:
    """Windows: a DLL of the wheel (c10.dll, fbgemm.dll) is there, but one it needs is not."""
    return with_component(c, ("missing-library", "windows", "msvc", "openmp")) | {
        "category": "libraries",
        "stage": "import",
        "title": f"{library} or a DLL it needs cannot be loaded",
        "cause": f"Windows could not load {library} or one of its dependencies: most often the "
        "Microsoft Visual C++ Redistributable (vcruntime140/msvcp140) or, for the torch 2.4 "
        "wheels' fbgemm.dll, libomp140.x86_64.dll is missing.",
        "fix": "install the latest Microsoft Visual C++ Redistributable (x64); for fbgemm.dll "
        "also LLVM's OpenMP runtime (libomp140.x86_64.dll), or a torch release that ships it.",
        "source": "https://github.com/pytorch/pytorch/issues/131662",
    }


# the first GCC release whose libstdc++.so.6 exports each GLIBCXX_3.4.N symbol version
# (the table "Symbol versioning" of https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html)
GLIBCXX_FIRST_GCC = {
    19: "4.8.3", 20: "4.9.0", 21: "5.1.0", 22: "6.1.0", 23: "7.1.0", 24: "7.2.0",
    25: "8.1.0", 26: "9.1.0", 27: "9.2.0", 28: "9.3.0", 29: "11.1.0", 30: "12.1.0",
    31: "13.1.0", 32: "13.2.0", 33: "14.1.0",
}  # fmt: skip


def libstdcxx_gcc(symbol: str) -> str | None:
    """The first GCC whose libstdc++ has a GLIBCXX_3.4.N symbol version, if the table names it."""
    head, _, minor = symbol.partition("GLIBCXX_3.4.")
    return GLIBCXX_FIRST_GCC.get(int(minor)) if minor.isdigit() and not head else None


def import_version(e: TypedError) -> dict[str, Any]:
    symbol = e.symbol or "?"
    glibc = symbol.startswith("GLIBC_")
    lib = "glibc" if glibc else "libstdc++"
    gcc = None if glibc else libstdcxx_gcc(symbol)
    needs = f" (libstdc++ of GCC >= {gcc})" if gcc else ""
    conda = f"'libstdcxx-ng>={gcc.split('.')[0]}'" if gcc else "libstdcxx-ng"
    return {
        "category": "abi",
        "tags": (lib, "abi"),
        "stage": "import",
        "title": f"{lib} older than the binary needs ({symbol})",
        "cause": f"A library was built with a newer {'glibc' if glibc else 'gcc'} and needs "
        f"{symbol}{needs}; the {lib} loaded at run time is older.",
        "fix": (
            "run on a system with that glibc or newer, or build on an older one (manylinux)"
            if glibc
            else f"put a libstdc++.so.6 that has {symbol}{needs} first (conda install -c "
            f"conda-forge {conda} in the environment, or LD_LIBRARY_PATH / "
            "LD_PRELOAD to it; `strings libstdc++.so.6 | grep GLIBCXX` lists what one has), or "
            "build with the system's gcc"
        )
        + ".",
        "source": "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html",
    }


# Triton publishes wheels for Linux only (round 17's StableTuner#110, train data: on Windows the
# message is printed by packages that run without it)
_TRITON_FIX = (
    "triton has official wheels for Linux only: on Windows (and macOS) packages such as xformers, "
    "bitsandbytes and diffusers print this and run without it, so ignore it unless the code "
    "needs torch.compile or Triton kernels (then use the community triton-windows wheel that "
    "matches torch, or Linux/WSL2); on Linux pip install the triton version the installed torch "
    "pins (pip show torch lists it)."
)


def import_module(e: TypedError) -> dict[str, Any]:
    module = e.module or "?"
    c = by_module(module)
    top = module.split(".")[0]
    project = PIP_NAMES.get(module, PIP_NAMES.get(top, top))
    if top == "triton":
        return with_component(c, ("python-deps", "triton", "platform", "windows")) | {
            "category": "python-deps",
            "stage": "import",
            "title": "Python module triton not found",
            "cause": "triton is not installed; pip has no triton wheel for Windows or macOS.",
            "fix": _TRITON_FIX,
            "source": "https://github.com/devilismyfriend/StableTuner/issues/110",
        }
    return with_component(c, ("python-deps", project)) | {
        "category": "python-deps",
        "stage": "import",
        "title": f"Python module {module} not found",
        "cause": f"{module} is not installed in the interpreter that ran (build isolation or "
        "another environment hides it).",
        "fix": f"pip install {project} in that environment (or --no-build-isolation if the "
        "build needs it at build time)"
        + (
            f"; when {top} is installed, it is another release than the code was written for: "
            f"install the {top} release the code requires"
            if "." in module
            else "; if no package of that name exists, the import is misspelt: check it against "
            "the package's documentation"
        )
        + "; in a notebook (Jupyter, Colab) restart the kernel/runtime after installing it, so "
        "the running interpreter sees the new package; a launcher (torchrun, sudo, a system "
        "jupyter) may run another Python than the environment's: install torch in the environment"
        " and use its own launcher (python -m torch.distributed.run).",
        "source": f"https://pypi.org/project/{project}/",
    }


_NVCC_CAUSES = (
    " When nvcc is the command and nothing above names the error, the usual causes are: nvcc's "
    "host compiler is newer (or older) than this CUDA release supports; the CUDA toolkit that "
    "runs is not the one torch was built with (torch.version.cuda) or CUDA_HOME points at none; "
    "nvcc is not installed."
)


_COMPILERS = frozenset({"gcc", "g++", "cc", "c++", "clang", "clang++", "cl.exe", "cl"})


_GCC_CAUSES = (
    " When the compiler printed no error in the code itself, the usual cause is a compiler "
    "newer (or older) than the release was tested with (an old torch with a newer gcc)."
)


# the package pip was building: its unpacked source directory in pip's temporary tree
_PIP_SOURCE = re.compile(r"pip-(?:install|build)-\w+/([A-Za-z0-9][\w.+-]*?)(?:_[0-9a-f]{32})?/")


def pip_setup_failed(e: TypedError) -> dict[str, Any]:
    """pip's own report that a package's setup.py run failed (``Command errored out with exit
    status 1: ... setup.py``, pip < 20.2's ``Command "python setup.py egg_info" failed``). From
    an index (``pip-install-*/<name>/``) pip fell back to building the package from source: in
    the train rounds (13's and 14's torch-scatter, 17's two mmcv-full logs) the answer was that
    no prebuilt wheel matched (a pin or a find-links URL other than the project's index for this
    torch/CUDA) or that the source build had no working compiler. From a local or VCS checkout
    (``pip-req-build-*``, round 17's apex#214) there is no wheel to take: the build's toolchain
    (compiler, the CUDA toolkit torch was built with) is the usual cause."""
    found = _PIP_SOURCE.search(e.message.replace("\\", "/"))
    name = found.group(1) if found else None
    what = name or "the package"
    common = {
        "category": "pip",
        "tags": ("pip", "install", "version-pin", "build-step", "command-failed", "compiler"),
        "stage": "install",
        "title": f"pip could not build {what} from source",
        "source": "https://github.com/open-mmlab/mmcv/issues/943",
    }
    if name is None:
        return common | {
            "tags": (*common["tags"], "cuda", "toolkit"),
            "cause": "pip built a source checkout (a local directory or a git URL) and its "
            "setup.py failed; this line only reports that, the build's first error is above it in "
            "the full log. Usual reasons: no working C/C++ compiler, or a CUDA toolkit other "
            "than the one torch was built with (several CUDAs installed, CUDA_HOME/PATH pointing "
            "at another), or a torch other than the release the project supports.",
            "fix": "read the build's first 'error:' (pip install -v); point the build at the CUDA "
            "torch was built with (python -c 'import torch; print(torch.version.cuda)'; set "
            "CUDA_HOME and PATH to that toolkit), install a working compiler (build-essential, "
            "Xcode command line tools, MSVC Build Tools), and install the torch version the "
            "project names first (then pip install --no-build-isolation .).",
        }
    return common | {
        "cause": f"pip found no prebuilt wheel of {name} for this Python, torch and CUDA and ran "
        "its setup.py, which failed (this line only reports that; the build's first error is "
        "above it in the full log). Usual reasons: the pinned version or the -f/--find-links URL "
        "does not match the wheels the project publishes for the installed torch and CUDA (a "
        "typo such as cuda101 for cu101, a release older than its first wheel for that torch), "
        "or no working C/C++ compiler (or an nvcc that rejects it) for the source build.",
        "fix": f"install a prebuilt {name}: take the exact -f/--find-links URL for your torch and "
        "CUDA versions from the project's install page (e.g. .../cu113/torch1.11.0/index.html) "
        "and a version its index lists (often the latest); only if none exists build from "
        "source with a working compiler (build-essential, Xcode command line tools, MSVC Build "
        "Tools) and the CUDA torch was built with, reading the first 'error:' of the build.",
    }


def command_failed(e: TypedError) -> dict[str, Any]:
    """setuptools' ``error: command 'gcc' failed with exit status 1`` (or a build script's
    ``CalledProcessError`` for cmake/ninja): only the report that a tool's run failed; its cause
    is the tool's first error, printed before this line."""
    if e.tool == "setup.py":
        return pip_setup_failed(e)
    tool = e.tool or "the compiler"
    name = tool.lower()
    nvcc = name.startswith("nvcc")
    compiler = nvcc or name.rsplit("-", 1)[0] in _COMPILERS
    cause = (
        f"The build ran {tool} and it exited with an error; this line only reports that. "
        f"{tool}'s own first error ('error:', 'CMake Error'), above it in the full log, says why."
    )
    if nvcc:
        cause += _NVCC_CAUSES
    elif compiler:
        cause += _GCC_CAUSES
    return {
        "category": "compiler" if compiler else "build-step",
        "tags": (
            "build-step",
            "command-failed",
            tool,
            *(("compiler",) if compiler else ()),
            *(("nvcc", "cuda") if nvcc else ()),
            # not a compiler: the fix names a torch other than the project's release first
            *(() if compiler else ("version-pin",)),
        ),
        "stage": "configure" if name == "cmake" else "compile",
        "title": f"{tool} failed (the reason is printed above this line)",
        "cause": cause,
        "fix": "read (or paste) the full output above this line — the first 'error:' of the "
        "compiler, or run the build again with -v / MAX_JOBS=1 so it is not interleaved; "
        "`torchsmith doctor` on the whole log names the cause"
        + (
            "; check nvcc --version against torch.version.cuda and gcc --version against the "
            "CUDA release's supported host compilers."
            if nvcc
            else "; if the compiler's output names no error in the code, build with the gcc "
            "version the release was tested with."
            if compiler
            else "; when that output shows no error either, the usual causes are no working "
            "C++ compiler (install build-essential, or the MSVC Build Tools on Windows), a "
            "torch other than the release the project targets (install the one its README "
            "names), or a stale build directory or checkout (remove build/, update the "
            "checkout and its submodules, build again)."
        ),
        "source": "https://setuptools.pypa.io/en/latest/userguide/ext_modules.html",
    }


_PACKAGE_DIRS = ("site-packages/", "dist-packages/")
_CPP_EXTENSION = "torch/utils/cpp_extension.py"
_TORCH_PACKAGES = frozenset({"torch", "torchvision", "torchaudio", "torchtext"})
_COMPANIONS = frozenset({"torchvision", "torchaudio", "torchtext", "torchdata"})


def frame_package(path: str) -> str | None:
    """The installed package a traceback frame's file belongs to (``.../site-packages/torch/
    utils/cpp_extension.py`` -> torch), else the nearest torch/torchvision/torchaudio folder
    of the path (an egg, a source tree: ``build/.../egg/torchaudio/transforms.py``)."""
    path = path.replace("\\", "/")
    for marker in _PACKAGE_DIRS:
        if marker in path:
            return path.split(marker, 1)[1].split("/", 1)[0].removesuffix(".py")
    parts = path.split("/")[:-1]
    return next((p for p in reversed(parts) if p in _TORCH_PACKAGES), None)


def python_exception(e: TypedError) -> dict[str, Any]:
    """A Python exception no rule knows: the frame that raised it says which code to look at
    (the last ``File "...", line N`` above it; Python's traceback prints the raising frame last)."""
    where = e.file
    package = frame_package(where) if where else None
    tags = ("python", *((package,) if package in component_names() else ()))
    if where and _CPP_EXTENSION in where.replace("\\", "/"):
        fix = (
            "it was raised inside torch.utils.cpp_extension while building an extension: the "
            "compiler's first 'error:' above says why (run with MAX_JOBS=1 to see it); "
            "errors in the extension's own sources against torch's headers mean it was written "
            "for another torch release: build it with the torch version the project names; a "
            "KeyError/TypeError there means the project's setup.py was written for another "
            "torch release's cpp_extension: use the torch version the project names."
        )
        tags = (*tags, "extension", "cpp-extension", "version-pin")
    elif package in _COMPANIONS and not mentioned(e.message):
        # the usual answer in the train rounds 11-15 (audio#25, vision#1718): not one release pair
        fix = (
            f"it was raised inside {package} ({where}) while it used torch: {package} and torch "
            f"are not one release pair; install the {package} version paired with the installed "
            "torch (`torchsmith kb release <torch version>` names the pair; same index and CUDA "
            "variant), or the torch/companion pair the project pins."
        )
        tags = (*tags, "companions", "version-pin")
    elif package:
        fix = (
            f"it was raised inside the package {package} ({where}): check that its installed "
            "version is the one the calling code was written for (the project's pinned versions)."
        )
        tags = (*tags, "version-pin")
    elif where:
        fix = f"the frame that raised it is {where}."
    else:
        fix = (
            "the exception's message and the traceback above name the failing step; the "
            "usual cause is an installed version (torch, a companion, a dependency) other "
            "than the one the code was written for: install the versions the project pins."
        )
        tags = (*tags, "version-pin")
    return {
        "category": "python",
        "tags": tags,
        "stage": "compile",
        "title": f"Python {e.exception}" + (f" raised in {package}" if package else ""),
        "cause": e.message + (f" (raised in {where})" if where else ""),
        "fix": fix,
        "source": "https://docs.python.org/3/tutorial/errors.html",
    }


_PIP_BUILD = re.compile(
    r"(?:Failed to build|Failed building wheel for|Could not build wheels for|"
    r"Building wheel for) ([\w.-]+)"
)
_PIP_FIND = re.compile(
    r"(?:No matching distribution found for|satisfies the requirement) ([\w.-]+)"
)
_TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "torchdata"})


def pip_failure(e: TypedError) -> dict[str, Any]:
    """pip's own report, with a fix that names the package: a source build that failed (its
    cause is the build's first error above) or a requirement no index had."""
    message = e.message or ""
    built, found = _PIP_BUILD.search(message), _PIP_FIND.search(message)
    fix = "check the requirement's versions for this Python and platform (pip index versions NAME)."
    if built:
        name = built.group(1)
        fix = (
            f"{name} was built from source and its build failed; pip only reports it: the cause "
            "is the build's first error above (a compiler 'error:', torch.utils.cpp_extension's "
            f"'Error compiling objects'). For a torch extension build {name} with the torch and "
            "CUDA versions the project supports (install that torch first, then pip install "
            f"--no-build-isolation {name}), or install a prebuilt wheel of {name} made for this "
            "torch, CUDA and Python."
        )
    elif found:
        name = found.group(1)
        index = (
            "; torch and its companions: the CUDA variants are on "
            "https://download.pytorch.org/whl/<cuXXX> (--index-url)"
            if name.lower() in _TORCH_FAMILY
            else ""
        )
        fix = (
            f"no index pip used has a {name} release for this Python and platform: `pip index "
            f"versions {name}` lists what it has{index}; check the pin for a typo (a companion's"
            " version pairs with one torch: torchaudio 0.7.0 with torch 1.7.0), relax the pin or "
            "use a supported Python."
        )
    return {
        "category": "pip",
        "tags": ("pip", "install", "wheel", "version-pin") if found and not built else ("pip",),
        "stage": "install",
        "title": "pip could not install a requirement",
        "cause": f"pip failed: {message}",
        "fix": fix,
        "source": "https://pip.pypa.io/en/stable/topics/dependency-resolution/",
    }
