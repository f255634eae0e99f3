"""CI, real: every command line of README.md's ```sh blocks runs as written (issue 28: two README
lines failed as written), except the ones :data:`EXCLUDED` lists with why — a whole build, a real
public index or registry, or a line run elsewhere. A README line that is neither run nor excluded
fails :func:`test_every_readme_command_is_run_or_excluded`, so a new line is classified when added.

Each command runs through ``bash -c`` exactly as the README spells it, in a directory that holds
what the README assumes is there: ``examples/`` (this checkout's), ``dist/`` with a torch wheel and
a torchvision wheel (from PyPI, cached in the test cache), ``.venv`` (a fresh venv: no torch is
installed in it here, so `inspect --python .venv/bin/python` answers "could not import torch"
from the interpreter it found — the relative path used to be "no such interpreter on PATH";
test_inspect_probe.py inspects a real installed torch), ``build.log`` (a recorded failure log)
and ``~/.cache/torchsmith/builds/PLANHASH`` (the workspace of the recorded whole 1.13.1 build:
tests/fixtures/report). ``HOME`` is that directory's; ``XDG_CACHE_HOME`` is kept in the test cache
so `source bundle --source debian` downloads Debian's 38 MB once.

Cost (Debian 12 dev machine, 2 cores, load 2-3, measured 2026-11-27): cold 26 s, of which
`source bundle --source debian` 12 s (Debian's 38 MB fetched; kept in the test cache after), the
rest 1-2 s each; warm 13 s. The torch wheel is conftest's cpu_torch_wheel; torchvision is 7 MB once.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import REPO, downloaded_wheel
from tests.integration.conftest import test_cache as cache_dir

FENCE = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)
TRAILING_COMMENT = re.compile(r"\s+#\s.*$")

BUILD = "a whole build (an hour or more); its stages are proven by test_build_*.py"
COMPANION = (
    "a companion build against a torch ('…' stands for the wheel's name); "
    "test_companion_against.py and test_companion_git.py build torchvision for real"
)
EXCLUDED: dict[str, str] = {
    "sudo apt-get update && sudo apt-get install -y python3-venv && python3 -m venv .venv && "
    ".venv/bin/pip install -e . && .venv/bin/torchsmith plan --torch 2.5.1 --cuda 12.4 "
    '--gpu "RTX 4090" --gpu 8.0': "installs system packages: run as a new user in a fresh "
    "Debian 12 chroot by test_readme_fresh_debian.py",
    "scripts/test": "is CI itself (every tier, with its system packages)",
    "torchsmith build --torch 1.13.1 --cpu --source debian --install-deps": BUILD,
    "torchsmith build --torch 2.6.0 --cpu --sign-key ~/.config/torchsmith/sign.pem": BUILD
    + "; test_build_wheel_small.py attests a small wheel, tests/unit/attest signs",
    "torchsmith rebuild dist/torch-*.manifest.json --cache-root /tmp/rebuild": BUILD
    + "; test_build_wheel_small.py rebuilds a small tree's manifest",
    "torchsmith build --torch 1.13.1 --cpu --source debian --python 3.10": BUILD,
    "torchsmith build --torch 1.13.1 --cuda 11.8 --gpu 8.6 --gpu 9.0 --source debian "
    "--target c10_cuda": "a CUDA partial build (minutes, a CUDA toolkit): "
    "test_build_debian_partial.py and test_toolchain_apt_cuda118.py",
    "torchsmith build --spec torchsmith.toml --source path:~/src/pytorch": "the user's own spec "
    "and checkout, then a whole build; test_sources_local.py copies a checkout for real",
    "torchsmith build --torch 2.5.1 --cpu --output install --install-python ~/venv/bin/python": (
        BUILD + "; test_repair_install.py installs a built wheel"
    ),
    "torchsmith build --torch 2.5.1 --cpu --output wheel --output conda": (
        BUILD + "; test_conda_channel.py makes and indexes a .conda"
    ),
    "torchsmith publish dist/ --to pypi-index:https://upload.pypi.org/legacy/ --token-env "
    "PKG_TOKEN": "uploads to the public PyPI; test_publish_pypi.py and "
    "test_publish_pypiserver_fallback.py publish to local indexes",
    "torchsmith publish dist/conda-channel/linux-64 --to conda-channel:/srv/channel": "needs a "
    "built .conda and writes /srv; test_conda_channel.py publishes into a channel for real",
    "torchsmith publish image.oci.tar --to oci:registry.example/team/torch:2.6.0 --token-env "
    "REG_TOKEN": "a real registry; test_publish_oci.py pushes to a local docker-registry",
    "torchsmith build --with torchvision --against dist/torch-2.6.0-cp311-…whl --source debian "
    "--cpu": COMPANION,
    "torchsmith build --with torchvision,torchaudio --against dist/torch-2.6.0-cp311-…whl "
    "--source debian --cuda 12.4 --gpu 8.6 --gpu 9.0": COMPANION + " (test_companion_cuda.py)",
    "torchsmith build --with torchvision --against python:/opt/venv/bin/python --source debian "
    "--cpu": COMPANION,
    "torchsmith build --torch 1.13.1 --cpu --source debian --with torchvision": BUILD,
    "torchsmith build --with torchvision --against python:/opt/venv/bin/python --cpu "
    "--companion-source torchvision=path:~/src/vision": COMPANION,
    "torchsmith build --torch 2.6.0 --cpu --source debian --backend docker --engine buildah": (
        "a build inside a container (minutes): test_build_in_container.py"
    ),
    "torchsmith image --spec examples/cresset-train-images.toml": "builds torch inside an "
    "image with an engine (hours); the Dockerfile route is linted by "
    "test_container_dockerfile_lint.py",
    "torchsmith image --spec train.toml --wheels dist/ --oci-archive oci/ --sif sif/": "the "
    "user's own spec and wheels, images built by an engine: test_container_build.py",
    "torchsmith verify dist/torch-*.whl --plan dist/torch-*.manifest.json": "needs the manifest "
    "a build writes beside its wheel, and its smoke test pip-installs the wheel's 2.7 GB of "
    "dependencies: test_verify_gpu.py, test_pipdeps_wheel.py",
}

# the commands run, with the exit codes that mean "ran as written" (not a usage error, not 70)
RUN: dict[str, tuple[int, ...]] = {
    'torchsmith plan --torch 2.5.1 --cuda 12.4 --gpu "RTX 4090" --gpu 8.0 --python 3.11': (0,),
    "torchsmith plan --spec examples/seed-004-cuda118-on-113.toml --json": (0,),
    "torchsmith host": (0,),
    "torchsmith kb release 1.13.1 --json": (0,),
    "torchsmith kb cuda 11.8 --json": (0,),
    'torchsmith kb gpu "RTX 3090" --json': (0,),
    "torchsmith image --spec examples/seed-000-gpu-virtualisation.toml --companion-source "
    "torchvision=tarball:https://github.com/pytorch/vision/archive/refs/tags/v0.3.0.tar.gz "
    "--dockerfile-only -o ctx/": (0,),
    "torchsmith source bundle --torch 1.13.1 --source debian -o torch-src.tar": (0,),
    "torchsmith inspect dist/torch-*.whl --json": (0,),
    "torchsmith inspect --python .venv/bin/python": (12,),  # no torch in this .venv (above)
    "torchsmith inspect dist/torchvision-*.whl": (0,),
    "torchsmith doctor build.log": (20,),  # exit 20: a cause found
    "torchsmith doctor --env": (0, 20, 22),  # this machine's answer: fine, problems, warnings
    "torchsmith report ~/.cache/torchsmith/builds/PLANHASH": (0,),
    "torchsmith matrix --spec examples/matrix-seed-002.toml --emit github-actions": (0,),
}


def readme_commands(text: str) -> list[str]:
    """Every command of every ```sh block: comments and blank lines skipped, ``\\`` lines
    joined, a trailing ``  # comment`` cut."""
    commands: list[str] = []
    for block in FENCE.findall(text):
        current: list[str] = []
        for line in block.splitlines():
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.rstrip().endswith("\\"):
                current.append(line.rstrip().removesuffix("\\").strip())
                continue
            current.append(TRAILING_COMMENT.sub("", line).strip())
            commands.append(" ".join(current))
            current = []
    return commands


def test_readme_commands_are_parsed() -> None:
    text = "x\n```sh\n# c\n\na && \\\n  b c   # why\nd 'e#f'\n```\ntext\n```sh\ng\n```\n"
    assert readme_commands(text) == ["a && b c", "d 'e#f'", "g"]


