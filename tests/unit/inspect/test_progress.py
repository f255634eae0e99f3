"""inspect says what it is reading on stderr; stdout stays the result (round-3 trial §5: 12.5 s
with no output before the result)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from torchsmith.cli import main

LIB = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "libk_dyn.so"


def test_progress_goes_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel = tmp_path / "torch-9.9.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch/version.py", "__version__ = '9.9.0'\ncuda = '13.0'\n")
        zf.write(LIB, "torch/lib/libtorch_cuda.so")
        zf.writestr("torch-9.9.0.dist-info/WHEEL", "Tag: cp311-cp311-linux_x86_64\n")
    assert main(["inspect", str(wheel), "--json", "--cuobjdump", "none"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["sass"] == ["sm_80", "sm_90"]
    assert "reading 1 libraries" in err and "threads" in err


def test_two_libraries_of_one_name_are_shown_with_their_directories(tmp_path: Path) -> None:
    from torchsmith.commands.inspect import library_table
    from torchsmith.inspect import inspect_wheel

    wheel = tmp_path / "torch-9.9.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch/version.py", "__version__ = '9.9.0'\n")
        zf.write(LIB, "torch/_C.cpython-311-x86_64-linux-gnu.so")
        zf.write(LIB, "functorch/_C.cpython-311-x86_64-linux-gnu.so")
        zf.write(LIB, "torch/lib/libtorch_cuda.so")
    cells = list(library_table(inspect_wheel(wheel)).columns[0].cells)
    assert "functorch/_C.cpython-311-x86_64-linux-gnu.so" in cells
    assert "torch/_C.cpython-311-x86_64-linux-gnu.so" in cells and "libtorch_cuda.so" in cells
