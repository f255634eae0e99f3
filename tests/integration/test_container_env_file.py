"""The loader the container backend wraps commands in (container/env_file.py), run by a real
POSIX shell: the command sees the variables of the private file, the file is gone once read,
and a value with quotes, ``$(…)`` and a newline arrives byte for byte, unexpanded; then through
a real ``buildah run`` of a scratch container, as the container backend runs commands. ~4 s."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.canary import CmdlineWatch, TmpWatch, files_holding
from tests.resources import require_root, require_tool
from torchsmith.container import env_file, inside
from torchsmith.container.engines import EngineChoice, EngineProbe, Storage

CANARY = "proxyCANARY-d1e5"  # a canary, not a credential
TRICKY = "it's $(touch pwned) `id` \\ ;\nline2"


def test_the_shell_exports_the_file_and_deletes_it(tmp_path: Path) -> None:
    values = [("http_proxy", f"alice:{CANARY}@proxy.example:3128"), ("TRICKY", TRICKY)]
    file = env_file.write(tmp_path, values)
    keys = "('http_proxy', 'TRICKY')"
    code = f"import json, os; print(json.dumps({{k: os.environ.get(k) for k in {keys}}}))"
    argv = env_file.wrapped([sys.executable, "-c", code], file)
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=30, cwd=tmp_path, check=True
    )
    assert done.stdout.strip() == (
        '{"http_proxy": "alice:' + CANARY + '@proxy.example:3128", "TRICKY": '
        '"it\'s $(touch pwned) `id` \\\\ ;\\nline2"}'
    )
    assert not file.exists() and not (tmp_path / "pwned").exists()
    assert not any(CANARY in a for a in argv)


def _scratch_container(head: list[str], run: Callable[[list[str]], str]) -> str:
    """A container from scratch holding the host's dash (as /bin/sh), env and rm with their
    libraries: enough for the loader, no image download needed."""
    container = run([*head, "from", "scratch"]).strip()
    files = {"/usr/bin/env", "/bin/rm", "/bin/dash"}
    for binary in sorted(files):
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
        files |= {w for w in ldd.split() if w.startswith("/")}
    for path in sorted(files):
        run([*head, "copy", container, path, path])
    run([*head, "copy", container, "/bin/dash", "/bin/sh"])
    return container


def test_buildah_run_gets_the_environment_by_file(tmp_path: Path) -> None:
    """Real buildah (vfs store in this test's directory, chroot isolation), as the container
    backend runs it: the variables arrive, none is on buildah's argv, the file is gone."""
    buildah = require_tool("buildah", "apt-get install buildah")
    require_root("buildah with chroot isolation and a vfs store, as the container backend")
    storage = Storage(tmp_path / "store" / "root", tmp_path / "store" / "run")
    engine = EngineChoice(EngineProbe("buildah", buildah, True, None, False), "test", storage)
    head = list(inside.buildah_head(engine))

    def run(argv: list[str]) -> str:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-500:]
        return done.stdout

    container = _scratch_container(head, run)
    mount = tmp_path / "cache"
    mount.mkdir()
    proxy = ("http_proxy", f"alice:{CANARY}@proxy.example:3128")
    session = inside.Session(tuple(head), container, (mount,), (proxy,))
    try:
        argv = session.run_argv(["/usr/bin/env"], {"TORCHSMITH_TORCH": "2.6.0", "TRICKY": TRICKY})
        assert not any(CANARY in a for a in argv)
        with CmdlineWatch(CANARY) as watch, TmpWatch(CANARY) as tmp:  # none on argv or in /tmp
            shown = run(argv)
        assert watch.scans > 0 and watch.seen == [] and tmp.holding() == [], watch.seen
    finally:
        run(session.remove_argv())
    assert files_holding(CANARY, [tmp_path]) == []  # store, mount, env file dir: nothing kept
    assert f"http_proxy=alice:{CANARY}@proxy.example:3128\n" in shown
    assert "TORCHSMITH_TORCH=2.6.0\n" in shown and f"TRICKY={TRICKY}\n" in shown
    assert list((mount / env_file.DIR_NAME).iterdir()) == []
