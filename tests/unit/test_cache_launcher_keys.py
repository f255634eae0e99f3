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
