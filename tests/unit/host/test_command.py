"""`torchsmith host` (rich tables and --json) and probe_host's never-crash promise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchsmith import cli, proc
from torchsmith.commands import host as host_cmd
from torchsmith.host import HostFacts
from torchsmith.host.probe import probe_host
from torchsmith.proc import HOST

DEV = Path(__file__).resolve().parents[2] / "fixtures" / "device-h100"


def cannot_run(*args: Any, **kwargs: Any) -> Any:
    raise PermissionError(13, "Permission denied")


@pytest.fixture
def device_host(monkeypatch: pytest.MonkeyPatch) -> HostFacts:
    facts = HostFacts.model_validate_json((DEV / "torchsmith-host.json").read_text())
    facts = facts.model_copy(update={"warnings": ["[odd] cmake: cannot read a version"]})
    monkeypatch.setattr(host_cmd, "probe_host", lambda env, disk_path, runner, versions: facts)
    return facts


def test_host_json_is_host_facts(
    device_host: HostFacts, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["host", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert HostFacts.model_validate(data) == device_host
    assert data["gpus"][0]["compute_capability"] == "9.0"


def test_host_tables(device_host: HostFacts, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["host"]) == 0
    text = capsys.readouterr().out
    for expected in ("NVIDIA H100 80GB HBM3", "gcc-12", "clang-16", "9.19.0", "580.159.04"):
        assert expected in text
    assert "warning: [odd] cmake: cannot read a version" in text  # not eaten as markup


def test_probe_host_never_crashes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every command fails (as if nothing could run): facts from files, warnings, no crash."""

    monkeypatch.setattr(proc, "capture", cannot_run)
    bin_ = tmp_path / "bin"
    for name in ("gcc", "cmake", "nvcc", "python3"):
        (bin_ / name).parent.mkdir(exist_ok=True)
        (bin_ / name).write_text("")
        (bin_ / name).chmod(0o755)
    facts = probe_host({"PATH": str(bin_)}, tmp_path, runner=HOST)
    assert facts.cores >= 1
    assert facts.disk_path == str(tmp_path)
    assert facts.tools["cmake"].version is None
    assert any(w.startswith("cannot run") and "gcc" in w for w in facts.warnings)
    assert any("cmake" in w for w in facts.warnings)


def test_probe_host_survives_a_probe_bug(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def broken(env: Any, runner: Any) -> Any:
        raise ValueError("a bug")

    monkeypatch.setattr("torchsmith.host.probe.probe_compilers", broken)
    monkeypatch.setattr(proc, "capture", cannot_run)
    facts = probe_host({"PATH": ""}, tmp_path, runner=HOST)
    assert facts.compilers == []
    assert "compilers probe failed: ValueError: a bug" in facts.warnings
