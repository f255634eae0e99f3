"""Issue 28 item 5: what publish is given is checked before anything is sent or written, with a
clear error instead of an internal one (trial P10, P21, P22, P28, P29)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from torchsmith.commands.publish import check_up_front
from torchsmith.errors import UsageError
from torchsmith.publish import credentials
from torchsmith.publish.target import parse_target

_NAME = "filelock-3.16.1-py3-none-any.whl"


def _wheel(path: Path, members: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for member in members:
            zf.writestr(member, "x")
    return path


def _pypi(files: list[Path]) -> None:
    check_up_front(parse_target("pypi-index:https://upload.example/legacy/"), files)


def test_a_real_wheel_passes(tmp_path: Path) -> None:
    info = "filelock-3.16.1.dist-info"
    _pypi([_wheel(tmp_path / _NAME, [f"{info}/WHEEL", f"{info}/METADATA", "filelock/x.py"])])


def test_a_name_that_is_no_wheels_is_refused(tmp_path: Path) -> None:
    """P21: was InvalidWheelFilename, exit 70."""
    with pytest.raises(UsageError, match=r"notawheel\.whl is not a wheel's file name"):
        _pypi([_wheel(tmp_path / "notawheel.whl", [])])


def test_random_bytes_are_refused(tmp_path: Path) -> None:
    """P22: was twine's BadZipFile, exit 70."""
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UsageError, match="not a zip archive"):
        _pypi([wheel])


def test_a_zip_without_metadata_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no \.dist-info/WHEEL or METADATA"):
        _pypi([_wheel(tmp_path / _NAME, ["filelock/x.py"])])


@pytest.mark.parametrize("where", ["FILE", "/proc/nope"])
def test_a_conda_channel_that_cannot_be_written_is_refused(tmp_path: Path, where: str) -> None:
    """P28 (a regular file: NotADirectoryError), P29 (/proc/nope: FileNotFoundError)."""
    (tmp_path / "FILE").write_text("x")
    channel = str(tmp_path / where) if where == "FILE" else where
    package = tmp_path / "x-1.0-0.conda"
    with pytest.raises(UsageError, match="conda-channel:"):
        check_up_front(parse_target(f"conda-channel:{channel}"), [package])


def test_a_token_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    """P10: bytes ff fe 00 were a UnicodeDecodeError, exit 70."""
    token = tmp_path / "token"
    token.write_bytes(b"\xff\xfe\x00")
    os.chmod(token, 0o600)
    with pytest.raises(UsageError, match="is not UTF-8 text") as caught:
        credentials.from_file(token)
    assert "\\xff" not in str(caught.value)  # no bytes of the file in the message


@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_credential_is_publishs_exit_13(status: int) -> None:
    """Issue 28 item 6: it was a usage error (exit 2)."""
    import requests

    from torchsmith.errors import PublishError
    from torchsmith.publish.pypi import _raise_for

    resp = requests.Response()
    resp.status_code = status
    with pytest.raises(PublishError, match="refused the credentials") as caught:
        _raise_for(resp, "uploading x.whl")
    assert caught.value.exit_code == 13


@pytest.mark.parametrize("text", ["pypi-first\nsecond-line\n", "pypi-a\rb", "pypi-\x1b[31m"])
def test_a_token_of_more_than_one_line_is_refused(tmp_path: Path, text: str) -> None:
    """P11: a two-line file was sent as the token without a word."""
    token = tmp_path / "token"
    token.write_text(text)
    os.chmod(token, 0o600)
    with pytest.raises(UsageError, match="is not one line of text") as caught:
        credentials.from_file(token)
    assert "second" not in str(caught.value) and "pypi" not in str(caught.value)
    with pytest.raises(UsageError, match="is not one line of text"):
        credentials.from_environment(text, "T")
    token.write_text("pypi-AgEI-one-line\n")
    assert credentials.from_file(token).reveal() == "pypi-AgEI-one-line"


@pytest.mark.parametrize(
    ("target", "flags", "named"),
    [
        ("conda-channel:{tmp}/ch", ["--username", "evil"], "--username"),
        (
            "conda-channel:{tmp}/ch",
            ["--token-env", "T", "--index-url", "https://x/"],
            "--token-env",
        ),
        ("oci:registry.example/x:1", ["--index-url", "https://x/"], "--index-url"),
    ],
)
def test_a_flag_the_target_never_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, flags: list[str], named: str
) -> None:
    """P39: --username with conda-channel: was dropped without a word."""
    from torchsmith.cli import main

    package = tmp_path / "x-1.0-0.conda"
    package.write_bytes(b"x")
    assert main(["publish", str(package), "--to", target.format(tmp=tmp_path), *flags]) == 2
    assert f"{named}" in capsys.readouterr().err
    assert not (tmp_path / "ch").exists()
