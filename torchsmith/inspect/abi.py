"""The libstdc++ ABI torch was compiled with (``_GLIBCXX_USE_CXX11_ABI``), read from what its
libraries export and cross-checked with the CMake config the wheel ships.

Only torch's *own* mangled names count (``c10::``, ``at::``, ``torch::``): a library linked with
``-static-libstdc++`` also exports libstdc++'s own ``std::__cxx11`` symbols (torch 2.6.0's
``libtorch_cpu.so`` exports 56 such, e.g. ``std::logic_error::logic_error(std::__cxx11::
basic_string const&)``) whatever ABI torch itself used. A torch name that takes a
``std::string`` spells it ``NSt7__cxx1112basic_string…`` under the new ABI and ``Ss`` under
the old one (Itanium C++ ABI, "Compression": ``Ss`` is ``std::basic_string<char, …>``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

TORCH_PREFIXES = ("_ZN3c10", "_ZNK3c10", "_ZN2at", "_ZNK2at", "_ZN5torch", "_ZNK5torch")
# a name of torch's own, at the table's start or after the NUL that ends the name before it; the
# literal NUL lets the regex engine jump between candidates instead of trying every byte (a
# lookbehind did: 0.35 s on a 64 MiB table without NULs, now 0.05 s)
_TORCH_NAME = re.compile(rb"_ZNK?(?:3c10|2at|5torch)[^\x00]{0,4096}")
_AFTER_NUL = re.compile(rb"\x00(_ZNK?(?:3c10|2at|5torch)[^\x00]{0,4096})")
OLD_STRING = re.compile(r"Ss(?![a-z])")
"""``std::string`` of the old ABI inside a mangled name ('RKSs': const std::string&); an
identifier holding 'Ss' is followed by a lower-case letter."""
NEW_STRING = "__cxx11"
_CMAKE_FLAG = re.compile(r"-D_GLIBCXX_USE_CXX11_ABI=([01])\b")
_DOMINANT = 20  # one spelling must outnumber the other this many times to decide


@dataclass(frozen=True)
class AbiMarks:
    """How many of torch's own symbol names use each ``std::string`` spelling."""

    new: int = 0
    old: int = 0
    new_example: str | None = None
    old_example: str | None = None

    def __add__(self, other: AbiMarks) -> AbiMarks:
        return AbiMarks(
            new=self.new + other.new,
            old=self.old + other.old,
            new_example=self.new_example or other.new_example,
            old_example=self.old_example or other.old_example,
        )


def marks_of_names(names: Iterable[str]) -> AbiMarks:
    """Count the two spellings among ``names`` (any symbol names; non-torch ones are skipped)."""
    new = old = 0
    new_ex = old_ex = None
    for name in names:
        if not name.startswith(TORCH_PREFIXES):
            continue
        if NEW_STRING in name:
            new, new_ex = new + 1, new_ex or name
        elif OLD_STRING.search(name):
            old, old_ex = old + 1, old_ex or name
    return AbiMarks(new, old, new_ex, old_ex)


def marks_of_strtab(strtab: bytes) -> AbiMarks:
    """The same, over every name of a raw ELF string table (``.dynstr``): torch's names are
    found with one regex scan instead of a walk over 200,000 symbol entries."""
    first = _TORCH_NAME.match(strtab)
    names = ([first.group()] if first else []) + _AFTER_NUL.findall(strtab)
    return marks_of_names(m.decode(errors="replace") for m in names)


def symbols_verdict(marks: AbiMarks) -> bool | None:
    """True/False when one spelling clearly dominates; None when neither is seen or both are
    (a mixed build, or names this reading does not understand)."""
    if marks.new > _DOMINANT * marks.old:
        return True
    if marks.old > _DOMINANT * marks.new:
        return False
    return None


def cmake_abi(text: str) -> bool | None:
    """The ``-D_GLIBCXX_USE_CXX11_ABI=N`` torch's ``TorchConfig.cmake`` hands to extensions
    (torch ≤ 2.6 writes it; newer releases, new ABI only, write nothing)."""
    found = {m[1] for m in _CMAKE_FLAG.finditer(text)}
    return (found.pop() == "1") if len(found) == 1 else None


def describe(marks: AbiMarks, where: str) -> str:
    parts = []
    if marks.new:
        parts.append(f"{marks.new} torch symbols with std::__cxx11 (e.g. {marks.new_example})")
    if marks.old:
        parts.append(f"{marks.old} with the old std::string 'Ss' (e.g. {marks.old_example})")
    return f"{where}: " + ("; ".join(parts) or "no torch symbol takes a std::string")


def decide(marks: AbiMarks, where: str, cmake: bool | None) -> tuple[bool | None, str]:
    """The ABI and its evidence: the exported symbols decide, TorchConfig.cmake cross-checks
    (and decides alone when the symbols cannot)."""
    from_symbols = symbols_verdict(marks)
    evidence = describe(marks, where)
    if cmake is None:
        return from_symbols, evidence
    flag = f"TorchConfig.cmake sets -D_GLIBCXX_USE_CXX11_ABI={int(cmake)}"
    if from_symbols is None:
        return cmake, f"{flag}; {evidence}"
    if from_symbols != cmake:
        return None, f"the libraries and the CMake config disagree: {evidence}; but {flag}"
    return from_symbols, f"{evidence}; {flag} (agrees)"
