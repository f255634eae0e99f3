"""The generic reading of an exception's or installer's message by its wording class (issue 25,
before the round 20 freeze; rounds 1-19 are train data), for a failure no specific rule explains.

Each class reads the fields its wording names, so one mechanism covers every library it names:

* "X is not installed" / "requires the X library" / "please install X" -> install X under its
  PyPI name (:data:`DISTRIBUTIONS`; torchvision's ``PyAV is not installed``, round 19);
* "not compiled with X enabled" -> the torch build for backend X (:data:`BACKENDS`; CUDA, XPU, MPS,
  distributed; round 19's ``Torch not compiled with XPU enabled``);
* an AttributeError / ImportError / unexpected keyword on a known library's API -> the API changed
  between that library's releases (round 19's torchtext Vocab, round 15's torchtext Field);
* float64 (or another dtype) not supported on MPS -> float32 or the CPU;
* cpp_extension failing to parse an arch such as ``'90a'`` -> TORCH_CUDA_ARCH_LIST / torch release;
* an installer with no candidate for the platform (poetry, pip, uv) -> the platform facts;
* a corrupt or truncated wheel (BadZipFile, no WHEEL item, hash mismatch) -> clear the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchsmith.doctor.components import PIP_NAMES
from torchsmith.doctor.generic_installers import corrupt_wheel, no_candidates, no_distribution
from torchsmith.doctor.linear import compile_linear
from torchsmith.doctor.models import TypedError

# display or import name (lower case) -> (PyPI project, extra tags); each project's PyPI page
DISTRIBUTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pyav": ("av", ("video", "ffmpeg")),  # https://pypi.org/project/av/
    "av": ("av", ("video", "ffmpeg")),
    "opencv": ("opencv-python", ("opencv",)),  # https://pypi.org/project/opencv-python/
    "cv2": ("opencv-python", ("opencv",)),
    "scikit-learn": ("scikit-learn", ()),
    "sklearn": ("scikit-learn", ()),
    "scikit-image": ("scikit-image", ()),
    "skimage": ("scikit-image", ()),
    "pil": ("pillow", ("pillow",)),
    "pillow": ("pillow", ("pillow",)),
    "yaml": ("pyyaml", ()),
    "pyyaml": ("pyyaml", ()),
    "soundfile": ("soundfile", ("torchaudio", "audio")),
    "sox": ("sox", ("torchaudio", "audio")),
    "librosa": ("librosa", ("audio",)),
    "scipy": ("scipy", ()),
    "pandas": ("pandas", ()),
    "accimage": ("accimage", ("torchvision",)),
    "tensorboard": ("tensorboard", ()),
    "onnx": ("onnx", ("onnx",)),
    "onnxruntime": ("onnxruntime", ("onnx",)),
    "ninja": ("ninja", ("ninja",)),
    "triton": ("triton", ("triton",)),
    "bitsandbytes": ("bitsandbytes", ()),
    "accelerate": ("accelerate", ()),
    "sentencepiece": ("sentencepiece", ()),
    "spacy": ("spacy", ()),
    "timm": ("timm", ()),
}
# the message's own `pip install NAME` names the project outright (its first group)
_PIP_HINT = compile_linear(r"pip3? install (?:-U |--upgrade |-q )*['\"`]?([A-Za-z][\w.\[\]-]*)")
_NOT_INSTALLED = compile_linear(
    r"(?i)\b([A-Za-z][\w.-]*) (?:package |library |module )?(?:is|was) not (?:installed|available)|"
    r"\b([A-Za-z][\w.-]*) (?:must|needs to|should) be installed|"
    r"requires? (?:the )?([A-Za-z][\w.-]*) (?:library|package|module)|"
    r"please (?:pip )?install (?:the )?([A-Za-z][\w.-]*)|"
    r"requires? ([A-Za-z][\w.-]*) to be installed|you need to install ([A-Za-z][\w.-]*)|"
    r"\b([A-Za-z][\w.-]*) (?:package |library )?(?:is )?not found[.,;:]? (?:please )?install"
)
_NOT_NAMES = frozenset(  # pronouns, torch itself, and native libraries (components.toml's)
    {
        "it",
        "are",
        "were",
        "libraries",
        "files",
        "this",
        "that",
        "torch",
        "pytorch",
        "the",
        "a",
        "package",
        "module",
        "ffmpeg",
        "sox",
        "cuda",
        "cudnn",
        "nccl",
        "mkl",
        "gcc",
        "msvc",
        "compiler",
        "driver",
        "nvidia",
        "git",
    }
)

# backend -> (how to get a torch with it, source)
BACKENDS: dict[str, tuple[str, str]] = {
    "cuda": (
        "install a CUDA build of torch from https://download.pytorch.org/whl/<cuXXX> (pip "
        "uninstall torch first; `python -c 'import torch; print(torch.version.cuda)'` prints None "
        "on a CPU build), matching the driver's CUDA version",
        "https://pytorch.org/get-started/locally/",
    ),
    "xpu": (
        "install torch's XPU build (torch >= 2.5: pip install torch --index-url "
        "https://download.pytorch.org/whl/xpu) or the Intel Extension for PyTorch build the "
        "application names, with Intel's GPU driver; a CUDA or CPU wheel has no XPU support",
        "https://pytorch.org/docs/stable/notes/get_start_xpu.html",
    ),
    "mps": (
        "use an arm64 (Apple silicon) Python and torch >= 1.12 on macOS >= 12.3; an x86_64 "
        "Python under Rosetta has no MPS",
        "https://pytorch.org/docs/stable/notes/mps.html",
    ),
    "rocm": (
        "install torch's ROCm build on Linux (pip install torch --index-url "
        "https://download.pytorch.org/whl/rocm<X.Y>, matching the installed ROCm); a CUDA or "
        "CPU wheel has no ROCm support",
        "https://pytorch.org/get-started/locally/",
    ),
    "distributed": (
        "install a torch build with USE_DISTRIBUTED=1 (the Linux wheels; old macOS/Windows "
        "wheels and NO_DISTRIBUTED source builds lack it), or run without torch.distributed",
        "https://pytorch.org/docs/stable/distributed.html",
    ),
}
_SUBJECT = compile_linear(
    r"([\w.-]+) (?:was |is )?(?:not (?:compiled|built|linked) with|(?:compiled|built) without)"
)
# also 'PyTorch built without distributed support' and 'PyTorch is not linked with support for
# xpu devices' (round 24's pytorch#4606, round 25's intel-extension-for-pytorch#244, train data)
_NOT_COMPILED = compile_linear(
    r"(?i)not (?:compiled|built) with (\w+)|(?:compiled|built) without (\w+)|"
    r"not linked with support for (\w+)|(\w+) (?:support )?(?:is )?not (?:compiled|built) in"
)

# a library whose API changed between releases: its tag and what the train threads answered
_API_LIBS: dict[str, str] = {
    "torchtext": "torchtext 0.9-0.11 moved Field, BucketIterator, Vocab(counter, ...) and the "
    "datasets to torchtext.legacy and 0.12 removed them: pin torchtext<0.12 (0.6-0.11, with its "
    "paired torch) or port the code to the new API (torchtext.vocab.vocab / build_vocab_from_"
    "iterator)",
    "torchvision": "pin the torchvision release the code was written for (with its paired torch)"
    " or update the code to the installed release's API",
    "torchaudio": "pin the torchaudio release the code was written for (with its paired torch) or"
    " update the code to the installed release's API",
    "torch_geometric": "PyG moves and renames modules between releases: pin the torch_geometric "
    "release the code was written for or update the imports",
    "transformers": "pin the transformers release the code was written for or update the code",
    "numpy": "NumPy 1.24 removed np.float/np.int/np.bool aliases and NumPy 2.0 changed its ABI "
    "and API: pin numpy<2 (or the release the code needs) or update the code",
    "diffusers": "pin the diffusers release the code was written for or update the code",
    "huggingface_hub": "pin the huggingface_hub release the code was written for (newer ones "
    "removed cached_download) or update the code",
    "pytorch_lightning": "pin the pytorch_lightning release the code was written for",
    "mmcv": "mmcv 2.0 moved Config, the runner and fileio to mmengine and renamed mmcv-full "
    "to mmcv: pin mmcv-full 1.x (mmcv<2) for OpenMMLab 1.x code, or install mmengine and update "
    "the imports",
    "timm": "timm 0.9 moved timm.models.layers to timm.layers and renamed models: pin the timm "
    "release the code was written for or update the imports",
    "scipy": "SciPy removed deprecated names (scipy.misc.imread/imresize in 1.2-1.3): pin the "
    "scipy release the code was written for or use imageio/Pillow",
    "PIL": "Pillow 10 removed Image.ANTIALIAS and other deprecated constants (use "
    "Image.LANCZOS / Image.Resampling): update the code or pin pillow<10",
    "typing_extensions": "upgrade typing-extensions (pip install -U typing-extensions)",
}
_LIB_TAGS = {"torch_geometric": ("pyg", "companions"), "torchtext": ("companions",)}
_API_CHANGED = compile_linear(
    r"has no attribute '(\w+)'|cannot import name '?(\w+)|"
    r"got an unexpected keyword argument '?(\w+)"
)
# an attribute missing on a builtin, None or a tensor is the calling code's data, not an API move
_PLAIN_OBJECT = compile_linear(
    r"'(?:NoneType|str|int|float|bool|list|dict|tuple|set|bytes|Tensor|ndarray|function|"
    r"method|module)' object"
)
_MODULE_OF = compile_linear(r"module '([\w.]+)' has no|from '([\w.]+)'")
_MPS_DTYPE = compile_linear(
    r"(?i)MPS[^\n]{0,80}(?:float64|double)|(?:float64|double)[^\n]{0,80}MPS|"
    r"not (?:currently )?(?:implemented|supported) for (?:the )?'?MPS"
)
_ARCH_PARSE = compile_linear(r"invalid literal for int\(\) with base 10: '(\d+a?)'")


def read_message(e: TypedError, block: Sequence[str] = ()) -> dict[str, Any] | None:
    """The finding's fields for the message's wording class, or None when none applies."""
    if e.kind == "import-module":
        return _moved_module(e)
    if e.kind == "import-symbol":
        return _torch_own_symbol(e)
    message = e.message
    installers = (corrupt_wheel, no_distribution, no_candidates)
    for reader in (
        installers
        if e.kind == "pip"
        else (
            *installers,
            _mps_dtype,
            _arch_parse,
            _not_compiled,
            _not_installed,
        )
    ):
        fields = reader(message)
        if fields is not None:
            return fields
    return _api_changed(e, block)


def _not_installed(message: str) -> dict[str, Any] | None:
    match = _NOT_INSTALLED.search(message)
    if match is None:
        return None
    name = next(g for g in match.groups() if g).rstrip(".")
    hint = _PIP_HINT.search(message)
    known = name.lower() in DISTRIBUTIONS or name in PIP_NAMES or hint is not None
    if name.lower() in _NOT_NAMES or (match.group(4) and not known):
        return None  # "Please install FFmpeg": a native library, not a Python package
    project, tags = DISTRIBUTIONS.get(name.lower(), (PIP_NAMES.get(name, name.lower()), ()))
    if hint is not None and hint.group(1).lower() not in ("pip", "torch", "-r"):
        project = hint.group(1)  # the message's own install command names the project
    return {
        "category": "python-deps",
        "tags": ("python-deps", project, *tags),
        "stage": "runtime",
        "title": f"{name} is not installed",
        "cause": f"The code needs {name} (PyPI: {project}), which is not installed in the "
        "interpreter that ran.",
        "fix": f"pip install {project} in that environment (conda-forge has it too), then restart "
        "the process (a notebook's kernel) so it is imported; if it is installed, another "
        "Python ran (check `python -m pip show " + project + "`).",
        "source": f"https://pypi.org/project/{project}/",
    }


def _not_compiled(message: str) -> dict[str, Any] | None:
    match = _NOT_COMPILED.search(message)
    if match is None:
        return None
    backend = next(g for g in match.groups() if g).lower()
    backend = {"gpu": "cuda", "hip": "rocm", "nccl": "distributed"}.get(backend, backend)
    fix, source = BACKENDS.get(
        backend, (f"install or build the torch variant with {backend} enabled", "")
    )
    subject = _SUBJECT.search(message)
    package = subject.group(1) if subject is not None else "torch"
    tags: tuple[str, ...] = ("cpu-build", "feature-off", backend)
    if package.lower() not in ("torch", "pytorch", "it", "was", "is"):
        tags = (*tags, "third-party", package.lower())
        # an extension or companion built without the backend (torch_scatter, detectron2, apex)
        fix = (
            f"{package} itself was built without {backend}: install its build for the "
            f"installed torch and {backend} (a wheel made for this torch+CUDA pair, e.g. PyG's "
            "https://data.pyg.org/whl/torch-<version>+<cuXXX>.html), or rebuild it from source "
            "with the toolkit visible (CUDA_HOME set; FORCE_CUDA=1 where no GPU is visible at "
            "build time, as in docker build) after checking torch.cuda.is_available()"
        )
        source = "https://pytorch.org/docs/stable/cpp_extension.html"
    return {
        "category": "feature-off",
        "tags": tags,
        "stage": "runtime",
        "title": f"{package} built without {backend}",
        "cause": f"The installed {package} was built without {backend} support, which the code "
        "asks for.",
        "fix": fix + "; or run the code on a device the installed build has (--device cpu).",
        "source": source or "https://pytorch.org/get-started/locally/",
    }


def _mps_dtype(message: str) -> dict[str, Any] | None:
    if _MPS_DTYPE.search(message) is None:
        return None
    return {
        "category": "mps",
        "tags": ("mps", "apple-silicon", "dtype"),
        "stage": "runtime",
        "title": "an operation or dtype the MPS backend does not support",
        "cause": "The MPS (Apple GPU) backend has no float64 and lacks some operators.",
        "fix": "use float32 on MPS (tensor.float(), dtype=torch.float32 where the code asks for "
        "float64/double), or run that step on the CPU (PYTORCH_ENABLE_MPS_FALLBACK=1 for a "
        "missing operator); a newer torch implements more operators.",
        "source": "https://pytorch.org/docs/stable/notes/mps.html",
    }


def _arch_parse(message: str) -> dict[str, Any] | None:
    match = _ARCH_PARSE.search(message)
    if match is None:
        return None
    return {
        "category": "cuda-arch",
        "tags": ("cuda-arch", "arch", "cpp-extension"),
        "stage": "compile",
        "title": f"torch.utils.cpp_extension cannot parse the arch '{match.group(1)}'",
        "cause": f"cpp_extension read a compute capability '{match.group(1)}' (an sm_90a-style "
        "arch from the GPU, the torch build's arch list or TORCH_CUDA_ARCH_LIST) that this torch "
        "release's parser does not handle.",
        "fix": 'set TORCH_CUDA_ARCH_LIST to plain versions (e.g. TORCH_CUDA_ARCH_LIST="9.0") '
        "before building, or use a torch release whose cpp_extension handles the suffix.",
        "source": "https://pytorch.org/docs/stable/cpp_extension.html",
    }


def _api_changed(e: TypedError, block: Sequence[str]) -> dict[str, Any] | None:
    match = _API_CHANGED.search(e.message)
    if match is None or e.kind not in ("python", "other"):
        return None
    name = next(g for g in match.groups() if g)
    where = _MODULE_OF.search(e.message)
    module = next((g for g in where.groups() if g), "") if where is not None else ""
    top = module.split(".")[0]
    if top in _API_LIBS:
        library: str | None = top
    elif e.file or module or _PLAIN_OBJECT.search(e.message) is not None:
        return None  # another module's API, the raising frame says more, or a data bug
    else:
        around = " ".join((e.message, *block[:12])).lower()
        library = next((lib for lib in _API_LIBS if lib in around), None)
    if library is None:
        return None
    return _api_removed(
        library,
        "runtime",
        f"{library}'s API changed: {name}",
        f"The code uses {name} from {library}'s API of another release than the one "
        "installed (renamed, moved or removed between releases).",
        _API_LIBS[library] + ".",
    )


def _api_removed(library: str, stage: str, title: str, cause: str, fix: str) -> dict[str, Any]:
    """The finding of code written for another release of ``library`` (its release history)."""
    return {
        "category": "api-removed",
        "tags": ("api-removed", "version-pin", library, *_LIB_TAGS.get(library, ())),
        "stage": stage,
        "title": title,
        "cause": cause,
        "fix": fix,
        "source": f"https://pypi.org/project/{library.replace('_', '-')}/#history",
    }


_STD_SYMBOL = compile_linear(r"^(?:_ZNSt|_ZSt|_ZNKSt|std::)|GLIBCXX|CXXABI|__cxx11|cxx11")
_TORCH_OWN = compile_linear(r"[/\\]torch[/\\](?:lib[/\\]|_C[.\\w-]*\.(?:so|pyd))")


def _torch_own_symbol(e: TypedError) -> dict[str, Any] | None:
    """torch's own library (``torch/lib/libtorch.so``, ``torch/_C...so``) lacks a symbol: two
    torch builds are mixed (an old install under a new one, a source build next to a wheel)."""
    symbol = e.symbol or ""
    if _TORCH_OWN.search(e.message) is None or _STD_SYMBOL.search(symbol) is not None:
        return None  # a C++ runtime symbol (std::, GLIBCXX): libstdc++, not torch's builds
    return {
        "category": "abi",
        "tags": ("stale-build", "reinstall", "undefined-symbol", "torch"),
        "stage": "import",
        "title": "torch's own libraries come from two builds",
        "cause": "A library inside the torch package lacks a symbol another of its libraries "
        "needs: files of two torch builds are mixed (a newer torch installed over an older one, "
        "a source build beside a wheel, or another torch earlier on sys.path / LD_LIBRARY_PATH).",
        "fix": "uninstall torch until pip finds none (pip uninstall torch, repeatedly; conda "
        "remove pytorch), delete any leftover site-packages/torch folder (and a source tree's "
        "build/ with python setup.py clean), check LD_LIBRARY_PATH and PYTHONPATH for another "
        "torch, then install one torch again.",
        "source": "https://pytorch.org/get-started/locally/",
    }


def _moved_module(e: TypedError) -> dict[str, Any] | None:
    """``No module named 'torch_geometric.nn.acts'``: a submodule of a library whose layout
    changes between releases (round 19's PyG 2.1) is the library's release, not a missing
    install."""
    module = e.module or ""
    top = module.split(".")[0]
    if "." not in module or top not in _API_LIBS or "._" in module:  # mmcv._ext: compiled
        return None
    return _api_removed(
        top,
        "import",
        f"{module} is not in the installed {top}",
        f"{top} is installed but has no submodule {module}: the code was written for "
        f"another {top} release (modules are moved, renamed and removed between releases).",
        _API_LIBS[top] + "; `pip show " + top.replace("_", "-") + "` prints the installed "
        "release (if it is not installed at all, install the release the code names).",
    )
