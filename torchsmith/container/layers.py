"""Dockerfile building blocks shared by the build and the training stages: one ``RUN`` layer,
an apt layer, the Python venv layer."""

from __future__ import annotations

from torchsmith.container.base import BaseChoice

VENV = "/opt/venv"
UV_PYTHONS = "/opt/python"
# The newest pip that still runs on an old Python (pip's release notes: 21.0 dropped 3.5,
# 22.0 dropped 3.6, 24.1 dropped 3.7; https://pip.pypa.io/en/stable/news/).
PIP_FOR_PYTHON = {"3.5": "pip<21", "3.6": "pip<22", "3.7": "pip<24.1"}


def run_layer(*commands: str, ignore: str = "") -> list[str]:
    lines = [f"# hadolint ignore={ignore}"] if ignore else []
    body = " \\\n && ".join(commands)
    return [*lines, f"RUN {body}"]


def apt_install(packages: list[str] | tuple[str, ...]) -> list[str]:
    """One apt layer: update, install without recommends, clean (versions come from the image's
    suite: pinning them would break on every point release; hence DL3008 is ignored)."""
    names = " ".join(sorted(set(packages)))
    return run_layer(
        "apt-get update",
        f"apt-get install -y --no-install-recommends {names}",
        "rm -rf /var/lib/apt/lists/*",
        ignore="DL3008",
    )


def python_layer(base: BaseChoice, uv_image: str) -> list[str]:
    """A venv at /opt/venv with the image's Python, or one uv installs (readable by any user)."""
    pip = PIP_FOR_PYTHON.get(base.python, "pip")
    upgrade = f"{VENV}/bin/python -m pip install --no-cache-dir --upgrade '{pip}'"
    path = f"ENV PATH={VENV}/bin:$PATH"
    if base.python_from == "os":
        return [*run_layer(f"python3 -m venv {VENV}", upgrade, ignore="DL3013"), path]
    lines = [
        f"COPY --from={uv_image} /uv /usr/local/bin/uv",
        f"ENV UV_PYTHON_INSTALL_DIR={UV_PYTHONS}",
    ]
    create = (f"uv python install {base.python}", f"uv venv --seed --python {base.python} {VENV}")
    return [*lines, *run_layer(*create, upgrade, ignore="DL3013"), path]
