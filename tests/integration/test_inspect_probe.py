"""The real interpreter probe must not import a ``torch/`` directory in the working directory
(``python -c`` puts the cwd first on sys.path). One short Python start: well under a second."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from torchsmith.errors import InspectError
from torchsmith.inspect.installed import probe
from torchsmith.proc import HOST

FAKE = """
__version__ = "0.0.0+fake-checkout"
class _C:
    pass
class __config__:
    @staticmethod
    def show():
        return "fake"
"""


def test_a_torch_checkout_in_the_cwd_is_not_what_is_probed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "torch"
    fake.mkdir()
    (fake / "__init__.py").write_text(FAKE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        data = probe(sys.executable, env, HOST, timeout=120)
    except InspectError as exc:  # no torch installed for this interpreter: the fake was skipped
        assert "could not import torch" in exc.message
        return
    assert data["version"] != "0.0.0+fake-checkout"
    assert not Path(data["file"]).resolve().is_relative_to(tmp_path.resolve())
