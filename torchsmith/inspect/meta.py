"""Metadata read without importing torch: ``torch/version.py`` (parsed, never executed) and a
wheel's ``WHEEL``/``METADATA`` files."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from email.parser import HeaderParser

from packaging.requirements import InvalidRequirement, Requirement


@dataclass(frozen=True)
class VersionPy:
    version: str | None
    git_version: str | None
    cuda: str | None
    debug: bool | None


def parse_version_py(text: str) -> VersionPy:
    """The literal assignments of ``torch/version.py`` (``__version__``, ``git_version``...)."""
    values: dict[str, object] = {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return VersionPy(None, None, None, None)
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target: ast.expr | None = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        else:
            continue
        value = node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            values[target.id] = value.value

    def text_of(key: str) -> str | None:
        item = values.get(key)
        return item if isinstance(item, str) else None

    debug = values.get("debug")
    return VersionPy(
        version=text_of("__version__"),
        git_version=text_of("git_version"),
        cuda=text_of("cuda"),
        debug=debug if isinstance(debug, bool) else None,
    )


@dataclass(frozen=True)
class WheelMeta:
    tags: tuple[str, ...]
    generator: str | None
    requires_dist: tuple[str, ...]
    name: str | None
    version: str | None


def parse_wheel_meta(wheel_text: str, metadata_text: str) -> WheelMeta:
    """Tags and generator from ``WHEEL``; name, version, Requires-Dist from ``METADATA``."""
    wheel = HeaderParser().parsestr(wheel_text)
    meta = HeaderParser().parsestr(metadata_text)
    return WheelMeta(
        tags=tuple(wheel.get_all("Tag") or ()),
        generator=wheel.get("Generator"),
        requires_dist=tuple(meta.get_all("Requires-Dist") or ()),
        name=meta.get("Name"),
        version=meta.get("Version"),
    )


def torch_requirements(metadata_text: str) -> list[Requirement]:
    """The Requires-Dist entries naming torch."""
    found = []
    for text in HeaderParser().parsestr(metadata_text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.name.lower() == "torch":
            found.append(req)
    return found