def test_every_readme_command_is_run_or_excluded() -> None:
    commands = readme_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert not set(RUN) & set(EXCLUDED)
    assert [c for c in commands if c not in RUN and c not in EXCLUDED] == []
    assert sorted(set(RUN) | set(EXCLUDED)) == sorted(commands)  # no stale entry


def _venv_without_torch(where: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)


@pytest.fixture(scope="module")
def readme_dir(tmp_path_factory: pytest.TempPathFactory, cpu_torch_wheel: Path) -> Path:
    """A directory holding what the README's commands name (module docstring)."""
    root = tmp_path_factory.mktemp("readme")
    (root / "examples").symlink_to(REPO / "examples")
    dist = root / "dist"
    dist.mkdir()
    vision = downloaded_wheel("torchvision==0.21.0", "torchvision-0.21.0-cp311-*.whl")
    for wheel in (cpu_torch_wheel, vision):
        (dist / wheel.name).symlink_to(wheel)
    _venv_without_torch(root / ".venv")
    fixtures = REPO / "tests" / "fixtures"
    shutil.copy(fixtures / "doctor" / "cmake-4-policy-minimum.log", root / "build.log")
    build = root / "home" / ".cache" / "torchsmith" / "builds" / "PLANHASH" / "src" / "build"
    build.mkdir(parents=True)
    log = fixtures / "report" / "debian-1.13.1-cpu-full" / "ninja_log.xz"
    (build / ".ninja_log").write_bytes(lzma.decompress(log.read_bytes()))
    return root


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize("command", list(RUN))
def test_readme_command_runs_as_written(readme_dir: Path, command: str) -> None:
    bindir = str(Path(sys.executable).parent)  # this checkout's torchsmith
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHSMITH_")}
    env |= {"HOME": str(readme_dir / "home"), "COLUMNS": "80"}
    env |= {"PATH": f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}"}
    env["XDG_CACHE_HOME"] = str(cache_dir() / "readme-xdg")
    argv = ["bash", "-c", command]
    done = subprocess.run(
        argv, check=False, cwd=readme_dir, env=env, capture_output=True, text=True
    )
    said = f"{command}\nrc {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert done.returncode in RUN[command], said
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, said
    if command.endswith("--json"):
        assert done.stdout.lstrip().startswith(("{", "[")), said
    if "--python .venv/bin/python" in command:  # found and asked, not "no such interpreter"
        assert "could not import torch" in done.stderr, said
