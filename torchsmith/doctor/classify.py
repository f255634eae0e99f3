"""What a single log line is: a real error, the noise that follows one, a ninja ``FAILED:`` line,
a compiler diagnostic naming its file — independent of any rule."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from torchsmith.doctor.linear import compile_linear

# Strings at least one of which every interesting line holds (searched in raw bytes).
GENERIC_TRIGGERS: tuple[bytes, ...] = (
    b"rror",
    b"ERROR",  # pip's bare 'ERROR: Failed building wheel for x' (round 22's mamba#742)
    b"FAIL",
    b"failed",
    b"Failed",
    b"atal",
    b"Killed",
    b"ould",
    b"ound",
    b"undefined",
    b"No space",
    b"truncated",
    b"annot",
    b"No such file",
    b"ersion",
    b"upport",
    b"equired",
    b"issing",
    b"does not",
    b"exist",
    b"Segmentation fault",
    b"segmentation fault",  # zsh's job report (round 28's ultralytics#14403, train data)
    b"core dumped",
    b"terminate called",
    b"SIGSEGV",
    b"Floating point exception",
    b"Illegal instruction",
    b"Library not loaded",
    b"received signal",
    b"(gdb) bt",
    b"xception",
    b"illegal hardware instruction",
    b"0xC0000005",
    b"No module named",
    b"o such file",
    b"conflict is caused",
    b"can only be",
    b"ermission denied",
    b"panicked",
    b"E: Unable",
    b"E: Package",
    "找不到".encode(),
    "没有那个文件".encode(),
    # the soft error words (round 18, see _SOFT): a log whose only error line says one of these
    b"nvalid",
    b"BadZip",
    b"MATCH THE HASHES",
    b"ncorrect",
    b"nable to",
    b"n't",
    b"nknown flag",
    b"nknown option",
    b"nrecognized",
    b"ASSERT",
    b"ssertion",
    b"denied",
    b"vailable",
    b"llegal",
    b"borted",
    b"timed out",
    b"onnection refused",
    b"onnection reset",
    # after round 22 (rounds 21-22's error logs without a finding, train data)
    b"ncompatible",
    b"not linked with",
    b"out of resource",
    b"with signal",  # a launcher's 'Command exited with signal: Some(4)' (round 24, train data)
    # before the round 26 freeze (round 25's error logs without a finding, train data)
    b"has no attribute",
    b"HTTP",
    # after round 26 (its error logs without a finding, train data)
    b"Stack trace of thread",
    b"not installed",
    b"not defined",
    b"onflicting with",
    b"problems while solving",
    # after round 28 (its error logs without a finding, train data)
    b"'spawn' start method",
    # after round 29: error forms of the classes the structural reader names, said without an
    # error word (not read from a round's logs): a linker's own message (GNU ld, gold, lld,
    # mold; MinGW's ld.exe), a run ended by a signal (an IDE's 'exit code 134 (interrupted by
    # signal 6: SIGABRT)', a subprocess' negative status), glibc's abort messages, Jupyter's
    # dead kernel, a subprocess' failure quoted without its exception class, "out of memory"
    b"ld: ",
    b"ld.exe: ",
    b"SIGABRT",
    b"SIGBUS",
    b"SIGFPE",
    b"interrupted by signal",
    b"exit code 13",
    b"with code 13",
    b"exit status 13",
    b"exit status -",
    b"stack smashing",
    b"malloc(): ",
    b"corrupted size",
    b"corrupted double-linked",
    b"appears to have died",
    b"non-zero exit status",
    b"out of memory",
)

_NOISE = re.compile(
    r"ninja: build stopped|subcommand failed|CalledProcessError|"
    r"^\s*g?make(\[\d+\])?: \*\*\*|\bError \d+\s*$|"
    r"command u?'[^']*' failed with exit|ERROR: Failed building wheel|"
    r"error: subprocess-exited-with-error|Configuring incomplete, errors occurred|"
    r"^\s*(CMake Error at \S*_generated_\S*\.cmake:\d+|Error generating)|"
    # a traceback's header line (not one folded into a report's line: round 28's
    # amazon-sagemaker-examples#1378 holds its whole traceback on one line)
    r"^\W{0,4}Traceback \(most recent call last\)|errors? detected in the compilation|"
    r"^\s*(compilation|Compilation) terminated|raise \w+Error\(|"
    r"This error originates from a subprocess|did not run successfully|"
    r"^\s*\d+ errors? generated\.|^\s*collect2: error: ld returned \d+ exit status|"
    # CalledProcessError's message quoted without its class: the tool's own error is above it
    r"^\W{0,4}Command '.*' returned non-zero exit status -?\d+"
)
# a run ended by a signal other than SIGKILL (which is the OOM killer's: structure.py's
# "killed"): the signal's name, an IDE's 'interrupted by signal N', a shell's status 128+N
# (132 SIGILL, 133 SIGTRAP, 134 SIGABRT, 135 SIGBUS, 136 SIGFPE, 139 SIGSEGV), Python's
# subprocess status -N; glibc's abort messages (malloc.c, __stack_chk_fail); Jupyter's dead kernel
# the linkers whose own messages are errors said without 'error:' (GNU ld, gold, lld, mold)
LINKERS = r"ld|ld\.bfd|ld\.gold|ld\.lld|ld64\.lld|mold"
# a raised exception's class under its module's path, not named *Error: any class under a path
# of two parts or more, under a one-part path only a class that says a failure
FAILURE_CLASS = (
    r"(?:[a-z_]\w*\.){2,}[A-Z]\w*|"
    r"[a-z_]\w*\.[A-Z]\w*(?:Conflict|NotFound|Expired|Failure|Failed|Timeout|Mismatch)"
)
SIGNALLED = (
    r"\bSIG(?:ABRT|BUS|FPE)\b|interrupted by signal \d+|"
    r"exit(?:ed with)? (?:code|status) 1(?:3[2-6]|39)\b|exit status -(?:4|5|6|7|8|11)\b|"
    r"stack smashing detected|malloc\(\): [a-z]|corrupted (?:size vs|double-linked)|"
    r"[Kk]ernel\b.{0,80}?appears to have died"
)
_REAL = re.compile(
    r"(?<![\w=-])(?:error|ERROR)\b(?![=-])|\b\w*Error\b(?!\s*\d)(?=:|\s|$)|\bfatal\b|\bFAIL\b|"
    r"Killed signal|undefined reference|undefined symbol|relocation truncated|No space left|"
    r"cannot find -l|catastrophic error|internal compiler error|No such file or directory|"
    r"does not contain a CMakeLists|Could not find \S*third_party|Segmentation fault|"
    r"core dumped|terminate called after|SIGSEGV|Floating point exception|Illegal instruction|"
    r"Library not loaded|received signal SIG|\(gdb\) bt|找不到|没有那个文件|"
    r"of memory: Kill|Killed process \d+ \(|oom-kill:constraint=|oom_reaper: reaped process|"
    r"invoked oom-killer|^\s*Killed\s*$|Stack trace of thread \d+:|\bsegmentation fault\b|"
    # a Python exception class (ProcessRaisedException:), zsh's SIGILL, Windows' access violation
    r"\b\w*Exception\b(?=:)|illegal hardware instruction|0xC0000005|"
    # a raised exception's last line under its module's path, a class not named *Error
    # (round 22's 'triton.runtime.errors.OutOfResources: out of resource: shared memory'; after
    # round 30 under a one-part path when the class says a failure, not 'torch.Size: 3': its
    # gpt-neox#116 'pkg_resources.ContextualVersionConflict: (torch 1.7.1 ...)', pkg_resources'
    # DistributionNotFound, subprocess.TimeoutExpired)
    rf"^(?:{FAILURE_CLASS}): |"
    # an import error quoted without its exception class
    r"No module named|"
    # error lines without 'error' or 'Class:' (round 12): a lower-case strerror, a bare
    # 'Exception ...' report, 'X building failed', pip's resolver conflict, a platform check
    r"[Nn]o such file or directory|^\W*Exception\b|"
    r"\b(?:[Bb]uild(?:ing)?|[Cc]ompil(?:ing|ation)|[Ii]nstall(?:ing|ation)?) failed\b|"
    r"The conflict is caused by|\bcan only be (?:built|compiled|installed|used|run)\b|"
    # a shell's missing command (not CMake's "-- Looking for x - not found"), apt's "E: ...",
    # a denied write, a Rust panic, a C assert(), macOS ld's missing -l library
    r": (?:command )?not found\s*$|^E: [A-Z]|Permission denied|\bpanicked at\b|"
    r"\bAssertion\b[^\n]{0,300}? failed\b|library not found for -l|"
    # an installer's platform miss and a corrupt download (round 19's poetry and torch-sparse)
    r"Unable to find installation candidates|\bBadZipFile\b|has an invalid wheel|"
    r"DO NOT MATCH THE HASHES|"
    # a linker's own message that is not a warning (ld has no 'error:' on most of its own)
    rf"^\s*(?:\S*[/\\])?(?:{LINKERS})(?:\.exe)?: (?!warning)|"
    # a run ended by a signal, glibc's abort messages, Jupyter's dead kernel
    + SIGNALLED
)
# a warning that reports a failure to load native code (torchvision's image extension)
_WARNED_FAILURE = re.compile(
    r"Failed to load|Library not loaded|undefined symbol|cannot open shared object"
)
# Soft error lines (round 18): a failure said in plain words, without 'error'/'Error:' (docker's
# 'unknown flag: --gpus', nvidia-smi's "couldn't find libnvidia-ml.so", MKL's 'Parameter 10 was
# incorrect', 'INTERNAL ASSERT FAILED', a warning that CUDA is not available). They start a block
# only when the log holds no other error line (blocks.py), so they never hide a real error; CMake's
# own check lines ('-- Looking for x - not found', '-- Could NOT find X') and the indented lines of
# a message block (a CMake warning's text, a traceback's source line) are not soft errors.
_SOFT = compile_linear(
    r"(?i)\b(?:failed|failure|fatal|cannot|can't|can not|could not|couldn't|unable to|"
    r"not found|unknown (?:flag|option|argument|command)|unrecognized (?:option|argument)|"
    r"not (?:yet )?supported|no longer supported|unsupported|incorrect|invalid|illegal|"
    r"denied|killed|aborted|timed out|connection (?:refused|reset)|not available|unavailable|"
    r"is too old|not compiled with|incompatible|is not linked with|out of resources?|"
    r"exited with signal|"
    # an AttributeError's message quoted without its class (round 25's vision#2461) and a
    # download's HTTP status (round 25's xla#6568: 'HTTP 404 for url ...')
    r"has no attribute|HTTP (?:Error )?[45]\d\d|"
    # after round 26: AutoGPTQ#203's 'CUDA extension not installed' and 'name x not defined',
    # mamba#969's 'Encountered problems while solving' / '... conflicting with __cuda-10.2-0'
    r"not installed|(?:is )?not defined|conflicting with|problems while solving|"
    # the tail of torch's fork message (round 28's spconv#408)
    r"must use the 'spawn' start method|"
    # after round 29: an allocator's report without its exception class ('CUDA out of memory')
    r"out of memory)\b"
)
_NOT_SOFT = compile_linear(
    r"^(?:\s\s|\t)|^\s*(?:-- |\[cmake\] -- |Requirement already|Collecting |Downloading |"
    r"Looking for |Performing Test |Checking |checking |Check for |Successfully )|"
    r"(?i:\b(?:0|no) (?:failed|failures|errors)\b|\bexpect(?:ed)? .{0,40}\bfail)|"
    # a passing run's benign words (tests/fixtures/doctor/negative/): pytest's skipped and
    # expected-to-fail tests, torch.utils.collect_env's 'Clang version: Could not collect'
    r"\b(?:SKIPPED|XFAIL|XPASS)\b|Could not collect\s*$"
)
# a Python warning (UserWarning, RuntimeWarning) that something the run needs is unavailable:
# the only trace of a failure in some logs (CUDA not available in a container); compiler and
# CMake warnings never count
_SOFT_WARNING = compile_linear(
    r"\b[A-Z]\w*Warning: .{0,300}?(?i:not available|unavailable|no longer supported|"
    r"not (?:yet )?supported|is too old|failed to load|could not load|cannot load)"
)
_STATUS = re.compile(r"^\s*\[\d+/\d+[\] ]")
_FAILED = re.compile(r"^\s*FAILED: (?:\[code=\d+\] )?(?P<target>\S+)")
_DIAGNOSTIC = re.compile(r"^\s*(?P<file>[^\s:]+):\d+(?::\d+)?: (?:fatal )?error")
# file-copying chatter of setuptools, CMake install and code generators (paths only)
_BOOKKEEPING = re.compile(
    r"^\s*(copying |creating |byte-compiling |-- Installing: |-- Up-to-date: |adding '|"
    r"[Ww]riting |Generating |Compiling \S+ because)"
)
_COMMAND = re.compile(
    r"^\s*(cd \S+ && )?(\S*/)?"
    r"(c\+\+|g\+\+|gcc|cc|clang\+\+|clang|nvcc|ccache|sccache)(-\d+)?\s+[-/]"
)

LineKind = Literal["failed", "error", "noise", "command", "soft", "other"]


@dataclass(frozen=True)
class LineInfo:
    kind: LineKind
    target: str | None = None  # ninja target of a FAILED line, or the file of a diagnostic
    block_kind: Literal["ninja", "make", "diagnostic", "cmake", "python", "other"] = "other"


def classify(text: str) -> LineInfo:
    """Sort one (clean) line into failed / error / noise / command / other, cheap tests first.
    "command" is a ninja status line or a compiler command line: never an error, and no rule
    looks at it (verbose logs print thousands of them, each full of -Werror=... flags)."""
    if text.lstrip().startswith("FAILED: "):
        failed = _FAILED.match(text)
        return LineInfo("failed", failed.group("target") if failed else None, "ninja")
    warned = "Warning" in text or "warning" in text  # not "Learning", "earning"
    if warned and "error" not in text and not _WARNED_FAILURE.search(text):
        soft = _SOFT_WARNING.search(text) is not None
        return LineInfo("soft", None, "python") if soft else LineInfo("other")
    if _STATUS.match(text) or _COMMAND.match(text) or _BOOKKEEPING.match(text):
        return LineInfo("command")
    if _NOISE.search(text):
        return LineInfo("noise")
    if not _REAL.search(text):
        return _soft(text)
    diag = _DIAGNOSTIC.match(text)
    if diag:
        return LineInfo("error", diag.group("file"), "diagnostic")
    return LineInfo("error", None, _kind_of(text))


def _soft(text: str) -> LineInfo:
    """A line with no error word that still reports a failure in plain words (``_SOFT``)."""
    if _SOFT.search(text) is None or _NOT_SOFT.search(text) is not None:
        return LineInfo("other")
    return LineInfo("soft", None, _kind_of(text))


def _kind_of(text: str) -> Literal["make", "cmake", "python", "other"]:
    if "CMake Error" in text:
        return "cmake"
    if re.match(r"^\s*make(\[\d+\])?:", text):
        return "make"
    if re.match(r"^\s*[\w.]*(Error|Exception)\b", text):
        return "python"
    return "other"
