"""Pure parts of the git provider: mirror URL rewriting and checks, pinning decisions, cache keys,
submodule status."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.sources.git import (
    CREDENTIAL_HELPER,
    _parse_status_line,
    cache_key,
    check_mirror,
    check_pin,
    config_env,
    expected_commit,
    kb_commit,
    mirror_config,
    mirror_env,
    redact_url,
    rewrite_url,
    split_credentials,
)

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sources"


@pytest.mark.parametrize("mirror", ["https://mirror.example/gh", "https://mirror.example/gh/"])
def test_mirror_config_is_a_per_command_instead_of(mirror: str) -> None:
    assert mirror_config(mirror) == [
        ("url.https://mirror.example/gh/.insteadOf", "https://github.com/")
    ]
    assert mirror_config(None) == []


def test_config_env_appends_after_the_callers_own_git_config_entries() -> None:
    env = {"PATH": "/bin", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b"}
    out = config_env(env, [("url.https://u:pw@m/.insteadOf", "https://github.com/")])
    assert out["GIT_CONFIG_COUNT"] == "2"
    assert out["GIT_CONFIG_KEY_1"] == "url.https://u:pw@m/.insteadOf"
    assert out["GIT_CONFIG_VALUE_1"] == "https://github.com/"
    assert out["GIT_CONFIG_KEY_0"] == "a.b"
    assert env == {"PATH": "/bin", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b"}
    assert config_env({"PATH": "/bin"}, []) == {"PATH": "/bin"}
    with pytest.raises(SourceError, match="GIT_CONFIG_COUNT"):
        config_env({"GIT_CONFIG_COUNT": "x"}, [("a.b", "c")])


@pytest.mark.parametrize(
    "mirror",
    ["https://m.example/gh", "ssh://git@m.example/gh", "file:///srv/m", "/srv/m", "git@m:gh"],
)
def test_encrypted_or_local_mirrors_are_accepted(mirror: str) -> None:
    check_mirror(mirror)


@pytest.mark.parametrize(
    "mirror", ["http://m.example/gh", "HTTP://m.example/gh", "git://m.example/gh", "ftp://m/gh"]
)
def test_plain_text_mirrors_are_refused(mirror: str) -> None:
    with pytest.raises(SourceError, match="plain-text"):
        check_mirror(mirror)


@pytest.mark.parametrize("mirror", ["ext::sh -c touch% /tmp/x", "gopher://m/gh"])
def test_other_transports_are_refused(mirror: str) -> None:
    with pytest.raises(SourceError, match="not supported"):
        check_mirror(mirror)


def test_credentials_in_a_refused_mirror_are_not_in_the_message() -> None:
    with pytest.raises(SourceError) as info:
        check_mirror("http://bob:CANARY-PW@m.example/gh")
    assert "CANARY-PW" not in info.value.message + info.value.hint
    assert "http://***@m.example/gh" in info.value.message


def test_redact_url_hides_user_info_anywhere_in_a_line() -> None:
    line = "fatal: unable to access 'https://bob:tok@m.example/gh/x.git/': 403"
    assert redact_url(line) == "fatal: unable to access 'https://***@m.example/gh/x.git/': 403"
    assert redact_url("https://m.example/gh and ssh://git@h/x") == (
        "https://m.example/gh and ssh://***@h/x"
    )


SHA = "a" * 40
OTHER = "b" * 40


def test_a_commit_ref_pins_itself_with_or_without_a_mirror() -> None:
    assert expected_commit(SHA, None, "https://m/") == SHA
    assert expected_commit(SHA, OTHER, None) == SHA


def test_a_tag_is_pinned_by_the_kb_record() -> None:
    assert expected_commit("v2.5.1", SHA, "https://m/") == SHA
    assert expected_commit("v2.5.1", SHA, None) == SHA


def test_an_unrecorded_tag_is_unpinned_from_github_but_refused_through_a_mirror() -> None:
    assert expected_commit("v9.9.9", None, None) is None
    with pytest.raises(SourceError, match="no commit recorded") as info:
        expected_commit("v9.9.9", None, "https://u:CANARY@m.example/")
    assert "CANARY" not in info.value.message
    assert "--torch" in info.value.hint


def test_check_pin_refuses_another_commit_naming_both() -> None:
    check_pin("v2.5.1", SHA, SHA, "https://m/")
    check_pin("v2.5.1", SHA, None, "https://github.com/")
    with pytest.raises(SourceError) as info:
        check_pin("v2.5.1", OTHER, SHA, "https://u:CANARY@m/pytorch/pytorch.git")
    assert f"is commit {OTHER}, but the knowledge base pins {SHA}" in info.value.message
    assert "CANARY" not in info.value.message


def test_kb_commit_is_the_kb_record_of_the_tag_of_pytorch_only() -> None:
    rel = kb.load().release("2.5.1")
    assert rel.commit is not None
    plan = SourcePlan(
        kind="git", location="https://github.com/pytorch/pytorch.git", ref="v2.5.1", reason="t"
    )
    assert kb_commit(plan) == rel.commit
    fork = plan.model_copy(update={"location": "https://github.com/someone/pytorch.git"})
    assert kb_commit(fork) is None
    assert kb_commit(plan.model_copy(update={"ref": "v0.0.1"})) is None


def test_rewrite_url_says_where_a_github_url_goes() -> None:
    url = "https://github.com/pytorch/pytorch.git"
    assert rewrite_url(url, "file:///srv/m") == "file:///srv/m/pytorch/pytorch.git"
    assert (
        rewrite_url("https://gitlab.com/x/y.git", "file:///srv/m") == "https://gitlab.com/x/y.git"
    )
    assert rewrite_url(url, None) == url


def test_cache_key_is_readable_and_distinct() -> None:
    a = cache_key("https://github.com/pytorch/pytorch.git", "v2.5.1")
    b = cache_key("https://github.com/pytorch/pytorch", "v2.5.1")
    assert a.startswith("pytorch-v2.5.1-")
    assert a != b
    assert "/" not in cache_key("https://x/y.git", "refs/tags/a b")


def test_submodule_status_lines_from_real_git_output() -> None:
    lines = (FIX / "git-submodule-status.txt").read_text().splitlines()
    assert dict(_parse_status_line(line) for line in lines) == {
        "third_party/s": "0c57c1ad6557b8a2f056baa712a225f0290f3b55",
        "third_party/t": "83f5ae265c2ec0190a6e1d7d6abd9ae0eda5e46c",
    }
    with pytest.raises(SourceError):
        _parse_status_line("garbage")


def test_https_credentials_leave_the_url_for_a_credential_helper() -> None:
    mirror = "https://bob:p%40ss@m.example:8443/gh"
    assert split_credentials(mirror) == (
        "https://m.example:8443/gh",
        {"username": "bob", "password": "p@ss"},
    )
    assert split_credentials("ssh://git@m.example/gh") == ("ssh://git@m.example/gh", {})
    assert mirror_config(mirror) == [
        ("url.https://m.example:8443/gh/.insteadOf", "https://github.com/"),
        ("credential.https://m.example:8443.helper", ""),
        ("credential.https://m.example:8443.helper", CREDENTIAL_HELPER),
    ]
    assert "p@ss" not in CREDENTIAL_HELPER


def test_mirror_env_carries_the_secret_only_in_variables() -> None:
    env = mirror_env({"PATH": "/bin"}, "https://bob:CANARY@m.example/gh")
    assert env["TORCHSMITH_GIT_PASSWORD"] == "CANARY"
    assert env["TORCHSMITH_GIT_USERNAME"] == "bob"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    config = [v for k, v in env.items() if k.startswith("GIT_CONFIG_")]
    assert not any("CANARY" in value for value in config)
    assert mirror_env({"PATH": "/bin"}, None) == {"PATH": "/bin"}
