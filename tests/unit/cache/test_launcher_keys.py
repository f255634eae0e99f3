"""M3: the manifest copies only known, non-secret compiler-cache variables."""

from __future__ import annotations

from torchsmith.cache import launcher_env_keys

SECRET_ONES = {
    "SCCACHE_WEBDAV_PASSWORD": "CANARY1",
    "SCCACHE_REDIS": "redis://:CANARY2@cache:6379",
    "SCCACHE_AZURE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountKey=CANARY3",
    "CCACHE_REMOTE_STORAGE": "redis://user:CANARY4@cache",
    "SCCACHE_GCS_KEY_PATH": "/home/u/key.json",
}


def test_secret_cache_variables_are_not_copied() -> None:
    env = {**SECRET_ONES, "CCACHE_DIR": "/c", "SCCACHE_BASEDIRS": "/w", "PATH": "/bin"}
    env["CMAKE_CXX_COMPILER_LAUNCHER"] = "/usr/bin/sccache"
    assert launcher_env_keys(env) == {
        "CCACHE_DIR": "/c",
        "SCCACHE_BASEDIRS": "/w",
        "CMAKE_CXX_COMPILER_LAUNCHER": "/usr/bin/sccache",
    }


def test_kept_endpoints_with_user_info_are_masked_in_the_manifest() -> None:
    """Security review f1b4bec 1.5: SCCACHE_*_ENDPOINT values are kept, and only a scheme made
    redaction mask their user-info; a scheme-less ``k:pw@minio:9000`` stayed."""
    from torchsmith.redact import redact_data

    env = {"SCCACHE_ENDPOINT": "AKID:CANARY5@minio:9000",
           "SCCACHE_REDIS_ENDPOINT": "redis://u:CANARY6@cache:6379"}  # fmt: skip
    shown = redact_data(launcher_env_keys(env))
    assert "CANARY" not in str(shown) and shown["SCCACHE_ENDPOINT"] == "***@minio:9000"
