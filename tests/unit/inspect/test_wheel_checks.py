"""A file that is not the torch wheel it claims to be is refused by name; the tags reported are
the file name's, which pip matches (round-3 trial N03, N04, N05, B12, and the official 2.6.0
wheel shown as 'no manylinux tag')."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from torchsmith.errors import InspectError
from torchsmith.inspect import inspect_wheel
from torchsmith.inspect.wheel_checks import check_platform, check_versions

LIB = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "libk_dyn.so"


def _wheel(
    tmp_path: Path,
    *,
    name: str = "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl",
    version_py: str = "2.6.0+cu124",
    metadata: str = "2.6.0",
    extra: tuple[str, ...] = (),
    link: bool = False,
) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch/version.py", f"__version__ = '{version_py}'\ncuda = '12.4'\n")
        if link:
            info = zipfile.ZipInfo("torch/lib/libtorch_cpu.so")
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "libtorch_cpu.so.1")
        else:
            zf.write(LIB, "torch/lib/libtorch_cuda.so")
        for member in extra:
            zf.writestr(member, "x")
        # the official 2.6.0 wheel's WHEEL file says linux_x86_64, its name manylinux1
        zf.writestr("torch-2.6.0.dist-info/WHEEL", "Tag: cp311-cp311-linux_x86_64\n")
        zf.writestr("torch-2.6.0.dist-info/METADATA", f"Name: torch\nVersion: {metadata}\n")
    return path


def test_the_tags_are_the_file_names(tmp_path: Path) -> None:
    insp = inspect_wheel(_wheel(tmp_path))
    assert insp.wheel is not None
    assert insp.wheel.tags == ["cp311-cp311-manylinux1_x86_64"]
    assert insp.wheel.glibc_allowed == "2.5"


@pytest.mark.parametrize("member", ["../../../../tmp/evil", "/etc/evil", "torch/../../x"])
def test_members_that_escape_are_refused(tmp_path: Path, member: str) -> None:
    with pytest.raises(InspectError, match=r"1 member\(s\) escape the install directory"):
        inspect_wheel(_wheel(tmp_path, extra=(member,)))


def test_a_symlink_member_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InspectError, match=r"are symlinks: 'torch/lib/libtorch_cpu.so'"):
        inspect_wheel(_wheel(tmp_path, link=True))


def test_versions_that_disagree_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InspectError, match=r"METADATA says 9\.9\.9"):
        inspect_wheel(_wheel(tmp_path, version_py="9.9.9", metadata="9.9.9"))
    with pytest.raises(InspectError, match=r"torch/version\.py says 9\.9\.9"):
        check_versions(Path("torch-2.6.0-cp311-cp311-linux_x86_64.whl"), "2.6.0", "9.9.9")
    check_versions(Path("torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl"), "2.13.0+cpu", None)
    check_versions(Path("odd-name.whl"), "2.6.0", "2.6.0+cu124")


def test_a_macos_wheel_is_named_before_anything_is_read(tmp_path: Path) -> None:
    name = "torch-2.6.0-cp311-none-macosx_11_0_arm64.whl"
    with pytest.raises(InspectError, match=r"is a macOS wheel; torchsmith reads Linux"):
        inspect_wheel(_wheel(tmp_path, name=name))
    check_platform(Path("torch-2.6.0-cp311-cp311-manylinux_2_28_aarch64.whl"))


def test_a_companion_wheel_with_escaping_members_is_refused(tmp_path: Path) -> None:
    from torchsmith.inspect.companion import inspect_companion_wheel

    path = tmp_path / "torchvision-0.21.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torchvision-0.21.0.dist-info/METADATA", "Name: torchvision\n")
        zf.writestr("../../etc/cron.d/x", "x")
    with pytest.raises(InspectError, match="escape the install directory"):
        inspect_companion_wheel(path)


HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"


@pytest.mark.parametrize("command", ["plan", "build"])
def test_against_a_wheel_that_disagrees_about_its_version_stops_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Trial B12: `build --with torchvision --against` a wheel named 2.6.0 whose METADATA says
    9.9.9 went on to companion-env and failed there with a child's traceback (exit 10)."""
    from torchsmith.cli import main

    wheel = _wheel(tmp_path, version_py="9.9.9+cpu", metadata="9.9.9")
    argv = [command, "--with", "torchvision", "--against", str(wheel), "--cpu"]
    argv += ["--source", "debian", "--host-facts", str(HOST)]
    if command == "build":
        argv += ["--cache-root", str(tmp_path / "c"), "--output-dir", str(tmp_path / "d")]
    assert main(argv) == 12
    assert "disagrees with itself about its version" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
