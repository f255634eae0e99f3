"""Pure parsers: the text a tool prints (or a file holds) → values. No processes, no files;
every function here is unit-tested on real recorded output under ``tests/fixtures/host``.
Each returns ``None`` (or an empty value) for text it does not understand, never raises."""

from __future__ import annotations

import re
import shlex

_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+(?:\.\d+)*)")
_PLAIN_VERSION = re.compile(r"^\d+(?:\.\d+)*$")
_CLANG = re.compile(r"clang version (\d+\.\d+(?:\.\d+)?)")
_NVCC = re.compile(r"release (\d+\.\d+), V(\d+(?:\.\d+)*)")
_PYTHON = re.compile(r"^Python (\d+\.\d+\.\d+\S*)", re.MULTILINE)
_DRYRUN_HERE = re.compile(r"^#\$ _HERE_=(.+)$", re.MULTILINE)
_EXEC_ALL_ARGS = re.compile(r'^exec[ \t]+("?)(/[A-Za-z0-9_./+-]+)\1[ \t]+"\$@"$')
SHELLS = ("/bin/sh", "/bin/dash", "/bin/bash", "/usr/bin/sh", "/usr/bin/dash", "/usr/bin/bash")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(\d+)\b", re.MULTILINE)
_LDCONFIG = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")
_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>\d+(?:\.\d+)*)[^-]*\.dist-info$")


def first_version(text: str) -> str | None:
    """The first dotted version in the first non-empty line: 'cmake version 3.25.1' → '3.25.1'."""
    for line in text.splitlines():
        if line.strip():
            match = _VERSION.search(line)
            return match.group(1) if match else None
    return None


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` (shell-style KEY=value lines) → dict."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.strip().partition("=")
        if not sep or key.startswith("#"):
            continue
        try:
            parts = shlex.split(raw)
        except ValueError:
            continue
        values[key] = parts[0] if parts else ""
    return values


def parse_meminfo_kib(text: str, key: str = "MemTotal") -> int | None:
    """A ``/proc/meminfo`` entry in KiB: 'MemTotal:  24683656 kB' → 24683656."""
    match = re.search(rf"^{re.escape(key)}:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def parse_glibc_confstr(text: str) -> str | None:
    """``os.confstr('CS_GNU_LIBC_VERSION')`` → version: 'glibc 2.36' → '2.36'."""
    name, _, version = text.strip().partition(" ")
    return version if name == "glibc" and _PLAIN_VERSION.match(version) else None


def parse_ldd_version(text: str) -> str | None:
    """``ldd --version`` → glibc version: 'ldd (Debian GLIBC 2.36-9+deb12u14) 2.36' → '2.36'.
    musl's ldd prints no GLIBC line: None."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    if "GLIBC" not in first.upper() and "GNU LIBC" not in first.upper():
        return None
    last = first.split()[-1]
    return last if _PLAIN_VERSION.match(last) else None


def parse_gcc_dumpversion(text: str) -> str | None:
    """``gcc -dumpfullversion -dumpversion`` → '12.2.0' (old GCCs print '7' or '4.8')."""
    value = text.strip()
    return value if _PLAIN_VERSION.match(value) else None


def parse_clang_version(text: str) -> str | None:
    """``clang --version`` → '14.0.6' (also 'Ubuntu clang version 14.0.0-1ubuntu1.1')."""
    match = _CLANG.search(text)
    return match.group(1) if match else None


def parse_nvcc_version(text: str) -> tuple[str, str] | None:
    """``nvcc --version`` → ('13.0', '13.0.88'): the release and the full build version."""
    match = _NVCC.search(text)
    return (match.group(1), match.group(2)) if match else None


def parse_nvcc_dryrun_bin(text: str) -> str | None:
    """``nvcc -dryrun ...`` → the folder of the real nvcc (its ``_HERE_`` line), so a wrapper
    script on PATH leads to the toolkit it runs."""
    match = _DRYRUN_HERE.search(text)
    return match.group(1).strip() if match else None


def parse_exec_wrapper(text: str) -> str | None:
    """A shell script that only hands its arguments to one program — ``#!/bin/sh`` (or dash,
    bash, by absolute path), then nothing but comments, blank lines and ``exec /ABS/PATH "$@"``
    — → that program's path: what it runs follows from its text alone. None for any other
    script (a variable, a command, a shell found on PATH, a relative path: ask it instead)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#!") or lines[0][2:].strip() not in SHELLS:
        return None
    body = [line.strip() for line in lines[1:]]
    body = [line for line in body if line and not line.startswith("#")]
    match = _EXEC_ALL_ARGS.match(body[0]) if len(body) == 1 else None
    return match.group(2) if match else None


def parse_python_version(text: str) -> str | None:
    """``python --version`` → '3.11.7' (Python 2 prints it on stderr; pass both)."""
    match = _PYTHON.search(text)
    return match.group(1) if match else None


def parse_header_version(text: str, prefix: str) -> str | None:
    """The version a C header defines: ``CUDNN_MAJOR``/``_MINOR``/``_PATCHLEVEL`` in
    ``cudnn_version.h`` (or ``cudnn.h`` before cuDNN 8), ``NCCL_MAJOR``/``_MINOR``/``_PATCH``
    in ``nccl.h``. ``prefix`` is 'CUDNN' or 'NCCL'."""
    defines = dict(_DEFINE.findall(text))
    major = defines.get(f"{prefix}_MAJOR")
    if major is None:
        return None
    minor = defines.get(f"{prefix}_MINOR", "0")
    patch = defines.get(f"{prefix}_PATCHLEVEL", defines.get(f"{prefix}_PATCH", "0"))
    return f"{major}.{minor}.{patch}"


def parse_ldconfig(text: str, stem: str) -> list[str]:
    """``ldconfig -p`` → paths of the 64-bit libraries named ``<stem>.so.*`` (e.g. 'libcudnn')."""
    paths = []
    for line in text.splitlines():
        match = _LDCONFIG.match(line)
        if match and match.group(1).startswith(f"{stem}.so.") and "64" in match.group(2):
            paths.append(match.group(3))
    return paths


def parse_soname_version(filename: str, stem: str) -> str | None:
    """'libcudnn.so.9.1.0' → '9.1.0'; 'libnccl.so.2' → '2'."""
    match = re.fullmatch(rf"{re.escape(stem)}\.so\.(\d+(?:\.\d+)*)", filename)
    return match.group(1) if match else None


def parse_dist_info(dirname: str) -> tuple[str, str] | None:
    """'nvidia_cudnn_cu13-9.13.0.50.dist-info' → ('nvidia_cudnn_cu13', '9.13.0.50')."""
    match = _DIST_INFO.match(dirname)
    return (match.group("name"), match.group("version")) if match else None


def short_version(version: str, parts: int = 3) -> str:
    """'9.13.0.50' → '9.13.0'."""
    return ".".join(version.split(".")[:parts])
