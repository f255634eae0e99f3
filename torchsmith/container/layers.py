"""Dockerfile building blocks shared by the build and the training stages: the one quoting
function every value goes through, a comment line, one ``RUN`` layer, an apt layer, the Python
venv layer."""

from __future__ import annotations

import shlex

from torchsmith.container.base import BaseChoice
from torchsmith.errors import PlanError, Problem
from torchsmith.spec_text import CONTROL

VENV = "/opt/venv"
UV_PYTHONS = "/opt/python"
# The newest pip that still runs on an old Python (pip's release notes: 21.0 dropped 3.5,
# 22.0 dropped 3.6, 24.1 dropped 3.7; https://pip.pypa.io/en/stable/news/).
PIP_FOR_PYTHON = {"3.5": "pip<21", "3.6": "pip<22", "3.7": "pip<24.1"}


def quote(value: str) -> str:
    """The one way a value enters a generated Dockerfile: one word for the Dockerfile's own
    parser (``FROM``, ``ENV``, ``ARG``, ``COPY``) and for the shell of ``RUN`` alike — as it is
    when made of safe characters only (``[A-Za-z0-9_@%+=:,./-]``), else single-quoted. A control
    character (newline, NUL...) cannot be written on a Dockerfile line at all: refused (the spec
    refuses such values at load, :mod:`torchsmith.spec_text`)."""
    if CONTROL.search(value):
        raise PlanError(
            [Problem(f"{value!r} cannot be written into a Dockerfile (a control character)",
                     "remove the newline or control character from the value")]
        )  # fmt: skip
    return shlex.quote(value)


def comment(text: str) -> str:
    """A ``#`` line: control characters (which would end it) shown as spaces."""
    return "# " + CONTROL.sub(" ", text)


def run_layer(*commands: str, ignore: str = "") -> list[str]:
    lines = [f"# hadolint ignore={ignore}"] if ignore else []
    body = " \\\n && ".join(commands)
    return [*lines, f"RUN {body}"]


def apt_install(packages: list[str] | tuple[str, ...]) -> list[str]:
    """One apt layer: update, install without recommends, clean (versions come from the image's
    suite: pinning them would break on every point release; hence DL3008 is ignored)."""
    names = " ".join(quote(p) for p in sorted(set(packages)))
    return run_layer(
        "apt-get update",
        f"apt-get install -y --no-install-recommends {names}",
        "rm -rf /var/lib/apt/lists/*",
        ignore="DL3008",
    )


def python_layer(base: BaseChoice, uv_image: str) -> list[str]:
    """A venv at /opt/venv with the image's Python, or one uv installs (readable by any user)."""
    pip = PIP_FOR_PYTHON.get(base.python, "pip")
    upgrade = f"{VENV}/bin/python -m pip install --no-cache-dir --upgrade {quote(pip)}"
    path = f"ENV PATH={VENV}/bin:$PATH"
    if base.python_from == "os":
        return [*run_layer(f"python3 -m venv {VENV}", upgrade, ignore="DL3013"), path]
    lines = [
        f"COPY --from={quote(uv_image)} /uv /usr/local/bin/uv",
        f"ENV UV_PYTHON_INSTALL_DIR={UV_PYTHONS}",
    ]
    python = quote(base.python)
    create = (f"uv python install {python}", f"uv venv --seed --python {python} {VENV}")
    return [*lines, *run_layer(*create, upgrade, ignore="DL3013"), path]
