"""A repaired companion wheel, read from its files: no build-machine RPATH, every library it
needs bundled, torch's or allowed by its manylinux policy, and a manylinux tag. The ELF members
are real (tests/fixtures/companions/elf/README.md)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from torchsmith.companions.wheelcheck import (
    Library,
    check_external,
    check_repaired,
    check_rpaths,
    check_tag,
    libraries,
    system_allowed,
)
from torchsmith.errors import VerifyError

ELF = Path(__file__).resolve().parents[2] / "fixtures" / "companions" / "elf"
BUILT = "torchvision-0.21.0-cp311-cp311-linux_x86_64.whl"
REPAIRED = "torchvision-0.21.0-cp311-cp311-manylinux_2_34_x86_64.whl"


def wheel(where: Path, name: str, members: dict[str, str]) -> Path:
    path = where / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torchvision/__init__.py", "")
        for member, fixture in members.items():
            zf.write(ELF / fixture, member)
    return path


def built(where: Path) -> Path:
    return wheel(where, BUILT, {"torchvision/image.so": "image-build.so"})


def repaired(where: Path) -> Path:
    members = {
        "torchvision/image.so": "image-repaired.so",
        "torchvision.libs/libjpeg-0f1e2d3c.so.62": "libjpeg-0f1e2d3c.so.62",
    }
    return wheel(where, REPAIRED, members)


def test_the_wheel_pip_made_carries_the_build_machines_runpath(tmp_path: Path) -> None:
    [lib] = libraries(built(tmp_path))
    assert lib.member == "torchvision/image.so"
    assert lib.foreign_rpath == ("/root/.pyenv/versions/3.11.7/lib",)  # $ORIGIN is kept
    with pytest.raises(VerifyError, match=r"image.so: /root/.pyenv/versions/3.11.7/lib"):
        check_rpaths([lib])


def test_the_system_libjpeg_is_neither_bundled_nor_allowed(tmp_path: Path) -> None:
    libs = libraries(built(tmp_path))
    with pytest.raises(VerifyError, match=r"needs libjpeg.so.62 .*manylinux_2_34_x86_64"):
        check_external(libs, "manylinux_2_34_x86_64", [])
    assert check_external(libs, "manylinux_2_34_x86_64", ["libjpeg.so.*"]) == []  # kept


def test_the_repaired_wheel_passes_every_check(tmp_path: Path) -> None:
    found = check_repaired(repaired(tmp_path), "manylinux_2_34_x86_64", [], None)
    assert found == {
        "tag": "manylinux_2_34_x86_64",
        "rpath_checked": 2,
        "bundled": ["torchvision.libs/libjpeg-0f1e2d3c.so.62"],
    }


def test_a_linux_tag_passes_only_when_the_repair_recorded_it() -> None:
    assert check_tag("manylinux_2_17_x86_64.manylinux2014_x86_64", None).startswith("many")
    assert check_tag("linux_x86_64", "linux_x86_64") == "linux_x86_64"
    with pytest.raises(VerifyError, match="not a manylinux one"):
        check_tag("linux_x86_64", None)


def test_the_policy_lists_are_auditwheels_own() -> None:
    assert {"libc.so.6", "libstdc++.so.6", "libz.so.1"} <= system_allowed("manylinux_2_34_x86_64")
    assert "libjpeg.so.62" not in system_allowed("manylinux_2_34_x86_64")
    assert system_allowed("manylinux2014_x86_64") == system_allowed("manylinux_2_17_x86_64")
    assert system_allowed("linux_x86_64") == frozenset()


def test_the_dynamic_loader_is_always_the_systems() -> None:
    """Debian's libjpeg/libpng name ld-linux-x86-64.so.2 among their NEEDED (the real repair
    of torchvision 0.21.0 failed verify on it); auditwheel never grafts the loader either."""
    lib = Library("torchvision.libs/libpng16-1a2b.so.16", ("ld-linux-x86-64.so.2", "libc.so.6"), ())
    assert check_external([lib], "manylinux_2_34_x86_64", []) == [
        "torchvision.libs/libpng16-1a2b.so.16"
    ]
