"""A companion's repair step: auditwheel with torch's own libraries left external (the
companion loads the torch it was built against) besides the driver, its repaired wheel
recorded, and a rerun that takes the repaired wheel of the same compiled wheel."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.unit.steps.companion.rig import FETCHED, TORCH_LIBS, companion_rig, companion_wheel
from torchsmith.steps.companion import repair


def test_torch_libraries_and_the_driver_stay_external(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    skip = repair.excluded(rig.ctx, TORCH_LIBS, companion_wheel(tmp_path / "wheels"))
    assert skip[:2] == ["libcuda.so.1", "libnvidia-ml.so.1"]
    assert skip[2:] == sorted(TORCH_LIBS)


def test_the_wheels_own_libraries_are_not_looked_for(tmp_path: Path) -> None:
    """torchaudio 2.6.0's _torchaudio.so needs lib/libtorchaudio.so, which no RPATH names
    (torchaudio loads it by path first): auditwheel failed 'could not be located' on the real
    CUDA build (CI rehearsal, 2026-11-27) — the wheel's own libraries are excluded."""
    wheel = tmp_path / "torchaudio-2.6.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for member in (
            "torchaudio/lib/libtorchaudio.so",
            "torchaudio/lib/_torchaudio.so",
            "torchaudio/lib/libctc_prefix_decoder.so.1",
            "torchaudio/__init__.py",
        ):
            zf.writestr(member, b"")
    assert repair.own_libraries(wheel) == ["libctc_prefix_decoder.so.1", "libtorchaudio.so"]
    rig = companion_rig(tmp_path)
    skip = repair.excluded(rig.ctx, TORCH_LIBS, wheel)
    assert skip[-2:] == ["libctc_prefix_decoder.so.1", "libtorchaudio.so"]


def test_the_repaired_wheel_is_recorded_and_reused(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    assert rig.state.companions is not None
    made = rig.state.companions.of("torchvision")
    made.built, made.source = companion_wheel(tmp_path / "wheels"), dict(FETCHED)
    repair.run(rig.ctx, rig.state, "torchvision")
    [audit] = [argv for argv in rig.executor.ran if "auditwheel" in argv]
    assert audit[3:6] == ["repair", "--plat", "auto"]
    assert "libc10.so" in audit and "libcuda.so.1" in audit and audit[-1] == str(made.built)
    assert made.repair is not None and made.wheel is not None
    assert made.wheel.parent == rig.ctx.workspace.root / "companions" / "torchvision" / "repaired"
    assert made.repair["excluded"][-1] == "libtorch_cpu.so"
    assert made.repair["normalised"]["source_date_epoch"] == FETCHED["epoch"]  # its fetch's
    marker = json.loads(rig.ctx.workspace.marker("torchvision-repair").read_text())
    assert marker["repaired"] == str(made.wheel)

    rig.executor.ran.clear()
    made.wheel = made.repair = None
    repair.run(rig.ctx, rig.state, "torchvision")
    assert rig.executor.ran == [] and made.wheel is not None  # the same compiled wheel
    assert "repaired by an earlier run" in " ".join(rig.reporter.lines)


def test_the_platform_tag_is_read_from_the_file_name() -> None:
    name = Path("torchvision-0.21.0-cp311-cp311-manylinux_2_34_x86_64.whl")
    assert repair.platform_tag(name) == "manylinux_2_34_x86_64"
