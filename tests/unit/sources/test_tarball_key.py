"""The tarball cache entry is keyed by the URL as given (or its pinned sha256), never by the
redacted URL alone (security review f1b4bec N13: ``…/download?key=pytorch-v2.5.1.tar.gz`` and
``…?key=pytorch-v2.4.1.tar.gz`` redact alike, and the second build got the first tarball)."""

from __future__ import annotations

from torchsmith.sources.tarball import entry_name

PIN = "ab" * 32


def test_urls_that_redact_alike_get_their_own_entries() -> None:
    first = entry_name("https://h/download?key=pytorch-v2.5.1.tar.gz", None)
    second = entry_name("https://h/download?key=pytorch-v2.4.1.tar.gz", None)
    assert first != second and first.startswith("download-")


def test_a_pinned_tarball_reuses_its_entry_when_the_token_rotates() -> None:
    one = entry_name("https://h/t.tar.gz?X-Amz-Signature=one", PIN)
    assert (
        one == entry_name("https://h/t.tar.gz?X-Amz-Signature=two", PIN) == "t.tar.gz-" + PIN[:16]
    )


def test_no_secret_in_the_entry_name() -> None:
    for url in ("https://alice:pw123@h", "https://alice:pw123@h/t.tgz?token=tok456"):
        name = entry_name(url, None)
        assert "pw123" not in name and "tok456" not in name and "/" not in name
