"""``torchsmith publish``'s checks before anything is read or sent: targets, URLs that carry a
credential or would send it in clear text, token files others can read, secrets that never show."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from torchsmith.errors import UsageError
from torchsmith.publish.credentials import Secret, from_environment, from_file
from torchsmith.publish.pypi import simple_url
from torchsmith.publish.target import parse_target


def test_targets_parse() -> None:
    assert parse_target("pypi-index:https://upload.pypi.org/legacy/").kind == "pypi-index"
    assert parse_target("conda-channel:/srv/channel").where == "/srv/channel"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("pypi:https://x/", "not a publish target"),
        ("pypi-index:https://alice:s3cr3t@pkgs.example/", "carries a credential"),
        ("pypi-index:https://pkgs.example/?token=abc", "carries a credential"),
        ("pypi-index:http://pkgs.example/", "clear text"),
        ("pypi-index:ftp://pkgs.example/", "not an http(s) URL"),
        ("oci:bob:s3cr3t@registry.example/team/torch:2.6.0", "carries a credential"),
    ],
)
def test_bad_targets_are_refused_without_showing_secrets(text: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_target(text)
    assert said in caught.value.render()
    assert "s3cr3t" not in caught.value.render() and "abc" not in caught.value.render()


def test_plain_http_only_to_loopback() -> None:
    for url in ("http://127.0.0.1:8080/", "http://localhost/", "http://[::1]:9/"):
        assert parse_target(f"pypi-index:{url}").where == url


def test_simple_index_beside_the_upload_url() -> None:
    assert simple_url("https://upload.pypi.org/legacy/") == "https://pypi.org/simple/"
    assert simple_url("https://test.pypi.org/legacy/") == "https://test.pypi.org/simple/"
    assert simple_url("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/simple/"
    assert simple_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080/simple/"


def test_a_secret_never_shows_its_value() -> None:
    secret = from_environment("  tok-123 \n", "PKG_TOKEN")
    assert secret.reveal() == "tok-123"
    assert "tok-123" not in repr(secret) + str(secret) + f"{secret}"


def test_an_empty_variable_is_refused() -> None:
    with pytest.raises(UsageError, match="not set or empty"):
        from_environment(None, "PKG_TOKEN")


def test_token_file_must_be_private(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("tok-456\n")
    token.chmod(0o640)
    with pytest.raises(UsageError, match="mode 0640"):
        from_file(token)
    token.chmod(0o600)
    assert from_file(token).reveal() == "tok-456"
    link = tmp_path / "link"
    link.symlink_to(token)
    with pytest.raises(UsageError, match="not a regular file"):
        from_file(link)


def test_secret_is_a_frozen_value() -> None:
    assert Secret("x", "test").source == "test"


def test_oci_references_and_the_auth_file(tmp_path: Path) -> None:
    from torchsmith.publish.oci import auth_file, split_reference

    assert split_reference("127.0.0.1:5000/team/tiny:1.0") == ("127.0.0.1:5000", "team/tiny", "1.0")
    for bad in ("tiny:1.0", "reg.example/team/tiny", "reg.example/team/tiny@sha256:ab"):
        with pytest.raises(UsageError, match="not REGISTRY/REPO:TAG"):
            split_reference(bad)
    secret = Secret("tok-789", "test")
    def auth_dirs() -> set[Path]:
        return set(Path(tempfile.gettempdir()).glob("torchsmith-auth-*"))

    before = auth_dirs()
    with auth_file("reg.example", secret, "__token__") as path:
        assert path is not None and path.parent == Path("/dev/fd")  # in memory: nothing on disk
        assert "reg.example" in path.read_text() and "tok-789" not in path.read_text()
        assert auth_dirs() == before  # N11: no file that SIGTERM could leave behind
        assert path.read_text() == path.read_text()  # skopeo may read it more than once
    assert not path.exists()
