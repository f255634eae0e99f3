"""Tables never cut the values people copy (new-user trial §2, §8 #5): at 80 columns, output
not a terminal (as when piped), a table that does not fit becomes `header: value` lines."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from torchsmith import console
from torchsmith.cli import main
from torchsmith.console import print_table, shown, table

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
HOST = FIXTURES / "plan" / "host-ci.json"


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console.out, "_width", 80)


def _lines(text: str) -> list[str]:
    return [line.strip(" │┃") for line in text.splitlines()]


def test_plan_at_80_columns_keeps_the_arch_list_whole(
    narrow: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["plan", "--torch", "2.5.1", "--cuda", "12.4", "--gpu", "official"]
    argv += ["--host-facts", str(HOST)]
    assert main([*argv, "--json"]) == 0
    env = {e["name"]: e["value"] for e in json.loads(capsys.readouterr().out)["env"]}
    archs = env["TORCH_CUDA_ARCH_LIST"]
    assert len(archs) > 20  # long enough that a cell at 80 columns used to cut it
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "…" not in text
    assert any(line.endswith(f"value: {archs}") for line in _lines(text))


def test_list_rules_at_80_columns_keeps_ids_and_sources(
    narrow: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--list-rules", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert main(["doctor", "--list-rules"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert "…" not in "".join(lines)
    for rule in rules:
        assert rule["id"] in lines
        assert f"learned from: {rule['source']}" in lines


def test_inspect_at_80_columns_keeps_library_names(
    narrow: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "torch-9.9.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch/version.py", "__version__ = '9.9.0+cu130'\ncuda = '13.0'\n")
        zf.write(FIXTURES / "inspect" / "libk_dyn.so", "torch/lib/libtorch_cuda_linalg.so")
    assert main(["inspect", str(wheel), "--cuobjdump", "none"]) == 0
    text = capsys.readouterr().out
    assert "…" not in text
    assert "libtorch_cuda_linalg.so" in _lines(text)
    assert re.search(r"NEEDED \(not bundled\): .*libcudart\.so\.13", text)


def test_a_table_that_fits_stays_a_table(narrow: None, capsys: pytest.CaptureFixture[str]) -> None:
    grid = table("small", "a", "b")
    grid.add_row("1", "2")
    print_table(grid)
    assert "┃ a" in capsys.readouterr().out


def test_shown_strips_terminal_codes_and_markup() -> None:
    assert shown("v\x1b]52;c;T1dORUQ=\x1b\\1.0 [bold]x") == "v1.0 \\[bold]x"
