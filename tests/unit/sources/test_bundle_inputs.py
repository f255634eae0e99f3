"""Bad bundle outputs and tarball pins are clear errors up front (round-3 trial X01, X02, X04)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import SourceError, UsageError
from torchsmith.sources.bundle_write import check_output
from torchsmith.sources.tarball import split_location


def test_bundle_output_checks(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a directory"):
        check_output(tmp_path)
    with pytest.raises(UsageError, match="cannot write in /proc"):
        check_output(Path("/proc/x.tar"))
    assert check_output(tmp_path / "b.tar") == tmp_path / "b.tar"


@pytest.mark.parametrize("out", ["/proc/x.tar", "."])
def test_source_bundle_refuses_the_output_before_fetching(
    out: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["source", "bundle", "--torch", "1.13.1", "--cpu", "--source", "git", "-o", out]
    assert main(argv) == 2
    assert "-o " in capsys.readouterr().err


def test_a_short_sha256_pin_is_refused_not_read_as_a_file_name() -> None:
    assert split_location("f.tar.gz#sha256=" + "A" * 64) == ("f.tar.gz", "a" * 64)
    assert split_location("f.tar.gz") == ("f.tar.gz", None)
    with pytest.raises(SourceError, match=r"f.tar.gz#sha256=00: the pin is not a sha256"):
        split_location("f.tar.gz#sha256=00")
