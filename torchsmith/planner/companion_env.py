"""The variables of a companion's build, spelled the way that companion release reads them, each
with its reason and source, and the distribution packages its build needs. Pure."""

from __future__ import annotations

from torchsmith.plan_types import EnvValue, TorchFacts
from torchsmith.planner.companion_without import without_env

VISION = "pytorch/vision@v{v}:setup.py"
AUDIO = "pytorch/audio@v{v}:tools/setup_helpers/extension.py"
CPP_EXTENSION = "pytorch/pytorch@v{v}:torch/utils/cpp_extension.py"


def _arch_env(arch_list: str, torch: str) -> EnvValue:
    src = CPP_EXTENSION.format(v=torch)
    return EnvValue(
        name="TORCH_CUDA_ARCH_LIST",
        value=arch_list,
        reason=f"the plan's GPU archs; torch.utils.cpp_extension turns the list into -gencode "
        f"flags ({src}: _get_cuda_arch_flags) and torch's CMake package the same "
        "(share/cmake/Caffe2/public/cuda.cmake); without it the build would ask a GPU",
    )


def _cuda_switch(name: str, torch: str, arch_list: str | None, off: str, on: str) -> list[EnvValue]:
    """A companion's CUDA switch (``off``/``on``: the reasons) and, on, the plan's archs."""
    if arch_list is None:
        return [EnvValue(name=name, value="0", reason=off)]
    return [EnvValue(name=name, value="1", reason=on), _arch_env(arch_list, torch)]


def _vision_cuda(version: str, torch: str, arch_list: str | None) -> list[EnvValue]:
    src = VISION.format(v=version)
    off = f"CPU ops only (--cpu); torch {torch}'s own kernels are unaffected ({src})"
    on = (
        f"compile the CUDA ops (torchvision/csrc/ops/cuda) although the build machine has no "
        f"GPU ({src})"
    )
    return _cuda_switch("FORCE_CUDA", torch, arch_list, off, on)


def _vision_env(version: str, torch: str, arch_list: str | None) -> list[EnvValue]:
    src = VISION.format(v=version)
    gpu = (
        "this build is CPU-only"
        if arch_list is None
        else "the module would load libnvjpeg.so, which the torch it is built against does not "
        "bring (its Requires-Dist has no nvJPEG)"
    )
    return [
        EnvValue(
            name="TORCHVISION_USE_PNG",
            value="1",
            reason=f"decode PNG (libpng; Debian libpng-dev) ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_JPEG",
            value="1",
            reason=f"decode JPEG (libjpeg; Debian libjpeg62-turbo-dev) ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_WEBP",
            value="0",
            reason=f"WebP needs libwebp-dev, not among the checked build dependencies ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_NVJPEG",
            value="0",
            reason=f"GPU JPEG decoding (nvJPEG) left out: {gpu} ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_FFMPEG",
            value="0",
            reason=f"video decoding (FFmpeg) left out: needs FFmpeg's dev libraries ({src})",
        ),
        EnvValue(
            name="TORCHVISION_USE_VIDEO_CODEC",
            value="0",
            reason=f"GPU video decoding (NVDEC) left out: needs NVIDIA's Video Codec SDK, which "
            f"no toolkit holds ({src})",
        ),
        *_vision_cuda(version, torch, arch_list),
    ]


def _audio_cuda(version: str, torch: str, arch_list: str | None) -> list[EnvValue]:
    src = AUDIO.format(v=version)
    off = f"CPU ops only (--cpu); the default is torch.backends.cuda.is_built() ({src})"
    on = (
        f"compile libtorchaudio's CUDA kernels (RNN-T loss, forced alignment, IIR filter) with "
        f"the provisioned toolkit ({src})"
    )
    return _cuda_switch("USE_CUDA", torch, arch_list, off, on)


