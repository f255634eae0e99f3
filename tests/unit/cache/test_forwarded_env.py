"""With an sccache-dist cluster the build's environment is an allow-list (cache/dist.py): the
build servers put every forwarded variable on their bwrap command line (found by the canary
scan of tests/integration/test_cache_shared.py, where GITHUB_TOKEN reached it)."""

from __future__ import annotations

from torchsmith.cache.dist import forwarded_env


def test_a_credential_of_the_callers_shell_is_not_forwarded() -> None:
    env = {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C.UTF-8", "GITHUB_TOKEN": "canary",
           "AWS_SECRET_ACCESS_KEY": "canary", "MY_DB": "canary", "MAX_JOBS": "8",
           "SCCACHE_CONF": "/private/dist-client.toml",
           "CUDA_HOME": "/usr/local/cuda"}  # fmt: skip
    kept = forwarded_env(env, frozenset({"MAX_JOBS", "SCCACHE_CONF"}))
    assert kept == {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C.UTF-8", "MAX_JOBS": "8",
                    "SCCACHE_CONF": "/private/dist-client.toml",
                    "CUDA_HOME": "/usr/local/cuda"}  # fmt: skip
    assert "canary" not in kept.values()
