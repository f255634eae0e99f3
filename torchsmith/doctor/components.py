"""Who provides a header, a symbol, a library or a Python module: the sourced facts of
``components.toml`` and the lookups the generic diagnosis uses."""

from __future__ import annotations

import fnmatch
import functools
import sys
from importlib import resources
from typing import Any

import re2
from pydantic import BaseModel, ConfigDict

from torchsmith.doctor.linear import compile_linear

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

class Component(BaseModel):
    """Who provides a header, symbol, library or module, and how to install it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    headers: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    debian: str
    pypi: str
    conda: str
    variables: tuple[str, ...] = ()
    source: str


@functools.cache
def components() -> tuple[Component, ...]:
    return tuple(Component.model_validate(row) for row in _data()["component"])


class MessageFact(BaseModel):
    """What an error message means: the cause and fix the generic diagnosis gives its class."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    match: str
    category: str
    tags: tuple[str, ...]
    title: str
    cause: str
    fix: str
    source: str


@functools.cache
def _data() -> dict[str, Any]:
    text = (resources.files("torchsmith.doctor") / "components.toml").read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    return data


@functools.cache
def message_facts() -> tuple[tuple[MessageFact, re2._Regexp], ...]:
    facts = (MessageFact.model_validate(row) for row in _data().get("message", ()))
    return tuple((f, compile_linear(f.match)) for f in facts)


def by_message(message: str) -> MessageFact | None:
    """The first sourced fact whose pattern matches ``message`` (RE2: linear time)."""
    return next((f for f, pattern in message_facts() if pattern.search(message)), None)


@functools.cache
def component_names() -> frozenset[str]:
    return frozenset(c.name for c in components())


def by_header(header: str) -> Component | None:
    return next(
        (c for c in components() for g in c.headers if fnmatch.fnmatchcase(header, g)), None
    )


def by_symbol(symbol: str) -> Component | None:
    found = [(len(p), c) for c in components() for p in c.symbols if symbol.startswith(p)]
    return max(found, key=lambda pair: pair[0])[1] if found else None


_LIB_SUFFIX = compile_linear(r"(?:-[0-9a-f]{8})?(?:[.-]\d+)*\.(?:so|dylib|dll|a|lib)(?:\.[\d.]+)?$")


def by_library(library: str) -> Component | None:
    """``libavdevice.58.dylib``, ``libcudart.so.12``, ``cudnn64_8.dll``, ``-lsox``: the
    component whose library that is."""
    base = library.replace("\\", "/").rsplit("/", 1)[-1].removeprefix("lib")
    name = _LIB_SUFFIX.sub("", base)
    return next(
        (c for c in components() for g in c.libraries if fnmatch.fnmatchcase(name, g)), None
    )


def by_module(module: str) -> Component | None:
    return next(
        (c for c in components() for g in c.modules if fnmatch.fnmatchcase(module, g)), None
    )


def by_name(name: str) -> Component | None:
    low = name.lower()
    return next((c for c in components() if c.name == low or low.startswith(c.name)), None)


def mentioned(message: str) -> tuple[str, ...]:
    """Names of the components a message names (``FFmpeg``, ``cuDNN``, ``sox``, ...)."""
    low = message.lower()
    return tuple(
        c.name for c in components() if any(_word(low, k) for k in (c.name, *c.keywords))
    )


def _word(text: str, word: str) -> bool:
    at = text.find(word)
    while at != -1:
        before = text[at - 1 : at]
        after = text[at + len(word) : at + len(word) + 1]
        if not (before.isalnum() or after.isalpha()):
            return True
        at = text.find(word, at + 1)
    return False


PIP_NAMES = {  # import name -> PyPI project, where they differ (each project's PyPI page)
    "yaml": "pyyaml",
    "cv2": "opencv-python",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "google.protobuf": "protobuf",
    "google": "protobuf",
    "skbuild": "scikit-build",
    "Cython": "cython",
    "typing_extensions": "typing-extensions",
    "pkg_resources": "setuptools",
    "distutils": "setuptools",
    # the usual ML/tooling import names that differ from their PyPI projects (each PyPI page;
    # added before the round 20 freeze)
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "attr": "attrs",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "fitz": "pymupdf",
    "docx": "python-docx",
    "OpenGL": "PyOpenGL",
    "serial": "pyserial",
    "jwt": "PyJWT",
    "Crypto": "pycryptodome",
    "faiss": "faiss-cpu",
    "llama_cpp": "llama-cpp-python",
    "pytorch_lightning": "pytorch-lightning",
    "huggingface_hub": "huggingface-hub",
    "torch_geometric": "torch-geometric",
    "mpl_toolkits": "matplotlib",
}
