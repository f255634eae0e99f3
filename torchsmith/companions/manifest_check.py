"""``torchsmith verify <companion wheel> --plan <manifest>``: a companion wheel checked against
the manifest its build published (the record of that very wheel: the torch it pins, the torch
libraries it links with their C++ ABI and GPU code, what its repair left external and the
platform tag it measured), from the wheel's files alone — nothing is installed or run. Each
check is reported, passed or failed, as the torch wheel's are."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from torchsmith.companions.binary import check_binaries
from torchsmith.companions.verify import check_torch_pin
from torchsmith.companions.wheelcheck import check_repaired
from torchsmith.errors import TorchsmithError, VerifyError
from torchsmith.inspect.companion import inspect_companion_wheel
from torchsmith.verify.manifest_match import read_manifest
from torchsmith.verify.model import Check


def companion_record(wheel: Path, manifest: Path) -> Mapping[str, Any]:
    """The manifest's record of the companion ``wheel`` (by its file name)."""
    data = read_manifest(manifest)
    records = data.get("companions") if isinstance(data, dict) else None
    for record in records if isinstance(records, list) else []:
        if isinstance(record, dict) and record.get("artifact", {}).get("name") == wheel.name:
            return record
    raise VerifyError(
        f"{manifest} records no companion wheel named {wheel.name}",
        "give the manifest the build published beside this wheel (companions-<hash>."
        "manifest.json, or the torch build's manifest of a one-run build)",
    )


def _check(name: str, expected: str, run: Callable[[], object]) -> Check:
    try:
        found = run()
    except TorchsmithError as exc:
        return Check(name=name, ok=False, expected=expected, detail=exc.message)
    return Check(name=name, ok=True, expected=expected, actual=str(found))


def _binaries(wheel: Path, recorded: Mapping[str, Any], arch_list: str) -> object:
    links = frozenset(recorded.get("links", []))
    found = check_binaries(
        inspect_companion_wheel(wheel), links, recorded.get("cxx11_abi"), arch_list
    )
    if found.get("gpu") != recorded.get("gpu"):
        raise VerifyError(
            f"GPU code {found.get('gpu')}, the manifest records {recorded.get('gpu')}",
            "the wheel is not the one the manifest describes: verify the manifest published "
            "with it",
        )
    return f"links {', '.join(found['links'])}; C++11 ABI {found['cxx11_abi']}"


def _arch_list(recorded: Mapping[str, Any]) -> str:
    gpu = recorded.get("gpu") or {}
    sass = [s.removeprefix("sm_") for s in gpu.get("sass", [])]
    ptx = {p.removeprefix("compute_") for p in gpu.get("ptx", [])}
    entries = [f"{s[:-1]}.{s[-1]}" + ("+PTX" if s in ptx else "") for s in sass]
    return ";".join(entries)


def verify_companion(wheel: Path, manifest: Path) -> list[Check]:
    """Every check of the companion ``wheel`` against its record in ``manifest``."""
    record = companion_record(wheel, manifest)
    verified = record.get("verify") or {}
    pin = str(verified.get("requires_torch", ""))
    binaries = verified.get("binaries") or {}
    repair = record.get("repair") or {}
    tag = wheel.name.removesuffix(".whl").split("-")[-1]
    kept = list(repair.get("excluded", []))
    return [
        _check("requires torch", pin, lambda: check_torch_pin(wheel, pin.partition("==")[2])),
        _check("binaries", "as recorded", lambda: _binaries(wheel, binaries, _arch_list(binaries))),
        _check(
            "repaired",
            f"{repair.get('tag', 'a manylinux tag')}; no build-machine RPATH",
            lambda: check_repaired(wheel, tag, kept, repair.get("tag")),
        ),
    ]


def raise_if_failed(wheel: Path, checks: list[Check]) -> None:
    """Raise :class:`VerifyError` naming every failed check."""
    failed = [f"{c.name}: {c.detail}" for c in checks if c.ok is False and c.severity == "error"]
    if failed:
        raise VerifyError(
            f"{wheel.name} does not hold what its manifest records:\n  - " + "\n  - ".join(failed),
            "rebuild the companion with the same command (its repair and verify steps run again)",
        )
