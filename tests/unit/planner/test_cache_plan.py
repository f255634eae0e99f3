"""The cache section of the spec as the planner decides it: levels with a reason, what is
refused at plan time, and what stays out of the plan hash."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from torchsmith.errors import PlanError, SpecError
from torchsmith.plan import resolve
from torchsmith.plan_model import BuildPlan
from torchsmith.spec_sources import resolve_spec


def plan(**cli: Any) -> BuildPlan:
    return resolve(resolve_spec(cli={"torch": "2.5.1", "accelerator": "cpu", **cli}),
                   mini_kb(), ci_host())  # fmt: skip


def refusal(**cli: Any) -> str:
    with pytest.raises(PlanError) as info:
        plan(**cli)
    return info.value.render()


def test_a_remote_is_a_second_level_with_a_reason() -> None:
    p = plan(**{"cache.location": "redis://127.0.0.1:6379", "cache.credentials_env": "PW"})
    setup = p.cache_setup
    assert setup is not None and setup.remote_kind == "redis" and setup.local_dir is None
    assert "<cache root>/ccache first, then the remote redis://127.0.0.1:6379" in setup.reason
    assert setup.credentials_env == "PW" and "PW" not in p.env_dict()


def test_where_the_cache_lives_is_not_in_the_plan_hash() -> None:
    local = plan().plan_hash()
    assert plan(**{"cache.location": "redis://10.0.0.1:6379"}).plan_hash() == local
    assert plan(**{"cache.dir": "/srv/ccache"}).plan_hash() == local
    assert plan(**{"cache.kind": "sccache"}).plan_hash() != local  # another launcher


def test_a_directory_location_is_a_shared_local_level() -> None:
    setup = plan(**{"cache.location": "/nfs/ccache"}).cache_setup
    assert setup is not None and setup.local_dir == "/nfs/ccache" and setup.shared_dir
    assert setup.remote is None


def test_credentials_in_the_url_are_refused_without_showing_them() -> None:
    text = refusal(**{"cache.location": "redis://:hunter2secret@10.0.0.1:6379"})
    assert "carries a credential" in text and "cache.credentials_env" in text
    assert "hunter2secret" not in text


def test_ccache_cannot_store_in_s3() -> None:
    assert "ccache has no S3 storage" in refusal(**{"cache.location": "s3://bucket/prefix"})
    p = plan(**{"cache.kind": "sccache", "cache.location": "s3://bucket/prefix",
                "cache.endpoint": "http://127.0.0.1:9000"})  # fmt: skip
    assert p.cache_setup is not None and p.cache_setup.remote_kind == "s3"


def test_inconsistent_cache_requests_are_refused_at_once() -> None:
    text = refusal(**{"cache.kind": "none", "cache.location": "redis://h:1"})
    assert "cache.kind = none" in text
    text = refusal(**{"cache.credentials_env": "PW"})
    assert "without a remote" in text
    text = refusal(**{"cache.location": "redis://h:1", "cache.endpoint": "http://h:2"})
    assert "only apply to an s3:// location" in text


CLUSTER = {"cache.kind": "sccache", "cache.cluster": "http://127.0.0.1:10600",
           "cache.cluster_token_env": "DIST_TOKEN"}  # fmt: skip


def test_a_cluster_adds_its_slots_to_max_jobs_within_ram() -> None:
    p = plan(**CLUSTER, **{"cache.cluster_slots": 8})
    setup = p.cache_setup
    assert setup is not None and setup.local_jobs == 2  # the CI host: 2 cores
    assert p.max_jobs.value == 10 and "8 cluster slots" in p.max_jobs.reason
    assert p.env_dict()["MAX_JOBS"] == "10"
    assert "sccache-dist cluster http://127.0.0.1:10600" in setup.reason
    big = plan(**CLUSTER, **{"cache.cluster_slots": 4000})  # the CI host: 23 GiB RAM
    assert big.max_jobs.value == 46 and "at most 46 by RAM at 0.5 GiB" in big.max_jobs.reason
    assert plan(**CLUSTER, **{"cache.cluster_slots": 8}, max_jobs=3).max_jobs.value == 3


def test_a_cluster_without_slots_keeps_local_jobs_and_says_why() -> None:
    p = plan(**CLUSTER)
    assert p.max_jobs.value == 2
    assert any("without cache.cluster_slots" in w for w in p.warnings)


def test_a_cluster_needs_sccache_a_token_variable_and_an_http_url() -> None:
    assert "needs cache.kind = sccache" in refusal(**{**CLUSTER, "cache.kind": "ccache"})
    no_token = {k: v for k, v in CLUSTER.items() if k != "cache.cluster_token_env"}
    assert "cache.cluster_token_env" in refusal(**no_token)
    text = refusal(**{**CLUSTER, "cache.cluster": "http://user:s3cr3tpw@10.0.0.1:10600"})
    assert "carries a credential" in text and "s3cr3tpw" not in text


def test_a_location_that_is_no_known_remote_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="redis://, http"):
        resolve_spec(cli={"cache.location": "ftp://h/cache"})
    with pytest.raises(SpecError, match="not a size"):
        resolve_spec(cli={"cache.size": "lots"})


@pytest.mark.parametrize(
    ("key", "url", "why"),
    [
        ("cache.location", "redis://10.0.0.1:99999", "Port out of range"),  # trial C07
        ("cache.location", "http://[::1", "Invalid IPv6 URL"),  # trial C08: exit 70
        ("cache.location", "redis://:0", "port 0 is no port"),
        ("cache.endpoint", "http://127.0.0.1:70000", "Port out of range"),
        ("cache.cluster", "http://[::1:10600", "Invalid IPv6 URL"),
    ],
)
def test_a_url_no_client_can_connect_to_is_refused_naming_why(key: str, url: str, why: str) -> None:
    cli = {"cache.kind": "sccache", key: url}
    if key != "cache.location":
        cli["cache.location"] = "s3://bucket/prefix"
    text = refusal(**cli)
    assert f"{key} {url} is not a URL a client can connect to: {why}" in text


def test_a_bad_url_with_a_credential_is_refused_without_showing_it() -> None:
    text = refusal(**{"cache.location": "redis://:hunter2secret@10.0.0.1:99999"})
    assert "Port out of range" in text and "hunter2secret" not in text
