"""Smoke tests in a fresh environment: make a venv, install the wheel, import torch and run the
tests of :mod:`torchsmith.verify.smoke_script` — every command through the runner of
:class:`SmokeOptions` (the build's executor, or this machine)."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from torchsmith.errors import HostError, ToolError, UsageError
from torchsmith.interpreter import invocable
from torchsmith.proc import relevant_lines
from torchsmith.runner import Runner
from torchsmith.verify.model import Check
from torchsmith.verify.smoke_script import SMOKE_SCRIPT

MARK = "TORCHSMITH_SMOKE "
Say = Callable[[str], None]


def _quiet(_text: str) -> None:
    return None


SmokeMode = Literal["venv", "venv-system", "interpreter"]


@dataclass(frozen=True)
class SmokeOptions:
    """How to run the smoke tests.

    ``mode``: ``venv`` — a fresh venv from ``python``, the wheel installed into it (with its
    dependencies, from pip's configured indexes, unless ``deps`` is False); ``venv-system`` — a
    fresh venv that also sees ``python``'s site-packages (for machines without network: the
    dependencies, or the torch itself, come from there); ``interpreter`` — run in ``python`` as
    it is (an installed torch). ``gpu``: ``auto`` runs the GPU tests when a GPU is visible."""

    python: str
    workdir: Path
    runner: Runner
    """Where the commands run (the build's executor; this machine: ``proc.HOST``)."""
    mode: SmokeMode = "venv"
    deps: bool = True
    gpu: Literal["auto", "yes", "no"] = "auto"


def _failed(name: str, exc: ToolError) -> Check:
    excerpt = " | ".join(exc.excerpt[-4:])
    return Check(name=name, ok=False, detail=f"{exc.message}: {excerpt}"[:500])


_SITE = "import site, sys; print(chr(10).join([*site.getsitepackages(), *sys.path[1:]]))"


def _link_base_site(base: str, venv: Path, env: Mapping[str, str], runner: Runner) -> None:
    """Make the venv see the base interpreter's packages even when that interpreter is itself
    a venv (``--system-site-packages`` would then reach the venv's *base*, not the venv)."""
    done = runner.capture([base, "-c", _SITE], env=env, timeout=60)
    dirs = [d for d in dict.fromkeys(done.stdout.splitlines()) if d.endswith("-packages")]
    for site_dir in venv.glob("lib/python*/site-packages"):
        (site_dir / "_torchsmith_base_site.pth").write_text("\n".join(dirs) + "\n")


def _make_venv(argv: list[str], env: Mapping[str, str], log: Path, runner: Runner) -> None:
    """The venv the wheel goes into; a base interpreter that cannot make one is the machine's
    (or the flag's) problem, not the wheel's."""
    try:
        runner.run(argv, env=env, log_path=log)
    except (ToolError, OSError) as exc:
        why = " | ".join(exc.excerpt[-2:]) if isinstance(exc, ToolError) else str(exc)
        raise HostError(
            f"the smoke test's base interpreter {argv[0]} could not make a venv "
            f"({why or 'no output'}); the wheel was not tried",
            "give --smoke-python a Python with the venv module (Debian: apt-get install "
            "python3-venv), or pass --no-smoke",
        ) from exc


_PIP_STEPS = ("Collecting ", "Downloading ", "Installing collected", "Successfully installed")


def _pip_progress(say: Say) -> Callable[[str], None]:
    """pip's own step lines (a download per dependency: about one every few seconds while the
    2.7 GB of nvidia-* wheels come), passed on so a piped verify is not silent for minutes."""

    def on_line(line: str) -> None:
        text = line.strip()
        if text.startswith(_PIP_STEPS):
            say(f"  pip: {text[:160]}")

    return on_line


BEAT = 10.0
"""Seconds without a line while pip runs before 'still installing' is said: one 660 MB
nvidia-cudnn download, or unpacking 2.7 GB of them, says nothing for a minute or more when piped
(issue 28 item 9: 290 s of silence)."""


@contextmanager
def _pip_beat(say: Say) -> Iterator[Callable[[str], None]]:
    """pip's step lines (:func:`_pip_progress`), and a line every :data:`BEAT` seconds in which
    nothing was said, until the block ends."""
    start = said_at = time.monotonic()
    stop = threading.Event()

    def said(text: str) -> None:
        nonlocal said_at
        said_at = time.monotonic()
        say(text)

    def beat() -> None:
        while not stop.wait(BEAT / 4):
            if time.monotonic() - said_at >= BEAT:
                said(f"  pip: still installing ({time.monotonic() - start:.0f} s)")

    thread = threading.Thread(target=beat, name="pip-beat", daemon=True)
    thread.start()
    try:
        yield _pip_progress(said)
    finally:
        stop.set()
        thread.join()


def check_workdir(workdir: Path) -> Path:
    """``--workdir``: a directory this user can write, checked before any work starts."""
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=workdir):
            pass
    except OSError as exc:
        raise UsageError(
            f"--workdir {workdir}: cannot write there ({exc.strerror or exc})",
            "give --workdir a directory you can write, or leave it out (a temporary one)",
        ) from exc
    return workdir


