"""Backend ``docker`` of ``torchsmith build``: the same pipeline, run by torchsmith itself inside a
working container of the plan's base image — one pipeline for every backend.

The container starts from the base image (``buildah from``, vfs storage, chroot isolation: no
daemon, no user namespaces), gets the image's own build tools from its own suite (apt inside
the container, never on the host), this torchsmith (its package directory and its
requirements in a venv) and the host's network trust (its local CA certificates, for a
TLS-inspecting proxy). The cache root and the output directory are mounted at the same paths,
so the build's workspace, logs, compiler cache and artifacts live on the host and the same
command resumes an interrupted build. The spec reaches the torchsmith inside as
``TORCHSMITH_*`` variables (the values given, never defaults), with ``backend = "local"``.
The working container is removed afterwards; nothing is committed, so no layer is written.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torchsmith
from torchsmith.container import env_file
from torchsmith.container.engines import EngineChoice
from torchsmith.errors import PlanError, Problem
from torchsmith.matrix.combinations import env_text
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import ResolvedSpec, env_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOLS = (
    "python3",
    "python3-venv",
    "python3-dev",
    "build-essential",
    "cmake",
    "ninja-build",
    "ccache",
    "dpkg-dev",
    "xz-utils",
    "ca-certificates",
    "git",
)
"""What the pipeline inside needs from the image's suite: its Python with venv and headers,
the compilers, CMake, ninja, ccache (the compiler cache), dpkg-dev (Debian sources), git."""
LIB = "/opt/torchsmith/lib"
VENV = "/opt/torchsmith/venv"
CAS = Path("/usr/local/share/ca-certificates")
NOT_FORWARDED = frozenset(
    {"backend", "engine", "base_image", "base_recipe", "apt_mirror", "images", "output_dir"}
)
"""Spec keys the torchsmith inside does not get: they describe the container itself."""
PROXIES = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
_USERINFO = re.compile(r"://[^/@\s]+@")


def _sign_key(spec: BuildSpec) -> list[Problem]:
    if not spec.sign_key:
        return []
    return [
        Problem(
            "sign_key in a container build: the signing key stays on this machine (it is "
            "never copied or mounted into a container), so the wheels built inside would go "
            "unsigned",
            "build with --backend local to sign, or leave --sign-key out",
            "sign_key",
        )
    ]


def refusals(spec: BuildSpec, engine: EngineChoice | None) -> list[Problem]:
    """What a build in a container does not carry out yet (refused, never dropped)."""
    problems = []
    if not (spec.source == "debian" or spec.source.startswith("git")):
        problems.append(
            Problem(
                f"source {spec.source!r} in a container build: only Debian sources and git "
                "are fetched inside the container yet (a local tree or file is not mounted)",
                "use --source debian or git, or build on this machine (--backend local)",
                "source",
            )
        )
    if spec.against:
        problems.append(
            Problem(
                f"--against {spec.against} in a container build: the torch named there is a "
                "file or interpreter of this machine, not mounted in the container",
                "build companions against a wheel on this machine (--backend local)",
                "against",
            )
        )
    problems += _sign_key(spec)
    inside_only = sorted({"install", "docker-image"} & set(spec.outputs))
    if inside_only or spec.images:
        problems.append(
            Problem(
                f"{', '.join(inside_only) or '[[images]]'} in `torchsmith build --backend "
                "docker`: the pipeline inside the container publishes into the mounted output "
                "directory (wheel, conda, companions); an install would land in the throwaway "
                "container and images are `torchsmith image`'s",
                "`torchsmith image` makes images; install the published wheel where you need "
                "it (--backend local --output install --install-python PYTHON)",
                "outputs",
            )
        )
    if spec.cache.location and _USERINFO.search(spec.cache.location):
        problems.append(
            Problem(
                "a compiler cache URL with credentials would reach the container's command line",
                "give the credentials through the cache's own environment on this machine "
                "and build here (--backend local)",
                "cache.location",
            )
        )
    if engine is not None and engine.name != "buildah":
        problems.append(
            Problem(
                f"engine {engine.name}: builds inside a working container run with buildah "
                "only yet (podman run fails on this kind of host: setrlimit not permitted)",
                "install buildah (Debian: apt-get install buildah) and pass --engine buildah",
                "engine",
            )
        )
    return problems


OWN_PYTHON = (3, 10)
"""torchsmith's own ``requires-python`` floor: the image's python3 must run it."""


def python_problem(image_python: str, image: str) -> Problem | None:
    """torchsmith runs inside the image with the image's own python3."""
    found = tuple(int(p) for p in image_python.split(".")[:2])
    if found >= OWN_PYTHON:
        return None
    return Problem(
        f"{image}'s python3 is {image_python}; torchsmith itself, which runs the build inside "
        f"the container, needs Python {'.'.join(map(str, OWN_PYTHON))} or newer",
        "use `torchsmith image` (the generated Dockerfile runs the build in such images), or "
        "a newer base image (--base-image)",
        "base_image",
    )


def check(spec: BuildSpec, engine: EngineChoice | None) -> None:
    problems = refusals(spec, engine)
    if problems:
        raise PlanError(problems, "change the request as suggested; nothing was built")


