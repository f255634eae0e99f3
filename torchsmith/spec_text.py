"""What a spec's text values may hold. Every value can reach a generated file (a Dockerfile's
``ENV``/``FROM``/``RUN`` lines, a workflow, a command line, a log line), so a value that cannot be
written there as one word is refused at spec load, naming its key — never escaped into meaning
something else later. Pure checks, used by :mod:`torchsmith.spec`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""Newline, carriage return, NUL, tab, escape...: no generated line can carry them."""
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")
# Debian package names (policy 5.6.1), optionally =VERSION or /SUITE as apt-get takes them.
_MIRROR = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~%+/-]*)?$")
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+:~-]+|/[a-z0-9.-]+)?$")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for k, v in value.items() for t in (*_texts(k), *_texts(v))]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _texts(v)]
    return []


def no_control(value: Any) -> Any:
    """``value`` unchanged, or ValueError when any text in it holds a control character."""
    bad = next((t for t in _texts(value) if CONTROL.search(t)), None)
    if bad is not None:
        raise ValueError(
            f"{bad!r} holds a control character (newline, NUL, tab...): it cannot be written "
            "into a Dockerfile, a command line or a log line as one value"
        )
    return value


def image_reference(value: str) -> str:
    """An image reference (``registry:5000/name:tag@sha256:…``): no space, quote or ``$``."""
    if not _IMAGE.match(value):
        raise ValueError(
            f"{value!r} is not an image reference: letters, digits and . _ / : @ + - only, "
            "like registry.example:5000/cuda:12.4.1-devel-ubuntu22.04"
        )
    return value


def apt_mirror(value: str) -> str:
    """A package repository's base URL: http(s), host, optional port and path; no user-info
    (it would be written into a Dockerfile), query, space or quote."""
    if not _MIRROR.match(value):
        raise ValueError(
            f"{value!r} is not a repository URL like http://127.0.0.1:8080/debian or "
            "https://mirror.example/cuda/ubuntu1604/x86_64/ (http or https, no credentials, "
            "no query)"
        )
    return value


def debian_package(value: str) -> str:
    """A Debian package name for apt-get, optionally ``=VERSION`` or ``/SUITE``."""
    if not _PACKAGE.match(value):
        raise ValueError(
            f"{value!r} is not a Debian package name (lower-case letters, digits, + . -; "
            "optionally =VERSION or /SUITE), e.g. 'tmux' or 'git=1:2.39.5-0+deb12u2'"
        )
    return value


def requirement(value: str) -> str:
    """One PEP 508 requirement (``tqdm>=4``); never a pip option such as ``--index-url``."""
    from packaging.requirements import InvalidRequirement, Requirement  # only when one is given

    try:
        Requirement(value)
    except InvalidRequirement as exc:
        raise ValueError(
            f"{value!r} is not a PEP 508 requirement like 'tqdm>=4' (pip options such as "
            f"--index-url are not requirements): {exc}"
        ) from None
    return value


def requirement_name(value: str) -> str:
    """The normalized project name of a valid requirement: 'Torch>=2' -> 'torch'."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(Requirement(value).name))


ImageRef = Annotated[str, AfterValidator(image_reference)]
AptMirror = Annotated[str, AfterValidator(apt_mirror)]
DebianPackage = Annotated[str, AfterValidator(debian_package)]
PipRequirement = Annotated[str, AfterValidator(requirement)]
