"""How cudart, cuDNN, NCCL and cuBLAS reach torch: linked dynamically, linked in statically,
expected from ``nvidia-*`` pip packages, or not at all."""

from __future__ import annotations

import re
from collections.abc import Sequence

from torchsmith.inspect.model import Component, ComponentLink, Library

COMPONENT_SONAMES: dict[Component, re.Pattern[str]] = {
    "cudart": re.compile(r"^libcudart\.so"),
    "cudnn": re.compile(r"^libcudnn(_\w+)?\.so"),
    "nccl": re.compile(r"^libnccl\.so"),
    "cublas": re.compile(r"^libcublas(Lt)?\.so"),
}


def _name(lib: Library) -> str:
    return lib.path.rsplit("/", 1)[-1]


def component_link(component: Component, libraries: Sequence[Library]) -> ComponentLink:
    pattern = COMPONENT_SONAMES[component]
    static = [_name(lib) for lib in libraries if component in lib.static_components]
    if static:
        return ComponentLink(
            component=component,
            mode="static",
            libraries=static,
            sonames=[],
            evidence=f"{component} API symbols defined inside {', '.join(static)}",
        )
    users = [(lib, d) for lib in libraries for d in lib.needed if pattern.match(d.soname)]
    if not users:
        return ComponentLink(
            component=component, mode="none", libraries=[], sonames=[], evidence="not linked"
        )
    pip = [d for _lib, d in users if d.provider == "pip"]
    sonames = sorted({d.soname for _lib, d in users})
    names = sorted({_name(lib) for lib, _d in users})
    where = ""
    if pip:
        where = f" from {pip[0].path}" if pip[0].path else " through RPATH into nvidia/* packages"
    return ComponentLink(
        component=component,
        mode="pip-deps" if pip else "dynamic",
        libraries=names,
        sonames=sonames,
        evidence=f"NEEDED {', '.join(sonames)} by {', '.join(names)}{where}",
    )


def linkage(libraries: Sequence[Library]) -> list[ComponentLink]:
    return [component_link(c, libraries) for c in COMPONENT_SONAMES]
