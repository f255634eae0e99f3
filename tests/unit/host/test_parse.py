"""Pure parsers of torchsmith.host.parse on real recorded output (tests/fixtures/host,
tests/fixtures/device-h100)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.host import parse

FIX = Path(__file__).resolve().parents[2] / "fixtures"
HOST = FIX / "host"
DEV = FIX / "device-h100"


def text(path: Path) -> str:
    return path.read_text()


def test_nvcc_version_here_and_on_device() -> None:
    assert parse.parse_nvcc_version(text(HOST / "nvcc-version-13.0.txt")) == ("13.0", "13.0.88")
    assert parse.parse_nvcc_version(text(DEV / "nvcc-version.txt")) == ("13.0", "13.0.88")


def test_nvcc_version_rejects_other_text() -> None:
    assert parse.parse_nvcc_version(text(HOST / "gcc-version.txt")) is None


def test_nvcc_dryrun_names_the_real_nvcc_folder() -> None:
    assert parse.parse_nvcc_dryrun_bin(text(HOST / "nvcc-dryrun.txt")) == "/usr/local/cuda-13.0/bin"
    assert parse.parse_nvcc_dryrun_bin(text(DEV / "nvcc-dryrun.txt")) == "/usr/local/cuda/bin"
    assert parse.parse_nvcc_dryrun_bin(text(HOST / "nvcc-version-13.0.txt")) is None


def test_a_plain_exec_wrapper_names_what_it_runs() -> None:
    """This machine's nvcc wrapper (recorded): the program follows from its text alone."""
    wrapper = text(HOST / "nvcc-wrapper.sh")
    assert parse.parse_exec_wrapper(wrapper) == "/usr/local/cuda-13.0/bin/nvcc"
    commented = wrapper.replace("\n", "\n# CUDA 13.0, as installed\n\n", 1)
    assert parse.parse_exec_wrapper(commented) == "/usr/local/cuda-13.0/bin/nvcc"
    quoted = wrapper.replace("exec /usr/local/cuda-13.0/bin/nvcc", 'exec "/opt/cuda/bin/nvcc"')
    assert parse.parse_exec_wrapper(quoted) == "/opt/cuda/bin/nvcc"


@pytest.mark.parametrize(
    "change",
    [
        ("#!/bin/sh", "#!/usr/bin/env sh"),  # the shell found on PATH
        ("#!/bin/sh", "#!/bin/sh -e"),
        ("#!/bin/sh", "#!/usr/bin/python3"),
        ("/usr/local/cuda-13.0/bin/nvcc", "$CUDA_HOME/bin/nvcc"),  # a variable decides
        ("/usr/local/cuda-13.0/bin/nvcc", "$(ls -d /usr/local/cuda-* | tail -1)/bin/nvcc"),
        ("/usr/local/cuda-13.0/bin/nvcc", "cuda/bin/nvcc"),  # relative: where it runs decides
        ("/usr/local/cuda-13.0/bin/nvcc", "/usr/local/cuda-*/bin/nvcc"),  # a glob
        ('"$@"', '"$@" -ccbin gcc-12'),  # more than its arguments
        ('"$@"', ""),
        ("exec ", "PATH=/opt/bin:$PATH\nexec "),  # a second command
        ("exec ", 'test -x /opt/cuda/bin/nvcc && exec /opt/cuda/bin/nvcc "$@"\nexec '),
    ],
)
def test_any_other_script_is_not_read_but_asked(change: tuple[str, str]) -> None:
    wrapper = text(HOST / "nvcc-wrapper.sh").replace(*change)
    assert parse.parse_exec_wrapper(wrapper) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (HOST / "gcc-dumpfullversion.txt", "12.2.0"),
        (HOST / "gxx-dumpfullversion.txt", "12.2.0"),
        (DEV / "gcc-dumpfullversion.txt", "13.3.0"),
    ],
)
def test_gcc_dumpversion(name: Path, expected: str) -> None:
    assert parse.parse_gcc_dumpversion(text(name)) == expected


def test_gcc_dumpversion_rejects_a_banner() -> None:
    assert parse.parse_gcc_dumpversion(text(HOST / "gcc-version.txt")) is None