def _audio_env(version: str, torch: str, arch_list: str | None) -> list[EnvValue]:
    src = AUDIO.format(v=version)
    sox = f"pytorch/audio@v{version}:third_party/sox/CMakeLists.txt"
    return [
        *_audio_cuda(version, torch, arch_list),
        EnvValue(name="USE_ROCM", value="0", reason=f"not a ROCm build ({src})"),
        EnvValue(
            name="USE_FFMPEG",
            value="0",
            reason=f"FFmpeg I/O (torio) left out: needs FFmpeg's dev libraries ({src})",
        ),
        EnvValue(
            name="BUILD_SOX",
            value="0",
            reason=f"BUILD_SOX=1 downloads sox 14.4.2 from SourceForge while configuring ({sox}); "
            "audio files load through the soundfile backend instead",
        ),
        EnvValue(
            name="BUILD_CUDA_CTC_DECODER",
            value="0",
            reason=f"the CUDA CTC beam-search decoder (cuctc, its own CUDA library) is left out "
            f"of the build ({src})",
        ),
    ]


def _visible_devices(arch_list: str | None) -> EnvValue:
    why = (
        "hiding the GPUs keeps the build CPU-only as planned"
        if arch_list is None
        else "hiding the GPUs makes the archs the plan's TORCH_CUDA_ARCH_LIST, never the "
        "build machine's GPU"
    )
    return EnvValue(
        name="CUDA_VISIBLE_DEVICES",
        value="",
        reason="setup.py turns CUDA sources on when torch.cuda.is_available() (and a "
        f"CUDA_HOME is found); {why}",
    )


def companion_env(
    name: str,
    version: str,
    facts: TorchFacts,
    jobs: int,
    arch_list: str | None = None,
    *,
    without: tuple[str, ...] = (),
) -> list[EnvValue]:
    """Every variable of one companion's build, with its reason and source. ``arch_list``:
    the plan's TORCH_CUDA_ARCH_LIST for a build of the companion's CUDA ops (None: CPU);
    ``without``: the parts left out (companion_without, checked against the release by
    :func:`torchsmith.planner.companion_without.parts_ok`)."""
    setup = (VISION if name == "torchvision" else "pytorch/audio@v{v}:setup.py").format(v=version)
    own_env = _vision_env if name == "torchvision" else _audio_env
    return [
        EnvValue(
            name="BUILD_VERSION",
            value=version,
            reason=f"the wheel's version is the release, not version.txt + a git hash ({setup})",
        ),
        EnvValue(
            name="PYTORCH_VERSION",
            value=facts.version,
            reason=f"Requires-Dist pins torch=={facts.version}, the torch it is built against, "
            f"so pip can never swap it ({setup})",
        ),
        *own_env(version, facts.version, arch_list),
        *without_env(name, version, without),
        _visible_devices(arch_list),
        EnvValue(
            name="MAX_JOBS",
            value=str(jobs),
            reason="parallel compile jobs of torch.utils.cpp_extension (the plan's MAX_JOBS)",
        ),
        EnvValue(
            name="CMAKE_BUILD_PARALLEL_LEVEL",
            value=str(jobs),
            reason="parallel jobs of CMake-driven builds (torchaudio), the same MAX_JOBS",
        ),
    ]


JPEG_DEV = {
    "ubuntu": "libjpeg-turbo8-dev",
    "debian": "libjpeg62-turbo-dev",
}
"""libjpeg's headers (jpeglib.h) by distribution: https://packages.debian.org/bookworm/libjpeg62-turbo-dev,
https://packages.ubuntu.com/noble/libjpeg-turbo8-dev."""


def system_packages(name: str, version: str, os_id: str | None) -> list[EnvValue]:
    """The packages a companion's build needs on this machine (the switches above say which)."""
    if name != "torchvision":
        return []  # torchaudio: sox and FFmpeg are off (BUILD_SOX=0, USE_FFMPEG=0)
    src = f"{VISION.format(v=version)}: its image extension looks for these headers"
    jpeg = JPEG_DEV.get(os_id or "", JPEG_DEV["debian"])
    return [
        EnvValue(name=jpeg, value="jpeglib.h", reason=f"TORCHVISION_USE_JPEG=1 ({src})"),
        EnvValue(name="libpng-dev", value="png.h", reason=f"TORCHVISION_USE_PNG=1 ({src})"),
    ]