def _prepare(
    wheel: Path | None, opts: SmokeOptions, env: Mapping[str, str], say: Say = _quiet
) -> str:
    """The interpreter to test with (a fresh venv unless mode is 'interpreter')."""
    if opts.mode == "interpreter":
        return invocable(opts.python)  # the tests run in the workdir: a relative path breaks
    venv = opts.workdir / "venv"
    log = opts.workdir / "smoke.log"
    extra = ["--system-site-packages"] if opts.mode == "venv-system" else []
    say(f"making a fresh venv from {opts.python} ({venv})")
    _make_venv([opts.python, "-m", "venv", "--clear", *extra, str(venv)], env, log, opts.runner)
    python = str(venv / "bin" / "python")
    if opts.mode == "venv-system":
        _link_base_site(opts.python, venv, env, opts.runner)
    if wheel is not None:
        deps = "with its dependencies" if opts.deps else "without dependencies"
        say(f"pip install {wheel.name} into it ({deps}; the longest part)")
        nodeps = [] if opts.deps else ["--no-deps"]
        argv: list[str | Path] = [
            python,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--progress-bar",
            "off",
            *nodeps,
            wheel,
        ]
        with _pip_beat(say) as on_line:
            opts.runner.run(argv, env=env, log_path=log, on_line=on_line)
    return python


def _check(line: str) -> Check:
    data = json.loads(line.removeprefix(MARK))
    return Check(
        name=data["name"],
        ok=data["ok"],
        actual=data["detail"] if data["ok"] else "",
        detail="" if data["ok"] else data["detail"],
        seconds=data["seconds"],
    )


def _parse(lines: tuple[str, ...]) -> list[Check]:
    return [_check(line) for line in lines if line.startswith(MARK)]


def _each_result(say: Say) -> Callable[[str], None]:
    """An ``on_line`` that says each smoke test's result as the script prints it."""

    def on_line(line: str) -> None:
        if line.startswith(MARK):
            check = _check(line.rstrip("\n"))
            result = "ok" if check.ok else "FAILED"
            say(f"  {check.name}: {result} ({check.seconds or 0:.1f} s)")

    return on_line


def run_smoke(
    wheel: Path | None, opts: SmokeOptions, env: Mapping[str, str], say: Say = _quiet
) -> list[Check]:
    """One :class:`Check` per smoke test; set-up failures become a failed check, never a crash.
    ``say`` hears each phase and each test's result as it happens (20-50 s in all)."""
    opts.workdir.mkdir(parents=True, exist_ok=True)
    try:
        python = _prepare(wheel, opts, env, say)
    except ToolError as exc:
        return [_failed("install", exc)]
    say(f"running the smoke tests in {python}")
    done = opts.runner.run(
        [python, "-c", SMOKE_SCRIPT, str(opts.workdir), opts.gpu],
        env=env,
        cwd=opts.workdir,
        log_path=opts.workdir / "smoke.log",
        check=False,
        on_line=_each_result(say),
    )
    checks = _parse(done.tail)
    if done.returncode != 0 and all(c.ok for c in checks):
        tail = " | ".join(relevant_lines(list(done.tail))[-4:])
        checks.append(Check(name="smoke run", ok=False, detail=f"exit {done.returncode}: {tail}"))
    return checks
