"""torchsmith.redact: credentials in URLs (user-info, signed query strings) are masked."""

from __future__ import annotations

import pytest

from torchsmith.redact import MASK, redact_data, redact_text, redact_url, url_secrets

CANARY = "s3cr3t-CANARY"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            f"https://alice:{CANARY}@example.org/torch.tar.gz#sha256=" + "a" * 64,
            "https://***@example.org/torch.tar.gz#sha256=" + "a" * 64,
        ),
        ("https://ghp_TOKEN123@github.com/pytorch/", "https://***@github.com/pytorch/"),
        (
            "https://b.s3.amazonaws.com/t.tgz?X-Amz-Algorithm=AWS4&X-Amz-Signature=abcd&v=1",
            "https://b.s3.amazonaws.com/t.tgz?X-Amz-Algorithm=***&X-Amz-Signature=***&v=1",
        ),
        ("https://h/x.tgz?sig=zzz&sv=2020", "https://h/x.tgz?sig=***&sv=2020"),
        ("https://h/x.tgz?token=zzz", "https://h/x.tgz?token=***"),
        ("redis://:pw@cache:6379/0", "redis://***@cache:6379/0"),
        ("https://example.org/a@b/c.tgz", "https://example.org/a@b/c.tgz"),
        ("/home/alice/torch.tar.gz", "/home/alice/torch.tar.gz"),
        ("pytorch", "pytorch"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_redact_url_in_text_keeps_the_rest() -> None:
    text = f"fatal: unable to access 'https://bob:{CANARY}@git.example/pytorch/': 403"
    assert redact_url(text) == "fatal: unable to access 'https://***@git.example/pytorch/': 403"


def test_rotating_a_token_keeps_the_redacted_form() -> None:
    assert redact_url("https://u:one@h/x?X-Amz-Signature=1") == redact_url(
        "https://u:two@h/x?X-Amz-Signature=2"
    )


def test_url_secrets_and_redact_text() -> None:
    url = f"https://alice:{CANARY}@h/x.tgz?X-Amz-Signature=sigvalue"
    secrets = url_secrets(url)
    assert CANARY in secrets
    assert "sigvalue" in secrets
    text = f"curl: password {CANARY} rejected; sig sigvalue; see {url}"
    cleaned = redact_text(text, secrets)
    assert CANARY not in cleaned
    assert "sigvalue" not in cleaned
    assert MASK in cleaned


def test_redact_data_walks_nested_values() -> None:
    data = {
        "source": {"location": f"https://a:{CANARY}@h/x", "n": 1},
        "w": [f"see s3://k:{CANARY}@b"],
    }
    assert CANARY not in str(redact_data(data))
    assert redact_data(data)["source"]["n"] == 1


@pytest.mark.parametrize(
    ("url", "hidden"),
    [  # security review f1b4bec N13: what the name deny-list let through
        ("https://h/x?access_key=AK1&secret_key=SK1", ["AK1", "SK1"]),
        ("https://h/x?api-key=K1", ["K1"]),
        ("https://h/x?auth_token=T1", ["T1"]),
        ("https://h/x?client_secret=C1", ["C1"]),
        ("https://h/x?jwt=eyJ0", ["eyJ0"]),
        ("https://h/x?whatever_nobody_foresaw=W1", ["W1"]),
        ("k:pw8@minio:9000", ["pw8"]),
        ("http_proxy=alice:proxyPW@proxy.example:3128", ["proxyPW", "alice"]),
    ],
)
def test_every_query_value_not_known_harmless_is_masked(url: str, hidden: list[str]) -> None:
    shown = redact_url(url)
    assert not [h for h in hidden if h in shown], shown


def test_harmless_values_and_ssh_style_remotes_stay_readable() -> None:
    url = "https://h/x.tgz?v=1&ref=v2.5.1&format=tar#sha256=" + "a" * 64
    assert redact_url(url) == url
    assert redact_url("git@github.com:pytorch/pytorch.git") == "git@github.com:pytorch/pytorch.git"


def test_names_that_say_secret_are_refusable() -> None:
    found = url_secrets("https://h/x?client_secret=CS1&api-key=AK1&jwt=JW1&v=123")
    assert set(found) == {"CS1", "AK1", "JW1"}
