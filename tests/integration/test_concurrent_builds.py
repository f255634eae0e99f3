"""M4 with real processes: one writer per workspace (a second run of the plan is refused with
the holder's pid, or gets in once the holder exits, also when it was SIGKILLed), and two runs
fetching the same tarball at once both get the complete tree without deleting each other's
staging directory."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan
from torchsmith.workspace import prepare_workspace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLAN = FIXTURES / "build" / "plan-debian-1.13.1-c10.json"
TOOLS = {"cmake": "cmake version 3.25.1"}

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from torchsmith.plan_model import BuildPlan
    from torchsmith.workspace import prepare_workspace
    plan = BuildPlan.model_validate_json(Path(sys.argv[2]).read_text())
    ws = prepare_workspace(Path(sys.argv[1]), plan, {"cmake": "cmake version 3.25.1"}, print)
    (ws.root / "src").mkdir(exist_ok=True)
    print("ready", flush=True)
    time.sleep(float(sys.argv[3]))
    """
)

FETCHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from torchsmith.plan_model import SourcePlan
    from torchsmith.proc import HOST
    from torchsmith.sources import fetch_source
    plan = SourcePlan(kind="tarball", location=sys.argv[2], ref="", reason="test")
    tree = fetch_source(plan, Path(sys.argv[1]), {"PATH": "/usr/bin:/bin"}, runner=HOST)
    print(tree.identity, tree.root, sum(1 for _ in tree.root.rglob("*")), flush=True)
    """
)


def _holder(cache: Path, seconds: float) -> subprocess.Popen[str]:
    argv = [sys.executable, "-c", HOLDER, str(cache), str(PLAN), str(seconds)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "ready":
            return child
    pytest.fail(f"the holder process exited with {child.wait()} before taking the workspace")


@pytest.fixture
def plan() -> BuildPlan:
    return BuildPlan.model_validate_json(PLAN.read_text())


def test_a_second_process_is_refused_then_gets_in_after_a_kill(
    tmp_path: Path, plan: BuildPlan
) -> None:
    child = _holder(tmp_path, 60)
    try:
        with pytest.raises(
            HostError, match=rf"in use by another torchsmith run \(pid {child.pid}\)"
        ):
            prepare_workspace(tmp_path, plan, TOOLS, lambda _: None, wait_s=0.5)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.stdout is not None
        child.stdout.close()
    said: list[str] = []
    ws = prepare_workspace(tmp_path, plan, TOOLS, said.append, wait_s=0.5)  # stale lock: fine
    assert said == [f"resuming in {ws.root}"] and (ws.root / "src").is_dir()
    ws.release()


def test_a_second_process_waits_for_a_short_holder(tmp_path: Path, plan: BuildPlan) -> None:
    child = _holder(tmp_path, 1.0)
    start = time.monotonic()
    ws = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None, wait_s=30)
    waited = time.monotonic() - start
    assert child.wait() == 0
    assert child.stdout is not None
    child.stdout.close()
    assert 0.3 < waited < 30
    ws.release()


def _big_tarball(tmp_path: Path) -> Path:
    """A source tarball of 3000 files, so that unpacking takes a noticeable time."""
    tree = tmp_path / "pytorch-v2.5.1"
    for i in range(30):
        sub = tree / "aten" / f"d{i}"
        sub.mkdir(parents=True)
        for j in range(100):
            (sub / f"f{j}.cpp").write_text(f"// {i} {j}\n" * 50)
    (tree / "setup.py").write_text("print('setup')\n")
    archive = tmp_path / "pytorch-v2.5.1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, arcname=tree.name)
    return archive


def test_two_processes_fetch_one_tarball_at_once(tmp_path: Path) -> None:
    archive = _big_tarball(tmp_path)
    cache = tmp_path / "sources"
    argv = [sys.executable, "-c", FETCHER, str(cache), str(archive)]
    children = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [child.communicate(timeout=300)[0].split() for child in children]
    assert [child.returncode for child in children] == [0, 0]
    assert outputs[0] == outputs[1]
    assert outputs[0][2] == str(1 + 30 * 101 + 1)  # aten/, 30 dirs of 100 files, setup.py
    leftovers = list(cache.rglob("*.partial-*"))
    assert leftovers == []
    assert os.path.isdir(outputs[0][1])


def test_two_processes_making_one_new_workspace_take_turns(tmp_path: Path) -> None:
    """Neither sees the other's half-made directory as foreign: the second waits its turn."""
    argv = [sys.executable, "-c", HOLDER, str(tmp_path), str(PLAN), "0.3"]
    for _ in range(5):
        children = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
        said = [child.communicate(timeout=60)[0] for child in children]
        assert [child.returncode for child in children] == [0, 0], said
        shutil.rmtree(tmp_path / "builds")
