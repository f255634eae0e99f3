"""The structural reader: the first real failure of a log as a typed error, before any rule.

The first error block (with the lines around it) is read by a fixed list of recognisers, most
telling first: a killed compiler, a missing header (gcc, clang, nvcc/EDG and MSVC wordings), an
undefined symbol or missing library at link time, a failure at import (missing shared library,
undefined symbol, missing module, a symbol version not found), a crash (segfault, abort, SIGILL),
a CMake error block (its wrapped lines joined), a compiler diagnostic, a pip/resolver error, a
Python exception, a ninja ``FAILED`` edge. Every pattern is an RE2 automaton (linear time).

:func:`normalise` rewrites clang/nvcc/lld phrasings and typographic quotes to gcc's wording, so a
rule written from gcc's message also matches the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import re2

from torchsmith.doctor.classify import FAILURE_CLASS, LINKERS
from torchsmith.doctor.classify import SIGNALLED as _SIGNALLED
from torchsmith.doctor.linear import MAX_LINE, compile_linear
from torchsmith.doctor.models import ErrorBlock, Evidence, TypedError

_rx = compile_linear


_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "`": "'", "«": '"', "»": '"'})
_REWRITES = (  # (RE2 pattern, replacement): clang/nvcc/msvc/lld wording -> gcc wording
    (_rx(r"'([^'\s]+)' file not found"), r"\1: No such file or directory"),
    (_rx(r'cannot open source file "([^"\s]+)"'), r"\1: No such file or directory"),
    (
        # MSVC's C1083, also localised (zh_CN) or machine-translated, after the quotes are plain
        _rx(r"(?:Cannot open include file|无法打开包括文件|can not open or include such file): "
            r"[\"']([^\"'\s]+)[\"']"),
        r"\1: No such file or directory",
    ),
    (_rx(r"use of undeclared identifier '([^'\s]+)'"), r"'\1' was not declared in this scope"),
    (_rx(r"ld\.lld: error: undefined symbol: (\S+)"), r"ld: undefined reference to '\1'"),
    (_rx(r"ld\.lld: error: unable to find library -l(\S+)"), r"ld: cannot find -l\1"),
    # strerror(ENOENT) and ld's "cannot find" as localised builds print them (zh_CN, de, fr, es)
    (
        _rx(
            r"没有那个文件或目录|File or directory does not exist|Datei oder Verzeichnis nicht "
            r"gefunden|Aucun fichier ou dossier de ce type|No existe el archivo o el directorio"
        ),
        "No such file or directory",
    ),
    (_rx(r"找不到 ?-l"), "cannot find -l"),
)


def normalise(text: str) -> str:
    """One message in gcc's wording: plain quotes, clang/nvcc/MSVC/lld phrasings rewritten,
    runs of white space as one space."""
    text = text.translate(_QUOTES)
    for regex, replacement in _REWRITES:
        text = regex.sub(replacement, text)
    # str.split, not an RE2 sub: google-re2's sub runs Python code per match, and a line of
    # thousands of words made this one rewrite most of a hostile log's time
    return " ".join(text.split())


@dataclass(frozen=True)
class _Recogniser:
    kind: str
    regex: re2._Regexp
    tool: str | None = None


def _r(kind: str, pattern: str, tool: str | None = None) -> _Recogniser:
    return _Recogniser(kind, _rx(pattern), tool)


# The order is the ranking: the first recogniser with a match anywhere in the block wins.
RECOGNISERS = (
    _r("killed", r"Killed signal terminated program (?P<tool>\S+)"),
    _r("killed", r"(?P<tool>cc1plus|cc1|cicc|ptxas|ld|nvcc)\S*:? (?:fatal error: )?out of memory"),
    _r("killed", r"(?P<tool>cicc|ptxas|nvlink|fatbinary)'? died due to signal 9\b"),
    _r(
        "killed",
        r"virtual memory exhausted|ld terminated with signal 9|signal 9 \[Killed\]|^\s*Killed\s*$",
    ),
    _r("killed", r"returned non-zero exit status (?:-9|137)\b|exit (?:status|code) 137\b"),
    # the kernel's OOM killer in dmesg/journal (mm/oom_kill.c): the killed task's name is the tool
    _r(
        "killed",
        r"(?:of memory(?: \(\w+\))?: Kill(?:ed)?|Killed|oom_reaper: reaped) process \d+ "
        r"\((?P<tool>[^)\s]+)\)",
    ),
    _r("killed", r"oom-kill:constraint=\S*,task=(?P<tool>[^,\s]+),pid="),
    _r("killed", r"(?:^|[\s\]])(?P<tool>[\w.+-]+) invoked oom-killer"),
    _r(
        "missing-header",
        # the including file where gcc/clang name it (`src.cpp:6:23: fatal error: x.h: ...`)
        r"(?:(?P<file>[^\s:>]+):\d+(?::\d+)?: (?:fatal )?)?"
        r"error(?: C\d+)?: (?P<header>[\w./+][\w./+-]*): No such file or directory",
        "gcc",
    ),
    _r("linker-undefined", r"undefined reference to '(?P<symbol>[^']+)'", "ld"),
    _r("linker-undefined", r"Undefined symbols for architecture \S+", "ld64"),
    _r("linker-missing-lib", r"cannot find -l(?P<library>[\w.+-]+)", "ld"),
    _r("linker-missing-lib", r"library not found for -l(?P<library>[\w.+-]+)", "ld64"),
    _r("linker-missing-lib", r"No rule to make target '(?P<library>[^']+\.(?:so|a)[\d.]*)'"),
    _r("import-missing-lib", r"(?P<library>[\w.+-]+\.so[\w.]*): cannot open shared object file"),
    _r("import-symbol", r"undefined symbol: (?P<symbol>\S+)"),
    _r("import-version", r"version '(?P<symbol>(?:GLIBCXX|CXXABI|GLIBC)_[\d.]+)' not found"),
    _r(
        "import-missing-lib",
        r"Library not loaded: '?(?:@rpath/|\S*/)?(?P<library>[\w.+-]+\.dylib)|"
        r"Error loading \"(?:[^\"]*[\\/])?(?P<winlib>[\w.+-]+\.dll)\" or one of its dependencies|"
        r"Could not find module '(?:[^']*[\\/])?(?P<dll>[\w.+-]+\.dll)'",
    ),
    _r("import-module", r"No module named '?(?P<module>[\w.]+)", "python"),
    _r(
        "tool-missing",
        r"No such file or directory: '(?P<tool>[\w.+-]+)'|(?P<cmd>\b[\w.+-]+): (?:command )?not "
        r"found$|Microsoft (?P<msvc>Visual C\+\+) [\d.]+ or greater is required|"
        r"(?P<ninja>Ninja) is required",
    ),
    _r(
        "crash",
        r"Segmentation fault|Aborted \(core dumped\)|Illegal instruction|Bus error|"
        r"terminate called after throwing|SIGSEGV|SIGILL|Floating point exception|"
        r"free\(\): invalid|double free or corruption|core dumped|received signal SIG\w+|"
        r"\(gdb\) (?:bt|where)|Program terminated with signal|Fatal Python error|"
        r"terminated with signal SIG\w+|illegal hardware instruction|0xC0000005|"
        r"Stack trace of thread \d+:|\d+ segmentation fault |"  # systemd-coredump; zsh (#14403)
        + _SIGNALLED,
    ),
    # a linker's own message that is not a warning (GNU ld says most of its errors without
    # 'error:'): after the more telling linker forms above, before a wrapper's report
    _r(
        "linker",
        rf"^\s*(?:\S*[/\\])?(?P<tool>{LINKERS})(?:\.exe)?: (?:[^w\s]|w[^a])",  # not 'warning:'
    ),
    _r("cmake", r"CMake Error(?: at (?P<file>[^:\s]+):\d+)?", "cmake"),
    _r("compiler", r"(?P<file>[^\s:]+):\d+(?::\d+)?: (?:fatal )?error: ", "gcc"),
    _r("compiler", r"(?P<file>[^\s(]+)\(\d+\): (?:catastrophic )?error: ", "nvcc"),
    _r("compiler", r"(?:nvcc|ptxas|cicc|nvlink) (?:fatal|error)\s*: ", "nvcc"),
    _r("compiler", r"internal compiler error", "gcc"),
    _r(
        "pip",
        r"Could not find a version that satisfies|No matching distribution found|"
        r"ResolutionImpossible|dependency conflicts|Failed to build|is not a supported wheel|"
        r"The conflict is caused by|Unable to find installation candidates|invalid wheel|"
        r"BadZipFile|DO NOT MATCH THE HASHES",
        "pip",
    ),
    # a build script's subprocess failed (setup.py running cmake, ninja, a compiler): the tool's
    # own error is above it
    _r(
        "command-failed",
        r"CalledProcessError: Command '\[?'?(?:[^',\s]*[/\\])?(?P<tool>[\w.+-]+)",
    ),
    # the same message quoted without its class
    _r(
        "command-failed",
        r"^\W{0,4}Command '\[?'?(?:[^',\s]*[/\\])?(?P<tool>[\w.+-]+).*' returned non-zero exit",
    ),
    # pip's own report that a package's setup.py run failed (pip < 20.2: 'Command "python -u
    # -c ...setup.py..." failed with error code 1'; pip 20.2-21: 'Command errored out with ...')
    _r(
        "command-failed",
        r"^(?:ERROR: )?Command (?:\"|errored out with exit status \d+: ).*?(?P<tool>setup\.py)",
    ),
    # pip < 10's form with its 'Command' cut off (round 17's apex#214): the quoted command ends
    # in 'failed with error code N in /tmp/pip-...'
    _r("command-failed", r"(?P<tool>setup\.py)\b.*\" failed with error code \d+ in "),
    _r("python", r"(?P<exception>\b[\w.]+(?:Error|Exception)): ", "python"),
    # setuptools' report of a failed compiler run (the compiler's own message is above it)
    _r(
        "command-failed",
        r"command u?'(?:[^']*[/\\])?(?P<tool>[^'/\\]+)' failed with exit (?:status|code) -?\d+",
    ),
    _r("python", r"(?P<exception>\b(?:Error|Exception)): ", "python"),
    # an exception class not named *Error under its module's path (classify.py's _REAL):
    # pkg_resources.ContextualVersionConflict, triton.runtime.errors.OutOfResources
    _r("python", rf"^\s*(?P<exception>{FAILURE_CLASS}): ", "python"),
    _r("linker", r"collect2: error: ld returned|ld returned \d+ exit status", "ld"),
    _r("ninja", r"FAILED: (?P<target>\S+)", "ninja"),
)
_VERSION = _rx(r"\b\d+\.\d+(?:\.\d+)*\b")
_TOOL = _rx(r"\b(g\+\+|gcc|clang\+\+|clang|nvcc|ptxas|cicc|ld\.lld|ld\.gold|ld|cmake|pip)\b")
# what starts the next message after a CMake error block (its own lines are mostly indented,
# but copies of logs often lose the indentation)
_CMAKE_END = _rx(
    r"^(?:-- |CMake (?:Error|Warning|Deprecation|Generate)|Call Stack|\[\d+/\d+|g?make|ninja|"
    r"FAILED|Traceback|error:|\S+\.py:\d+)"
)
CMAKE_LINES = 12  # at most this many lines of a CMake message are joined
# FindCUDA's report that nvcc failed ('CMake Error at x_generated_y.cu.o.cmake:N'): nvcc's own
# diagnostic above it is the error (round 21's pytorch#3295, train data)
_CMAKE_WRAPPER = _rx(r"CMake Error at \S*_generated_\S*\.cmake:\d+")


def read_block(block: ErrorBlock) -> TypedError | None:
    """The typed error of one error block (None only for a block with no text)."""
    lines = _lines(block)
    if not lines:
        return None
    normal = joined_wrapped([(e.line, normalise(e.text[:MAX_LINE])) for e in lines])
    for rec in RECOGNISERS:
        for index, (number, text) in enumerate(normal):
            match = rec.regex.search(text)
            if rec.kind == "cmake" and _CMAKE_WRAPPER.search(text) is not None:
                continue
            if match is not None:
                message = _message(rec.kind, lines, index)
                if rec.kind != "cmake" and text != normalise(lines[index].text[:MAX_LINE]):
                    message = text  # a wrapped diagnostic, joined (joined_wrapped)
                groups = match.groupdict()
                if rec.kind == "python":
                    groups["file"] = _last_frame(normal[:index])
                return _typed(rec, groups, number, message)
    # no recogniser: the block's own first error line (not a context line above it)
    first = block.lines[0].line if block.lines else normal[0][0]
    number, text = next((n, t) for n, t in normal if n >= first)
    return TypedError(kind="other", line=number, message=text, versions=_versions(text))


_WRAPPED = _rx(r"(?:error|Error|ERROR)(?: [A-Z]*\d+)?:$")


def wrapped(first: str, second: str) -> str | None:
    """clang (and MSVC) wrap a long diagnostic after its ``error:``: the message is the next
    line (round 17's pytorch#1175: ``fatal error:`` / ``'type_traits' file not found``). The two
    lines as one, when ``first`` ends with the ``error:`` and ``second`` holds the text."""
    head = first.rstrip()
    if not second.strip() or _WRAPPED.search(head) is None:
        return None
    return f"{head} {second.strip()}"


def joined_wrapped(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines, each wrapped diagnostic's first line holding both (see :func:`wrapped`);
    the list keeps one entry per line, so indices stay those of ``lines``."""
    out: list[tuple[int, str]] = []
    for number, text in lines:
        join = wrapped(out[-1][1], text) if out and out[-1][0] == number - 1 else None
        if join is not None:
            out[-1] = (out[-1][0], normalise(join))
        out.append((number, text))
    return out


_FRAME = _rx(r'^\s*(?:File )?"(?P<file>[^"]+)", line \d+')


def _last_frame(lines: list[tuple[int, str]]) -> str | None:
    """The file of the traceback frame nearest above a Python exception: where it was raised
    (``torch/utils/cpp_extension.py``, a companion's module, the user's script)."""
    for _, text in reversed(lines):
        match = _FRAME.search(text)
        if match is not None:
            return str(match.group("file"))
    return None


def _lines(block: ErrorBlock) -> list[Evidence]:
    seen: dict[int, Evidence] = {e.line: e for e in block.context}
    for e in block.lines:
        seen.setdefault(e.line, e)
    return [seen[n] for n in sorted(seen)]


def _message(kind: str, lines: list[Evidence], index: int) -> str:
    """The failure's message: a CMake error with its wrapped, indented lines joined; a C++
    ``terminate called ...`` with the ``what():`` line after it; else the line itself."""
    if kind == "cmake":
        return join_cmake([e.text for e in lines[index:]])
    text = lines[index].text
    after = lines[index + 1].text if index + 1 < len(lines) else ""
    if kind == "crash" and "terminate called" in text and "what():" in after:
        text = f"{text} {after.strip()}"
    return normalise(text)


def join_cmake(lines: Iterable[str]) -> str:
    """A CMake error block as one message: the ``CMake Error ...`` line and the indented lines
    after it (blank lines inside the block allowed), up to the next unindented line."""
    parts: list[str] = []
    blanks = 0
    for i, text in enumerate(lines):
        blanks = blanks + 1 if not text.strip() else 0
        if i and (_CMAKE_END.search(text) is not None or blanks > 1 or i >= CMAKE_LINES):
            break
        parts.append(text.strip())
    return normalise(" ".join(p for p in parts if p))


def _typed(rec: _Recogniser, groups: dict[str, str | None], line: int, message: str) -> TypedError:
    tool = _first(groups, "tool", "cmd", "msvc", "ninja") or rec.tool or _tool(message)
    return TypedError(
        kind=rec.kind,
        line=line,
        message=message[:MAX_LINE],
        tool=tool,
        file=groups.get("file"),
        header=groups.get("header"),
        symbol=demangle(groups.get("symbol")),
        library=_first(groups, "library", "dll", "winlib"),
        module=groups.get("module"),
        exception=groups.get("exception"),
        target=groups.get("target"),
        versions=_versions(message),
    )


def _first(groups: dict[str, str | None], *names: str) -> str | None:
    return next((v for v in (groups.get(n) for n in names) if v), None)


def _tool(text: str) -> str | None:
    match = _TOOL.search(text)
    return match.group(1) if match else None


def _versions(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(0) for m in _VERSION.finditer(text)))[:6]


def demangle(symbol: str | None) -> str | None:
    """A readable name for a mangled C++ symbol's scope (``_ZN3c1010TensorImpl...`` ->
    ``c10::TensorImpl``); other symbols as given. Only the leading nested name is decoded."""
    if not symbol or not symbol.startswith("_Z"):
        return symbol
    rest, parts = symbol[2:].removeprefix("N").removeprefix("K"), []
    while rest[:1].isdigit():
        digits = len(rest) - len(rest.lstrip("0123456789"))
        size = int(rest[:digits])
        parts.append(rest[digits : digits + size])
        rest = rest[digits + size :]
    return "::".join(parts) + f" ({symbol})" if parts else symbol
