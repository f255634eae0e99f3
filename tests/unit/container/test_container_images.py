"""Images as knowledge: the nvidia/cuda tag of each CUDA release (renamed and deleted tags with
dates and sources), the OS each was built for, Debian suites for CPU builds, --base-image."""

from __future__ import annotations

import pytest

from torchsmith.container.base import choose_base
from torchsmith.container.images import image_facts, load_images
from torchsmith.errors import PlanError, UnknownEntryError
from torchsmith.host.model import HostFacts

KB = load_images()


@pytest.mark.parametrize(
    ("cuda", "python", "tag"),
    [
        ("9.0", "3.5", "docker.io/nvidia/cuda:9.0-cudnn7-devel-ubuntu16.04"),
        ("10.0", "3.6", "docker.io/nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04"),
        ("11.0", "3.8", "docker.io/nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04"),
        ("11.1", "3.6", "docker.io/nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04"),
    ],
)
def test_each_cuda_release_names_its_devel_image_on_the_os_with_that_python(
    cuda: str, python: str, tag: str
) -> None:
    base = choose_base(KB, cuda, python)
    assert base.image == tag and base.python_from == "os"
    assert base.runtime == tag.replace("-devel-", "-runtime-")


def test_a_python_no_os_ships_comes_from_uv_on_the_newest_os() -> None:
    base = choose_base(KB, "11.1", "3.9")
    assert base.image.endswith("11.1.1-cudnn8-devel-ubuntu20.04")
    assert (base.python, base.python_from) == ("3.9", "uv") and "via uv" in base.reason


def test_deleted_tags_say_when_with_the_source_and_the_way_out() -> None:
    (warning,) = choose_base(KB, "9.0", "3.5").warnings
    assert "deleted from Docker Hub by NVIDIA (2023-07" in warning
    assert "github.com/NVIDIA/cudf-spark-examples/pull/311" in warning
    assert "--base-image" in warning


def test_renamed_tags_name_the_old_spelling() -> None:
    (warning,) = choose_base(KB, "11.0", "3.8").warnings
    assert "nvidia/cuda:11.0-cudnn8-devel-ubuntu20.04 no longer resolves (2022-06)" in warning
    assert KB.cuda("11.0").sources["renamed_from"].endswith("cresset/issues/32")


def test_every_fact_has_a_source() -> None:
    for record in (*KB.oses, *KB.cuda_images, *KB.tools):
        assert record.sources, record


def test_cpu_builds_take_a_debian_suite_matching_the_python() -> None:
    assert choose_base(KB, None, None).image == "docker.io/library/debian:bookworm"
    trixie = choose_base(KB, None, "3.13")
    assert trixie.image == "docker.io/library/debian:trixie" and trixie.python_from == "os"


def test_base_image_override_keeps_the_facts_of_the_image_it_stands_for() -> None:
    base = choose_base(KB, "9.0", "3.5", "registry.example/cuda:9.0-devel")
    assert base.image == "registry.example/cuda:9.0-devel" and base.os.id == "ubuntu16.04"
    assert base.reason.startswith("asked (--base-image)") and not base.warnings
    assert base.runtime.endswith("9.0-cudnn7-runtime-ubuntu16.04")
    debian = choose_base(KB, None, "3.11", "localhost/my-bookworm")
    assert (debian.image, debian.runtime) == ("localhost/my-bookworm", "localhost/my-bookworm")
    with pytest.raises(PlanError, match="not an image reference"):
        choose_base(KB, "9.0", "3.5", "two words")


def test_unknown_cuda_image_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownEntryError) as info:
        KB.cuda("8.0")
    assert "CUDA images known: 9.0, 10.0" in info.value.render()


def test_image_facts_are_the_images_not_the_hosts() -> None:
    machine = HostFacts(cores=64, ram_gib=256.0, os_id="debian", glibc="2.36")
    facts = image_facts(KB.os("ubuntu16.04"), "9.0", machine)
    assert (facts.glibc, facts.compilers[0].label, facts.pythons[0].minor) == (
        "2.23",
        "gcc-5",
        "3.5",
    )
    assert facts.cuda_toolkits[0].version == "9.0" and facts.cores == 64
