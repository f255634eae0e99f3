"""The optional parts a companion's build can leave out (``companion_without.<name>``): each part's
build switch, the releases that read it and where that was read. Part of the spec model (the
spec refuses an unknown part at load); the planner refuses a part the planned release does not
have (:mod:`torchsmith.planner.companion_without`).

torchaudio's ``tools/setup_helpers/extension.py`` reads each switch from the environment (on by
default) and passes it to CMake (``-DBUILD_RNNT:BOOL=…``), whose ``src/libtorchaudio/
CMakeLists.txt`` adds the part's sources only ``if(BUILD_RNNT)`` (from 2.10 the same file lists
them for torch.utils.cpp_extension). torchvision's ``setup.py`` has no switch for one of its
ops: there is nothing of it to leave out. Releases are checked with :mod:`packaging.version`."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

AUDIO_SETUP = "pytorch/audio@v{v}:tools/setup_helpers/extension.py"
AUDIO_CMAKE = "pytorch/audio@v2.6.0:src/libtorchaudio/CMakeLists.txt"
AUDIO_PROBE = "pytorch/audio@v{v}:torchaudio/_extension/__init__.py"
AUDIO_CPP_EXT = (
    "pytorch/audio@main:tools/setup_helpers/extension.py as moved to torch.utils.cpp_extension "
    "(py_limited_api: the abi3 libraries of the 2.11.0 wheel)"
)


@dataclass(frozen=True)
class Part:
    """One part of a companion that its build can leave out."""

    companion: str
    name: str
    switch: str  # the environment variable the companion's build reads (0 leaves it out)
    what: str  # what the part is, and what is missing without it
    first: str  # the first release whose build reads the switch
    last: str  # the last one read (a later release is refused until it is read too)
    source: str  # where the switch and the range were read
    reader: str = AUDIO_SETUP  # the file of release {v} that reads the switch


PARTS: tuple[Part, ...] = (
    Part(
        "torchaudio",
        "rnnt",
        "BUILD_RNNT",
        "the RNN-T loss (torchaudio.functional.rnnt_loss, transforms.RNNTLoss; in 2.6.0 "
        "rnnt/: 7 C++ and 3 CUDA sources)",
        "0.10.0",
        "2.11.0",
        f"{AUDIO_SETUP.format(v='2.6.0')} (_BUILD_RNNT), {AUDIO_CMAKE} (if(BUILD_RNNT)); "
        f"{AUDIO_CPP_EXT} still reads it; named BUILD_TRANSDUCER until "
        "pytorch/audio#1603 (merged 2021-06-22, after 0.9.0)",
    ),
    Part(
        "torchaudio",
        "rir",
        "BUILD_RIR",
        "room impulse response simulation (torchaudio.functional.simulate_rir_ism, "
        "prototype ray_tracing; in 2.6.0 rir/: 2 C++ sources)",
        "2.0.1",
        "2.9.1",
        f"{AUDIO_SETUP.format(v='2.6.0')} (_BUILD_RIR), {AUDIO_CMAKE} (if(BUILD_RIR)); "
        f"{AUDIO_PROBE.format(v='2.0.1')} first asks is_rir_available (PyPI wheel), "
        f"{AUDIO_PROBE.format(v='2.10.0')} no longer (the extension removed: pytorch/audio#4124)",
    ),
    Part(
        "torchaudio",
        "align",
        "BUILD_ALIGN",
        "CTC forced alignment (torchaudio.functional.forced_align; in 2.6.0 forced_align/: 2 "
        "C++ and 1 CUDA source)",
        "2.1.0",
        "2.11.0",
        f"{AUDIO_SETUP.format(v='2.6.0')} (_BUILD_ALIGN), {AUDIO_CMAKE} (if(BUILD_ALIGN)); "
        f"{AUDIO_PROBE.format(v='2.1.0')} first asks is_align_available (PyPI wheel; 2.0.1's "
        f"does not), {AUDIO_CPP_EXT} still reads it",
    ),
)


def parts_of(companion: str) -> tuple[Part, ...]:
    """The parts ``companion``'s build can leave out (none for torchvision and torchtext)."""
    return tuple(p for p in PARTS if p.companion == companion)


def part(companion: str, name: str) -> Part | None:
    return next((p for p in parts_of(companion) if p.name == name), None)


def known_parts(companion: str) -> str:
    """The parts of ``companion`` as an error message names them."""
    parts = parts_of(companion)
    if not parts:
        return f"{companion}'s build has no switch that leaves one of its parts out"
    return "known parts: " + ", ".join(f"{p.name} ({p.switch})" for p in parts)


def check_parts(companion: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` stripped, each once, in the order given; a name that is not a part of
    ``companion`` is a :class:`ValueError` naming the known ones (pydantic reports it)."""
    wanted = tuple(dict.fromkeys(n.strip() for n in names))
    unknown = [n for n in wanted if part(companion, n) is None]
    if not unknown:
        return wanted
    if not parts_of(companion):
        raise ValueError(
            f"{unknown} cannot be left out of {companion}: {known_parts(companion)} (its "
            f"setup.py builds every op); drop companion_without.{companion}"
        )
    raise ValueError(
        f"{unknown} {'is not a part' if len(unknown) == 1 else 'are not parts'} of {companion} "
        f"that its build can leave out; {known_parts(companion)}: name those, comma-separated "
        f"(--companion-without {companion}=rnnt,rir)"
    )


def has_switch(p: Part, version: str) -> bool:
    """Whether release ``version`` of the companion reads ``p``'s switch (False when the
    version cannot be read)."""
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    return Version(p.first) <= v <= Version(p.last)
