"""Issue 28 item 6 (trial I18, I19, I27): `image --wheels` takes only wheels the spec describes:
the torch release, the Python, a Linux platform, a readable zip without escaping members."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from torchsmith.container.prebuilt import check_prebuilt, wheel_problems
from torchsmith.errors import SpecError


def _wheel(folder: Path, name: str, members: tuple[str, ...] = ("torch/__init__.py",)) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as zf:
        for member in members:
            zf.writestr(member, "")
    return path


def _said(wheel: Path, torch: str = "2.6.0", python: str = "3.11") -> str:
    return " | ".join(p.what for p in wheel_problems(wheel, torch, python))


@pytest.mark.parametrize(
    "name",
    [
        "torch-2.6.0+cpu-cp311-cp311-linux_x86_64.whl",
        "torch-2.6.0-cp311-cp311-manylinux_2_28_aarch64.whl",
        "torchvision-0.21.0-cp39-abi3-manylinux_2_28_x86_64.whl",
        "filelock-3.16.1-py3-none-any.whl",
    ],
)
def test_wheels_of_the_spec_pass(tmp_path: Path, name: str) -> None:
    assert _said(_wheel(tmp_path, name)) == ""


def test_a_macos_wheel_of_another_release_and_python_is_refused(tmp_path: Path) -> None:
    """I18: macOS arm64 torch 2.6.0 cp311 for a torch 1.9.1 / Python 3.9 spec."""
    wheel = _wheel(tmp_path, "torch-2.6.0-cp311-none-macosx_11_0_arm64.whl")
    said = _said(wheel, torch="1.9.1", python="3.9")
    assert "macosx_11_0_arm64, not Linux" in said
    assert "is for cp311; the spec's Python 3.9 is cp39" in said
    assert "is torch 2.6.0; the spec asks for torch 1.9.1" in said


def test_random_bytes_are_refused(tmp_path: Path) -> None:
    """I19."""
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"\x00\x01random" * 100)
    assert "not a zip archive" in _said(wheel)


def test_escaping_members_are_refused(tmp_path: Path) -> None:
    """I27."""
    wheel = _wheel(tmp_path, "torch-2.6.0-cp311-cp311-linux_x86_64.whl", ("../../etc/x",))
    assert "escape the install directory" in _said(wheel)


def test_every_problem_is_named_at_once(tmp_path: Path) -> None:
    bad = [
        _wheel(tmp_path, "notawheel.whl"),
        _wheel(tmp_path, "torch-1.0-cp311-cp311-win_amd64.whl"),
    ]
    with pytest.raises(SpecError) as caught:
        check_prebuilt(bad, "2.6.0", "3.11")
    assert len(caught.value.problems) == 3  # a name; win_amd64 and torch 1.0


def test_main_or_a_commit_is_not_compared(tmp_path: Path) -> None:
    assert _said(_wheel(tmp_path, "torch-2.7.0a0-cp311-cp311-linux_x86_64.whl"), torch="main") == ""
