"""Security review f1b4bec M2: the plan (text and --json) shows the commit the git fetch will
insist on for every release, the default included, or a warning where none is recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchsmith import kb
from torchsmith.cli import main
from torchsmith.errors import SpecError
from torchsmith.spec_sources import resolve_spec

HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"
A8D = "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"  # v2.5.1 in the knowledge base


def _plan(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[str, dict[str, Any]]:
    args = ["plan", "--cpu", "--host-facts", str(HOST), *flags]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


def _fetch_step(data: dict[str, Any]) -> str:
    return str(next(s["what"] for s in data["steps"] if s["name"] == "fetch"))


def test_a_recorded_release_shows_the_commit_the_fetch_insists_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, data = _plan(capsys, "--torch", "2.5.1")
    assert f"must be commit {A8D}" in text
    assert _fetch_step(data).endswith(f"must be commit {A8D}")
    assert not [w for w in data["warnings"] if "not pinned" in w or "no commit" in w]


def test_a_commit_given_as_torch_pins_itself(capsys: pytest.CaptureFixture[str]) -> None:
    _text, data = _plan(capsys, "--torch", A8D)
    assert f"must be commit {A8D}" in _fetch_step(data)


def test_the_default_release_without_a_commit_is_said_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, data = _plan(capsys)
    tag = data["source"]["ref"]  # the default: the KB's newest release
    recorded = next((r.commit for r in kb.load().releases if r.tag == tag), None)
    if recorded is not None:  # the KB was refreshed: then the default is pinned like any other
        assert f"must be commit {recorded}" in text
        return
    assert "NOT PINNED" in _fetch_step(data) and "NOT PINNED" in text
    warning = f"{tag} has no commit recorded in the knowledge base"
    assert any(warning in w for w in data["warnings"]) and warning in text


@pytest.mark.parametrize("mirror", ["git://mirror.example/", "http://u:CANARY@mirror.example/"])
def test_a_plain_text_mirror_is_refused_at_spec_load_for_every_command(
    capsys: pytest.CaptureFixture[str], mirror: str
) -> None:
    """N18/M2: `plan` (rc 0) and `image` (rc 0, mirror silently unused) took what fetch refused."""
    with pytest.raises(SpecError, match="plain-text"):
        resolve_spec(cli={"torch": "2.5.1", "git_mirror": mirror})
    assert main(["plan", "--cpu", "--git-mirror", mirror, "--host-facts", str(HOST)]) == 3
    assert "CANARY" not in capsys.readouterr().err
