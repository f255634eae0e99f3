"""The loader the container backend wraps commands in (container/env_file.py), run by a real
POSIX shell: the command sees the variables of the private file, the file is gone once read,
and a value with quotes, ``$(…)`` and a newline arrives byte for byte, unexpanded. (Inside the
container it is the image's /bin/sh; here the host's, which is the same dash on Debian.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from torchsmith.container import env_file

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