def test_clang_version_not_found_in_gcc_banner() -> None:
    assert parse.parse_clang_version(text(HOST / "gcc-version.txt")) is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (HOST / "cmake-version.txt", "3.25.1"),
        (DEV / "cmake-version.txt", "4.4.3"),
        (HOST / "ninja-version.txt", "1.11.1"),
        (DEV / "ninja-version.txt", "1.13.2"),
        (HOST / "git-version.txt", "2.39.5"),
        (HOST / "docker-version.txt", "28.2.2"),
        (HOST / "gcc-version.txt", "12.2.0"),
    ],
)
def test_first_version(path: Path, expected: str) -> None:
    assert parse.first_version(text(path)) == expected


def test_first_version_of_nothing() -> None:
    assert parse.first_version("") is None
    assert parse.first_version("\nno digits here\n1.2") is None


def test_os_release_debian_and_ubuntu() -> None:
    deb = parse.parse_os_release(text(HOST / "os-release-debian12"))
    assert (deb["ID"], deb["VERSION_ID"], deb["VERSION_CODENAME"]) == ("debian", "12", "bookworm")
    ubu = parse.parse_os_release(text(DEV / "os-release"))
    assert (ubu["ID"], ubu["VERSION_ID"]) == ("ubuntu", "24.04")


def test_os_release_tolerates_garbage() -> None:
    assert parse.parse_os_release('junk\nID="unterminated\nVERSION_ID=1\n') == {"VERSION_ID": "1"}


def test_meminfo() -> None:
    assert parse.parse_meminfo_kib(text(HOST / "meminfo.txt")) == 24683656
    assert parse.parse_meminfo_kib(text(DEV / "meminfo.txt")) is not None
    assert parse.parse_meminfo_kib("nothing") is None


def test_ldd_version_glibc() -> None:
    assert parse.parse_ldd_version(text(HOST / "ldd-version.txt")) == "2.36"
    assert parse.parse_ldd_version(text(DEV / "ldd-version.txt")) == "2.39"
    assert parse.parse_ldd_version("") is None


def test_glibc_confstr() -> None:
    assert parse.parse_glibc_confstr("glibc 2.36") == "2.36"
    assert parse.parse_glibc_confstr("") is None


def test_python_versions() -> None:
    assert parse.parse_python_version(text(HOST / "python3-version.txt")) == "3.11.7"
    assert parse.parse_python_version(text(HOST / "python2-version.txt")) == "2.7.18"
    assert parse.parse_python_version(text(DEV / "python3-version.txt")) == "3.12.3"
    assert parse.parse_python_version(text(HOST / "pyenv-shim-fail.txt")) is None


def test_header_versions_cudnn_and_nccl() -> None:
    assert parse.parse_header_version(text(DEV / "cudnn_version.h.defines"), "CUDNN") == "9.19.0"
    assert parse.parse_header_version(text(DEV / "nccl.h.defines"), "NCCL") == "2.28.9"
    assert parse.parse_header_version(text(DEV / "nccl.h.defines"), "CUDNN") is None


def test_ldconfig_finds_cudnn_and_nccl_on_device_only() -> None:
    dev = text(DEV / "ldconfig-p.txt")
    assert parse.parse_ldconfig(dev, "libcudnn") == ["/lib/x86_64-linux-gnu/libcudnn.so.9"]
    assert parse.parse_ldconfig(dev, "libnccl") == ["/lib/x86_64-linux-gnu/libnccl.so.2"]
    assert parse.parse_ldconfig(text(HOST / "ldconfig-p.txt"), "libcudnn") == []


def test_soname_and_dist_info() -> None:
    assert parse.parse_soname_version("libcudnn.so.9.14.0", "libcudnn") == "9.14.0"
    assert parse.parse_soname_version("libcudnn_ops.so.9", "libcudnn") is None
    assert parse.parse_dist_info("nvidia_cudnn_cu13-9.19.0.56.dist-info") == (
        "nvidia_cudnn_cu13",
        "9.19.0.56",
    )
    assert parse.parse_dist_info("README") is None
    assert parse.short_version("9.19.0.56") == "9.19.0"


def test_clang_version_on_device() -> None:
    assert parse.parse_clang_version(text(DEV / "clang-16-version.txt")) == "16.0.6"
    assert parse.parse_clang_version(text(DEV / "clangxx-16-version.txt")) == "16.0.6"


def test_gcc_12_beside_gcc_13_on_device() -> None:
    assert parse.parse_gcc_dumpversion(text(DEV / "gcc-12-dumpfullversion.txt")) == "12.4.0"
    assert parse.parse_gcc_dumpversion(text(DEV / "gxx-12-dumpfullversion.txt")) == "12.4.0"
