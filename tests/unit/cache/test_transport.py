"""A compiler-cache remote or scheduler in clear text on another machine (security review
f1b4bec, N4: an http:// WebDAV password, a redis:// password and an http:// sccache-dist token
were accepted without a word; a swapped entry put other code into the object file): refused
when a credential would travel, unless ``cache.allow_cleartext`` accepts it; warned about
otherwise. TLS and loopback pass."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.planner.test_cache_plan import plan, refusal
from torchsmith.transport import cleartext_off_host, is_loopback

SCCACHE = {"cache.kind": "sccache", "cache.cluster_slots": 4, "cache.cluster_token_env": "T"}


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"cache.location": "http://dav.example/cache", "cache.username": "builder",
          "cache.credentials_env": "DAVPW"}, "cache.location"),
        ({"cache.location": "redis://cache.example:6379", "cache.credentials_file": "/pw"},
         "cache.location"),
        ({**SCCACHE, "cache.cluster": "http://sched.example:10600"}, "cache.cluster"),
    ],
)  # fmt: skip
def test_a_credential_in_clear_text_is_refused_naming_the_way_out(
    spec: dict[str, Any], key: str
) -> None:
    text = refusal(**spec)
    assert f"{key} " in text and "plain text to another machine" in text
    assert "rediss://" in text and "cache.allow_cleartext = true" in text


def test_accepted_explicitly_it_still_warns() -> None:
    spec = {"cache.location": "redis://cache.example:6379", "cache.credentials_env": "PW"}
    warnings = plan(**spec, **{"cache.allow_cleartext": True}).warnings
    assert any("swap cache entries" in w and "its credential" in w for w in warnings)


@pytest.mark.parametrize(
    "spec",
    [
        {"cache.location": "rediss://cache.example:6380", "cache.credentials_env": "PW"},
        {"cache.location": "https://dav.example/c", "cache.credentials_env": "PW"},
        {"cache.location": "redis://127.0.0.1:6379", "cache.credentials_env": "PW"},
        {"cache.location": "http://localhost:8080/c", "cache.credentials_env": "PW"},
        {**SCCACHE, "cache.cluster": "https://sched.example:10600"},
        {**SCCACHE, "cache.cluster": "http://[::1]:10600"},
    ],
)
def test_tls_and_loopback_pass_without_a_word(spec: dict[str, Any]) -> None:
    assert not [w for w in plan(**spec).warnings if "plain text" in w]


def test_no_credential_in_clear_text_is_a_warning_about_poisoning() -> None:
    warnings = plan(**{"cache.location": "redis://10.0.0.1:6379"}).warnings
    assert any("swap cache entries" in w and "credential" not in w for w in warnings)
    s3 = {"cache.kind": "sccache", "cache.location": "s3://b", "cache.endpoint": "http://m:9000"}
    assert any("cache.endpoint" in w for w in plan(**s3).warnings)


def test_loopback_and_cleartext() -> None:
    assert is_loopback("127.0.0.5") and is_loopback("::1") and is_loopback("LOCALHOST")
    assert not is_loopback("10.0.0.1") and not is_loopback("localhost.example")
    assert cleartext_off_host("redis://10.0.0.1:6379") and cleartext_off_host("git://m/x")
    assert not cleartext_off_host("rediss://10.0.0.1") and not cleartext_off_host("s3://b")


def test_a_credential_in_the_s3_endpoint_is_refused() -> None:
    spec = {"cache.kind": "sccache", "cache.location": "s3://b",
            "cache.endpoint": "https://AKID:epSECRET@minio.example:9000"}  # fmt: skip
    text = refusal(**spec)
    assert "cache.endpoint https://***@minio.example:9000 carries a credential" in text
    assert "epSECRET" not in text and "AWS_SECRET_ACCESS_KEY" in text


def test_a_cluster_is_said_to_see_only_the_allow_listed_environment() -> None:
    """The canary scan of test_cache_shared found the environment on the build server's bwrap
    command line (sccache-dist forwards it whole): the build keeps an allow-list, and says so."""
    spec = {**SCCACHE, "cache.cluster": "https://sched.example:10600"}
    (said,) = [w for w in plan(**spec).warnings if "bwrap --setenv" in w]
    assert "only the plan's variables and PATH, HOME" in said


def test_a_cluster_with_a_remote_password_is_refused() -> None:
    """sccache reads a remote's password from the compile environment, which the cluster's
    build servers put on their command line: refused, naming the way out."""
    text = refusal(**SCCACHE, **{"cache.cluster": "https://sched.example:10600",
                                 "cache.location": "rediss://cache.example:6380",
                                 "cache.credentials_env": "PW"})  # fmt: skip
    assert "cache.cluster with a remote cache that needs a password" in text
    assert "drop the remote's credentials" in text
