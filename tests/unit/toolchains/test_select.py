"""Toolchain selection is pure: compilers and toolkit providers chosen from KB + HostFacts,
and the refusals that name what would work and how to get it."""

from __future__ import annotations

import pytest

from torchsmith.errors import PlanError
from torchsmith.host.model import Compiler, CudaToolkit, HostFacts, Tool
from torchsmith.kb import load
from torchsmith.toolchains.compiler import install_hint
from torchsmith.toolchains.cuda import select_toolkit, toolkit_problem
from torchsmith.toolchains.cuda.apt import AptProvider
from torchsmith.toolchains.cuda.pypi import PypiProvider

KB = load()
GCC12 = Compiler(family="gcc", version="12.2.0", cc="/usr/bin/gcc-12", cxx="/usr/bin/g++-12")
GCC11 = Compiler(family="gcc", version="11.3.0", cc="/usr/bin/gcc-11", cxx="/usr/bin/g++-11")
GCC8 = Compiler(family="gcc", version="8.5.0", cc="/usr/bin/gcc-8", cxx="/usr/bin/g++-8")
CLANG14 = Compiler(
    family="clang", version="14.0.6", cc="/usr/bin/clang-14", cxx="/usr/bin/clang++-14"
)
APT_TOOLS = {n: Tool(name=n, path=f"/usr/bin/{n}") for n in ("apt-get", "dpkg")}


def host(*compilers: Compiler, os_id: str = "debian", **kw: object) -> HostFacts:
    return HostFacts(os_id=os_id, compilers=list(compilers), **kw)  # type: ignore[arg-type]


def test_install_hint_names_each_package_manager() -> None:
    assert install_hint("gcc", 11).command("") == (
        "apt-get install gcc-11 g++-11 (Debian/Ubuntu) or "
        "dnf install gcc-toolset-11 (RHEL/Rocky/Alma 8+; then scl enable gcc-toolset-11 bash)"
    )
    assert install_hint("gcc", 11).command("rocky").startswith("dnf install gcc-toolset-11")


def test_clang_hint_names_each_package_once_and_no_invented_rpm() -> None:
    """New-user trial §3 #13: it read `apt-get install clang-14 clang-14; dnf install clang-14`."""
    text = install_hint("clang", 14).command("")
    assert "apt-get install clang-14 (Debian/Ubuntu)" in text
    assert "clang-14 clang-14" not in text
    assert "dnf install clang (" in text and "may not be 14" in text
    assert "llvm-toolset-14" not in text and "dnf install clang-14" not in text


def test_toolkit_providers_in_order() -> None:
    local = CudaToolkit(
        root="/usr/local/cuda-11.8",
        nvcc="/usr/local/cuda-11.8/bin/nvcc",
        version="11.8",
        origin="/usr/local/cuda-X",
    )
    provider, reason = select_toolkit("11.8", HostFacts(cuda_toolkits=[local], tools=APT_TOOLS))
    assert provider == "system"
    assert "/usr/local/cuda-11.8" in reason
    provider, reason = select_toolkit("11.8", HostFacts(tools=APT_TOOLS))
    assert provider == "apt"
    assert "bookworm non-free" in reason
    provider, reason = select_toolkit("13.0", HostFacts())
    assert provider == "pypi"
    assert "nvidia/cu13/" in reason
    provider, _ = select_toolkit("12.4", HostFacts(tools=APT_TOOLS))
    assert provider == "apt"


def test_pypi_says_libraries_only_for_11_and_12() -> None:
    offer = PypiProvider().offer("12.1", HostFacts())
    assert offer.capability == "libraries"
    assert "no nvcc" in offer.reason
    assert PypiProvider().offer("13.2", HostFacts()).capability == "toolkit"
    assert PypiProvider().offer("13.0", HostFacts(machine="ppc64le")).capability == "none"


def test_unsuppliable_cuda_is_refused_naming_container_apt_repo_and_conda() -> None:
    with pytest.raises(PlanError) as err:
        select_toolkit("12.1", HostFacts(tools=APT_TOOLS))
    text = err.value.render()
    assert "no provider can supply a CUDA 12.1 compiler" in text
    assert "pypi: CUDA 12.1: PyPI's -cu12 wheels" in text
    assert "nvidia/cuda:12.1" in text
    assert "cuda-toolkit-12-1" in text
    assert "conda install -c nvidia cuda-nvcc=12.1" in text
    problem = toolkit_problem("11.7", HostFacts(tools=APT_TOOLS))
    assert problem is not None
    assert problem.field == "toolkit"
    assert toolkit_problem("11.8", HostFacts(tools=APT_TOOLS)) is None


def test_apt_needs_apt_tools_and_wanted_provider_is_honoured() -> None:
    assert AptProvider().offer("11.8", HostFacts()).capability == "none"
    assert AptProvider().offer("11.8", HostFacts(os_id="ubuntu")).capability == "toolkit"
    assert AptProvider().offer("11.8", HostFacts(os_id="debian", machine="aarch64")).capability == (
        "none"
    )
    with pytest.raises(PlanError, match=r"apt: no Debian suite packages CUDA 13\.0"):
        select_toolkit("13.0", HostFacts(tools=APT_TOOLS), wanted="apt")
