"""The tarball provider's download: HTTPS only, the URL (and its credentials) never in argv,
errors and log lines redacted, a warning without #sha256 (M2/M3 parts; curl itself runs in
tests/integration/test_secrets_tarball.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.errors import SourceError, ToolError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources import tarball

URL = "https://alice:CANARY-pw@h.example/p/t.tar.gz?X-Amz-Signature=CANARY-sig"


def _plan(location: str) -> SourcePlan:
    return SourcePlan(kind="tarball", location=location, ref="", reason="test")


@pytest.mark.parametrize("url", ["http://u:CANARY@h/t.tgz", "ftp://h/t.tgz", "HTTP://h/t.tgz"])
def test_plain_text_urls_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(SourceError, match="plain-text") as caught:
        tarball.fetch_tarball(_plan(url), tmp_path, {}, runner=HOST)
    assert "CANARY" not in caught.value.render()
    assert "https://" in caught.value.hint
    assert not (tmp_path / "tarball").exists()


class _Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[list[str], str | None]] = []
        self.fail = fail

    def __call__(self, argv: Sequence[str], **kwargs: Any) -> proc.Completed:
        self.calls.append((list(argv), kwargs.get("stdin_text")))
        if self.fail:
            on_line = kwargs["on_line"]
            on_line(f"curl: (22) The requested URL returned error: 403 for {URL}")
            raise ToolError("curl exited with status 22", excerpt=[f"403 CANARY-pw {URL}"])
        out = Path(kwargs["stdin_text"].split('output = "', 1)[1].split('"', 1)[0])
        out.write_bytes(b"not a tarball")
        return proc.Completed(tuple(argv), 0, 0.0, None, ())


def test_curl_gets_the_url_on_stdin_with_https_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = _Recorder()
    monkeypatch.setattr(proc, "run", recorder)
    lines: list[str] = []
    with pytest.raises(SourceError):  # the fake download is not an archive
        tarball.fetch_tarball(_plan(URL), tmp_path, {}, runner=HOST, on_line=lines.append)
    (argv, stdin), *_ = recorder.calls
    assert "CANARY" not in " ".join(argv)
    assert argv[:1] == ["curl"] and argv[-2:] == ["--config", "-"]
    assert "--proto =https --proto-redir =https" in " ".join(argv)
    assert stdin is not None and f'url = "{URL}"' in stdin
    assert any("no #sha256=" in line for line in lines)
    assert not any("CANARY" in line for line in lines)
    for path in tmp_path.rglob("*"):
        assert "CANARY" not in path.name
        if path.is_file():
            assert b"CANARY" not in path.read_bytes()


def test_a_failed_download_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc, "run", _Recorder(fail=True))
    lines: list[str] = []
    with pytest.raises(SourceError, match=r"download of https://\*\*\*@h\.example") as caught:
        tarball.fetch_tarball(_plan(URL), tmp_path, {}, runner=HOST, on_line=lines.append)
    assert "CANARY" not in caught.value.render()
    assert "CANARY" not in "\n".join(lines)


def test_config_quoting() -> None:
    text = tarball._curl_config('https://h/a"b\\c', Path("/o"), resume=True)
    assert text == 'url = "https://h/a\\"b\\\\c"\noutput = "/o"\ncontinue-at = -\n'
