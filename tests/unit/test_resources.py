"""tests/resources.py: a missing test resource skips locally and fails under CI=true."""

from __future__ import annotations

import pytest

from tests.resources import in_ci, require, require_tool


@pytest.mark.parametrize(
    ("env", "expected"),
    [({"CI": "true"}, True), ({"CI": "1"}, True), ({"CI": "True "}, True),
     ({"CI": "false"}, False), ({"CI": ""}, False), ({}, False)],
)  # fmt: skip
def test_in_ci_reads_the_ci_variable(env: dict[str, str], expected: bool) -> None:
    assert in_ci(env) is expected


def test_missing_resource_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"missing: g\+\+-11 \(to get it: apt"):
        require(False, "g++-11", "apt-get install g++-11")


def test_missing_resource_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI=true .* missing: root"):
        require(False, "root", "run as root")


def test_present_resource_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    require(True, "anything", "nothing")


def test_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match="no-such-tool on PATH"):
        require_tool("no-such-tool")
