"""The process ends cleanly after py-rattler's async channel index (torchsmith/exiting.py).

py-rattler's tokio threads outlive its calls; a process that ends by the interpreter's normal
teardown right after ``index_fs`` aborts or segfaults in most runs (measured 2026-11-27 on the
2-core dev machine: 36 of 60 runs of a bare ``asyncio.run(index_fs(...))`` script; a CI rehearsal
of ``publish --to conda-channel:`` died so). Through :func:`exit_process`, which torchsmith's
entry points use, 0 of 60 did. Each run here is a real index of a real (empty) channel; with the
abort rate above, 8 runs all passing by chance would have a probability of about 0.4**8 < 0.1 %."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import atexit, sys
from pathlib import Path
from torchsmith.packaging.conda import index_channel
from torchsmith.exiting import exit_process
atexit.register(lambda: print("atexit ran", flush=True))
index_channel(Path(sys.argv[1]))
print("indexed", end="")
exit_process(3)
"""


def test_index_then_exit_process_never_aborts(tmp_path: Path) -> None:
    for run in range(8):
        channel = tmp_path / f"channel{run}"
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(channel)],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == 3, (run, done.returncode, done.stderr)
        assert done.stdout == "indexedatexit ran\n", done.stdout
        assert (channel / "noarch" / "repodata.json").is_file()
