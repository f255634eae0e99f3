"""Where the companions' venvs get their torch: the exact wheel, installed ``--no-deps`` (a wheel
``--against`` names, or the one this build published), or — ``--against python:PATH`` — the
torch that interpreter already imports, made visible read-only through a ``.pth`` file naming its
site directories. The user's environment is never written to: torchsmith's own venvs (made from
that same interpreter, so the same Python) hold the build tools and the companion wheels; pip
sees the interpreter's torch there and keeps it."""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

PTH = "torchsmith-against.pth"
ASK_SITE = (
    "import json, os, sys, torch; print(json.dumps({'torch_dir': os.path.dirname(torch.__file__),"
    " 'version': torch.__version__, 'site': [p for p in sys.path if os.path.isdir(p) and "
    "os.path.basename(p) in ('site-packages', 'dist-packages')]}))"
)


@dataclass(frozen=True)
class TorchSource:
    """The torch a companion is built and smoke-tested against."""

    creator: str
    """The interpreter that makes the venvs (the plan's Python, or the --against one)."""
    wheel: Path | None
    """The torch wheel installed --no-deps into each venv; None: ``site`` instead."""
    site: tuple[str, ...] = ()
    """The interpreter's site directories (``--against python:PATH``)."""
    libs: frozenset[str] = frozenset()
    """The shared libraries in torch/lib/ (what a companion may link)."""

    def describe(self) -> str:
        if self.wheel is not None:
            return f"{self.wheel.name} --no-deps"
        return f"the torch of {self.creator} (read-only, through {PTH})"

    def key(self) -> dict[str, object]:
        """What the build env is made for (its marker): another torch means a new env."""
        return {"interpreter": self.creator, "site": list(self.site)}


def of_wheel(wheel: Path, creator: str) -> TorchSource:
    with zipfile.ZipFile(wheel) as zf:
        libs = {n.rsplit("/", 1)[-1] for n in zf.namelist() if n.startswith("torch/lib/")}
    return TorchSource(creator=creator, wheel=wheel, libs=frozenset(libs - {""}))


def of_interpreter(python: str, answer: str) -> TorchSource:
    """From the interpreter's answer to :data:`ASK_SITE`."""
    facts = json.loads(answer)
    lib = Path(facts["torch_dir"]) / "lib"
    libs = frozenset(p.name for p in lib.iterdir()) if lib.is_dir() else frozenset()
    return TorchSource(creator=python, wheel=None, site=tuple(facts["site"]), libs=libs)


def link(source: TorchSource, venv: Path) -> None:
    """Make the interpreter's site directories visible in ``venv`` (after its own)."""
    if not source.site:
        return
    for site in (venv / "lib").glob("python*/site-packages"):
        (site / PTH).write_text("".join(f"{d}\n" for d in source.site), encoding="utf-8")


def install_args(source: TorchSource) -> list[str | Path]:
    """What a venv installs for its torch (nothing when it sees the interpreter's)."""
    return [source.wheel] if source.wheel is not None else []