def _value(spec: BuildSpec, key: str) -> Any:
    value: Any = spec
    for part in key.split("."):
        value = getattr(value, part)
    return value


IN_CONTAINER = "TORCHSMITH_IN_CONTAINER"
"""Set for the torchsmith inside a container (its cache root is the host's, mounted)."""


def spec_env(rs: ResolvedSpec) -> dict[str, str]:
    """The given spec values as the ``TORCHSMITH_*`` variables the torchsmith inside reads."""
    keys = [k for k, o in rs.origins.items() if o != "default" and k not in NOT_FORWARDED]
    values = {k: _value(rs.spec, k) for k in sorted(keys)}
    # an empty list (the default of companions, gpus, targets) has no variable text:
    # TORCHSMITH_X= is refused as blank (issue 28 item 4)
    env = {env_name(k): env_text(v) for k, v in values.items() if v != ()}
    return {**env, env_name("backend"): "local"}


def proxy_env(env: Mapping[str, str]) -> dict[str, str]:
    """The host's proxy settings, credentials included: they reach the container by a private
    file (:meth:`Session.run_argv`), never on a command line."""
    return {k: env[k] for k in PROXIES if env.get(k)}


def requirements() -> list[str]:
    """torchsmith's own runtime requirements (no extras): from the source checkout's
    pyproject.toml when it runs from one (an editable install's metadata lags it until the
    next install), else from its installed metadata."""
    pyproject = package_dir().parent / "pyproject.toml"
    if pyproject.is_file():
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        found: list[str] = list(data.get("project", {}).get("dependencies", []))
    else:
        found = importlib.metadata.requires("torchsmith") or []
    return [r.split(";")[0].strip() for r in found if "extra ==" not in r]


def package_dir() -> Path:
    return Path(torchsmith.__file__).resolve().parent


@dataclass(frozen=True)
class Session:
    """A working container and how commands run in it."""

    buildah: tuple[str, ...]
    container: str
    mounts: tuple[Path, ...]
    env: tuple[tuple[str, str], ...] = ()
    caps: tuple[str, ...] = ()

    def run_argv(self, argv: Sequence[str | Path], env: Mapping[str, str] = {}) -> list[str]:
        """``buildah run`` of ``argv`` in the container, the mounts at the same paths. The
        environment never goes on this argv (world-readable): it is written to a 0600 file
        under the first mount, which the command inside reads and deletes (env_file.py)."""
        head = [*self.buildah, "run", "--isolation", "chroot"]
        for cap in self.caps:
            head += ["--cap-add", cap]
        for path in self.mounts:
            head += ["-v", f"{path}:{path}"]
        command = [str(a) for a in argv]
        values = [*self.env, *sorted(env.items())]
        if values:
            command = env_file.wrapped(command, env_file.write(self.mounts[0], values))
        return [*head, self.container, "--", *command]

    def release(self) -> None:
        """Remove an environment file a failed engine call left behind."""
        if self.mounts:
            env_file.release(self.mounts[0])

    def copy_argv(self, src: Path, dest: str) -> list[str]:
        return [*self.buildah, "copy", self.container, str(src), dest]

    def remove_argv(self) -> list[str]:
        return [*self.buildah, "rm", self.container]


def buildah_head(engine: EngineChoice) -> tuple[str, ...]:
    return (engine.probe.path or "buildah", *engine.storage.flags())


def from_argv(engine: EngineChoice, image: str, pull: str) -> list[str]:
    return [*buildah_head(engine), "from", f"--pull={pull}", "--quiet", image]


_VERSIONED = re.compile(r"^(gcc|clang)-(\d+)$")


def compiler_packages(compiler: str | None) -> list[str]:
    """The Debian packages of the plan's host compiler ('gcc-11' → gcc-11, g++-11)."""
    match = _VERSIONED.match(compiler or "")
    if match is None:
        return []
    if match[1] == "gcc":
        return [f"gcc-{match[2]}", f"g++-{match[2]}"]
    return [f"clang-{match[2]}"]


def setup_commands(trust: bool, compiler: str | None = None) -> list[list[str]]:
    """The container's tools from its own suite (with the plan's host compiler), then this
    torchsmith in a venv."""
    apt = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
    tools = [*TOOLS, *compiler_packages(compiler)]
    commands = [
        [*apt, "update", "-q"],
        [*apt, "install", "-y", "-q", "--no-install-recommends", *tools],
    ]
    if trust:
        commands.append(["update-ca-certificates"])
    commands.append(["python3", "-m", "venv", VENV])
    pip = [f"{VENV}/bin/python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    commands.append([*pip, *requirements()])
    return commands


def inner_build(cache_root: Path, output_dir: Path, install_deps: bool, verify: bool) -> list[str]:
    """The torchsmith command inside (its spec comes as TORCHSMITH_* variables)."""
    argv = [f"{VENV}/bin/python", "-m", "torchsmith", "build", "--cache-root", str(cache_root)]
    argv += ["--output-dir", str(output_dir)]
    if install_deps:
        argv.append("--install-deps")
    if not verify:
        argv.append("--no-verify")
    return argv
