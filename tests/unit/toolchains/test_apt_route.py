"""The apt CUDA provider never installs a foreign Debian suite into the host (security review
H2): as root with --install-deps it installs only Debian packages of the host's own suite
(VERSION_CODENAME), never removing anything; everything else is unpacked into the cache with
dpkg -x. Private sources lists accept Debian's archive key only (L7).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from torchsmith.errors import HostError
from torchsmith.host import system
from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_offers import SUITES
from torchsmith.proc import HOST
from torchsmith.sources import apt as source_apt
from torchsmith.toolchains.cuda import apt
from torchsmith.toolchains.cuda.base import ProvideContext

FIX = Path(__file__).resolve().parents[2] / "fixtures"
KEYRING = "[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
BOOKWORM = HostFacts(os_id="debian", os_version="12", os_codename="bookworm")
TRIXIE = HostFacts(os_id="debian", os_version="13", os_codename="trixie")
NOBLE = HostFacts(os_id="ubuntu", os_version="24.04", os_codename="noble")
UNKNOWN = HostFacts(os_id="debian")  # testing/sid without VERSION_CODENAME, or not probed


def ctx(*, root: bool, install_deps: bool) -> ProvideContext:
    return ProvideContext(Path("/cache"), {}, HOST, is_root=root, install_deps=install_deps)


ROOT_INSTALL = ctx(root=True, install_deps=True)


def test_root_install_deps_on_bookworm_never_installs_trixie_cuda_124() -> None:
    how = apt.route(SUITES["12.4"], BOOKWORM, ROOT_INSTALL)
    assert how.kind == "unpack"
    assert "trixie" in how.reason and "debian bookworm" in how.reason


def test_ubuntu_host_never_gets_debian_packages_installed() -> None:
    assert apt.route(SUITES["11.8"], NOBLE, ROOT_INSTALL).kind == "unpack"


def test_unknown_codename_is_treated_as_foreign() -> None:
    assert apt.route("bookworm", UNKNOWN, ROOT_INSTALL).kind == "unpack"


def test_host_own_suite_as_root_with_install_deps_is_installed() -> None:
    assert apt.route(SUITES["11.8"], BOOKWORM, ROOT_INSTALL).kind == "install"
    assert apt.route(SUITES["12.4"], TRIXIE, ROOT_INSTALL).kind == "install"


@pytest.mark.parametrize(("root", "install_deps"), [(False, False), (False, True), (True, False)])
def test_without_root_and_install_deps_it_always_unpacks(root: bool, install_deps: bool) -> None:
    how = apt.route("bookworm", BOOKWORM, ctx(root=root, install_deps=install_deps))
    assert how.kind == "unpack" and "nothing on the system changes" in how.reason


@pytest.mark.parametrize(
    ("cuda", "host"), list(itertools.product(SUITES, [BOOKWORM, TRIXIE, NOBLE, UNKNOWN]))
)
def test_dash_y_only_ever_with_the_hosts_own_suite(cuda: str, host: HostFacts) -> None:
    how = apt.route(SUITES[cuda], host, ROOT_INSTALL)
    if how.kind == "install":
        assert (host.os_id, host.os_codename) == ("debian", SUITES[cuda])


def test_install_argv_removes_nothing_and_uses_only_the_private_suite_lists() -> None:
    debs = [Path("/c/debs/nvidia-cuda-dev_11.8_amd64.deb")]
    argv = apt.install_argv(Path("/c/apt"), debs)
    assert argv == [
        "apt-get",
        "-oDir::Etc::SourceList=/c/apt/sources.list",
        "-oDir::Etc::SourceParts=/dev/null",
        "-oDir::State::Lists=/c/apt/lists",
        "install", "-y", "--no-remove", "--no-install-recommends", debs[0],
    ]  # fmt: skip
    # that private list names one suite only, which route() allows only when it is the host's
    assert apt.sources_list("bookworm").split()[3] == "bookworm"


def test_unpack_argv_is_dpkg_x_into_the_cache() -> None:
    deb, prefix = Path("/c/debs/a.deb"), Path("/c/staging/debroot")
    assert apt.unpack_argv(deb, prefix) == ["dpkg", "-x", deb, prefix]


def test_private_cuda_sources_list_accepts_only_debians_key() -> None:
    assert apt.sources_list("trixie") == (
        f"deb {KEYRING} http://deb.debian.org/debian trixie main contrib non-free\n"
    )


def test_private_deb_src_list_accepts_only_debians_key(tmp_path: Path) -> None:
    lines = source_apt.AptConfig(tmp_path).sources_text().splitlines()
    mirror = "http://deb.debian.org/debian"
    assert lines == [f"deb-src {KEYRING} {mirror} {s} main" for s in ("bookworm", "trixie")]


def test_missing_debian_keyring_is_a_host_error_naming_the_package(tmp_path: Path) -> None:
    cfg = source_apt.AptConfig(tmp_path / "apt", keyring=tmp_path / "absent.gpg")
    with pytest.raises(HostError, match=r"absent\.gpg") as info:
        source_apt.prepare(cfg)
    assert "apt-get install debian-archive-keyring" in info.value.hint
    assert not (tmp_path / "apt").exists()


@pytest.mark.parametrize(
    ("fixture", "codename"),
    [("host/os-release-debian12", "bookworm"), ("device-h100/os-release", "noble")],
)
def test_host_codename_read_from_os_release(tmp_path: Path, fixture: str, codename: str) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text((FIX / fixture).read_text())
    values = system.os_release_values(tmp_path)
    assert values is not None and values["VERSION_CODENAME"] == codename


def test_probed_system_facts_carry_the_codename(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text((FIX / "host/os-release-debian12").read_text())
    facts = system.probe_system({}, tmp_path, runner=HOST, root=tmp_path)
    assert (facts.os_id, facts.os_version, facts.os_codename) == ("debian", "12", "bookworm")


def test_inside_torchsmiths_build_container_the_toolkit_is_unpacked_into_the_mounted_cache() -> (
    None
):
    inside = ProvideContext(
        Path("/cache"),
        {"TORCHSMITH_IN_CONTAINER": "buildah"},
        HOST,
        is_root=True,
        install_deps=True,
    )
    how = apt.route(SUITES["11.8"], BOOKWORM, inside)
    assert how.kind == "unpack" and "kept for the next run" in how.reason
