"""Pure parts of the Debian source provider, on real recorded files (tests/fixtures/sources)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.sources import apt, dsc, hostdeps
from torchsmith.sources.debian import upstream_of
from torchsmith.sources.patches import read_series

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "sources"
DSC_113 = (FIX / "pytorch_1.13.1+dfsg-4.dsc").read_text()
DSC_26 = (FIX / "pytorch_2.6.0+dfsg-7.dsc").read_text()


def test_dsc_files_and_checksums_from_a_signed_dsc() -> None:
    parsed = dsc.parse_dsc(DSC_113, "amd64")
    assert (parsed.source, parsed.version) == ("pytorch", "1.13.1+dfsg-4")
    assert parsed.format == "3.0 (quilt)"
    assert parsed.orig.name == "pytorch_1.13.1+dfsg.orig.tar.xz"
    assert parsed.orig.size == 18331132
    assert parsed.orig.sha256.startswith("d0355588b852")
    assert parsed.debian is not None
    assert parsed.debian.name == "pytorch_1.13.1+dfsg-4.debian.tar.xz"


def test_build_depends_follow_architecture_restrictions() -> None:
    amd64 = dsc.parse_dsc(DSC_113, "amd64").build_depends
    s390x = dsc.parse_dsc(DSC_113, "s390x").build_depends
    assert "libdnnl-dev" in amd64  # [amd64 arm64 ppc64el]
    assert "libdnnl-dev" not in s390x
    assert "libgloo-dev" in s390x  # [amd64 arm64 ppc64el mips64el s390x]
    assert "libxnnpack-dev" not in s390x  # [amd64 arm64]


def test_needed_packages_are_the_core_set_and_the_rest_is_optional() -> None:
    core, optional = dsc.needed_packages(dsc.parse_dsc(DSC_113, "amd64"))
    assert {"libfmt-dev", "libsleef-dev", "protobuf-compiler", "flatbuffers-compiler-dev"} <= set(
        core
    )
    assert "python3-typing-extensions" in core  # not in the .dsc, needed by setup.py
    assert {"libopencv-dev", "libavcodec-dev", "libzmq3-dev", "libgloo-dev"} <= set(optional)
    assert not set(core) & set(optional)


def test_2_6_needs_httplib_and_nlohmann_in_its_core_set() -> None:
    core, _ = dsc.needed_packages(dsc.parse_dsc(DSC_26, "amd64"))
    assert {"libcpp-httplib-dev", "nlohmann-json3-dev"} <= set(core)


def test_verify_files_rejects_a_wrong_file(tmp_path: Path) -> None:
    text = b"not the orig tarball"
    name = "pytorch_1.13.1+dfsg.orig.tar.xz"
    (tmp_path / name).write_bytes(text)
    with pytest.raises(SourceError, match="does not match"):
        dsc.verify_files(dsc.parse_dsc(DSC_113, "amd64"), tmp_path, [name])


def test_verify_files_returns_sha256_of_a_matching_file(tmp_path: Path) -> None:
    body = b"hello"
    digest = hashlib.sha256(body).hexdigest()
    fake = DSC_113.replace(
        "d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7 18331132", f"{digest} 5"
    )
    (tmp_path / "pytorch_1.13.1+dfsg.orig.tar.xz").write_bytes(body)
    parsed = dsc.parse_dsc(fake, "amd64")
    assert dsc.verify_files(parsed, tmp_path, [parsed.orig.name]) == {parsed.orig.name: digest}


def test_not_a_dsc_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match=r"not a Debian \.dsc"):
        dsc.parse_dsc("Package: foo\nVersion: 1\n", "amd64")


def test_print_uris_lists_every_file_with_its_sha256() -> None:
    lines = (FIX / "print-uris-pytorch-1.13.1+dfsg-4.txt").read_text().splitlines()
    files = apt.parse_print_uris(lines)
    assert [f.name for f in files] == [
        "pytorch_1.13.1+dfsg-4.dsc",
        "pytorch_1.13.1+dfsg.orig.tar.xz",
        "pytorch_1.13.1+dfsg-4.debian.tar.xz",
    ]
    assert files[2].uri.endswith("pytorch_1.13.1%2bdfsg-4.debian.tar.xz")
    assert files[2].size == 193756
    assert files[2].sha256 == dsc.parse_dsc(DSC_113, "amd64").debian.sha256  # type: ignore[union-attr]


def test_print_uris_of_an_unknown_version_lists_nothing() -> None:
    lines = (FIX / "print-uris-unknown-version.txt").read_text().splitlines()
    assert apt.parse_print_uris(lines) == []


def test_private_apt_options_never_touch_the_system_lists(tmp_path: Path) -> None:
    cfg = apt.AptConfig(tmp_path / "apt")
    opts = cfg.options()
    assert f"-oDir::State::Lists={tmp_path / 'apt' / 'lists'}" in opts
    assert "-oDir::Etc::SourceParts=/dev/null" in opts
    assert all(str(tmp_path) in o for o in opts if "Dir::" in o and "SourceParts" not in o)
    assert cfg.sources_text().splitlines() == [
        f"deb-src [signed-by={apt.DEBIAN_KEYRING}] http://deb.debian.org/debian bookworm main",
        f"deb-src [signed-by={apt.DEBIAN_KEYRING}] http://deb.debian.org/debian trixie main",
    ]


def test_dpkg_query_output_gives_installed_packages() -> None:
    text = (FIX / "dpkg-query-status.txt").read_text()
    assert hostdeps.parse_dpkg_query(text) == {"cmake", "libfmt-dev"}


def test_install_command_uses_sudo_only_when_not_root() -> None:
    assert hostdeps.install_command(["a"], as_root=True)[0] == "apt-get"
    assert hostdeps.install_command(["a"], as_root=False)[:2] == ["sudo", "apt-get"]


@pytest.mark.parametrize(
    ("debian", "upstream"),
    [("1.13.1+dfsg-4", "1.13.1"), ("2.6.0+dfsg-7", "2.6.0"), ("0.14.1-2", "0.14.1"),
     ("1:2.0.1~rc1-3", "2.0.1")],
)  # fmt: skip
def test_upstream_version_of_a_debian_version(debian: str, upstream: str) -> None:
    assert upstream_of(debian) == upstream


def test_series_reads_names_and_strip_levels(tmp_path: Path) -> None:
    patches = tmp_path / "debian" / "patches"
    patches.mkdir(parents=True)
    (patches / "series").write_text("# comment\n0001-a.patch\n\n0002-b.patch -p0 # note\n")
    entries = read_series(tmp_path)
    assert [(e.name, e.strip) for e in entries] == [("0001-a.patch", "1"), ("0002-b.patch", "0")]
    assert read_series(tmp_path / "nothing") == []
