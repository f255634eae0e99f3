"""Small display fixes from the new-user trial §2: inspect's unrecorded versions, doctor's tag
list, plan's source line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from torchsmith.cli import main
from torchsmith.commands.inspect import summary_table
from torchsmith.inspect.model import Inspection
from torchsmith.report.plan_view import print_plan
from torchsmith.verify.expect import load_plan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _rendered(renderable: object) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def test_inspect_says_why_cudnn_has_no_version_although_linked() -> None:
    """It showed `cuDNN / NCCL  — / —` while listing libcudnn.so.9 as NEEDED, and `… / ?`."""
    path = FIXTURES / "inspect" / "inspect-2.14.1-cu130-wheel.json"
    text = _rendered(summary_table(Inspection.model_validate_json(path.read_text())))
    cudnn = "version not recorded in the files (linked: see link cudnn)"
    assert f"{cudnn} / version not recorded in the files (linked: see link nccl)" in text
    assert "/ not recorded in the files" in text and "/ ?" not in text


def test_doctor_tags_say_each_word_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It read `(cmake-install-permission; install, install)`."""
    lines = (FIXTURES / "doctor" / "cmake-install-permission.log").read_text().splitlines()
    log = tmp_path / "build.log"
    log.write_text("".join(line + "\n" for line in lines if not line.startswith("#@ ")))
    main(["doctor", str(log)])
    assert "(cmake-install-permission; install)" in capsys.readouterr().out


def test_plan_source_line_names_a_bundle_once(capsys: pytest.CaptureFixture[str]) -> None:
    """It read `source: bundle PATH PATH`."""
    plan = load_plan(FIXTURES / "inspect" / "plans" / "plan-2.13.0-cpu.json")
    where = "/srv/torch-src.tar"
    bundle = plan.source.model_copy(update={"kind": "bundle", "location": where, "ref": where})
    print_plan(plan.model_copy(update={"source": bundle}))
    assert f"source: bundle {where}\n" in capsys.readouterr().out


def test_env_problems_print_data_without_markup_or_escapes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from torchsmith.commands.doctor import _show_problems
    from torchsmith.doctor.envcheck import EnvProblem

    what = "cannot run /opt/[bold]x\x1b]0;TITLE\x07: gone"
    _show_problems([EnvProblem(id="t", severity="error", what=what, fix="f", evidence=(what,))])
    text = capsys.readouterr().out
    assert text.count("cannot run /opt/[bold]x: gone") == 2 and "\x1b" not in text
