"""Pure parts of the git provider: mirror URL rewriting, cache keys, submodule status."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.sources.git import _parse_status_line, cache_key, mirror_config, rewrite_url

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "sources"


@pytest.mark.parametrize("mirror", ["https://mirror.example/gh", "https://mirror.example/gh/"])
def test_mirror_config_is_a_per_command_instead_of(mirror: str) -> None:
    assert mirror_config(mirror) == [
        "-c",
        "url.https://mirror.example/gh/.insteadOf=https://github.com/",
    ]
    assert mirror_config(None) == []


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
