"""Where a publish token comes from: an environment variable (read by the CLI layer and handed
in), a keyring, or a file only its owner can read. Never an argument: argv is world-readable in
``/proc/*/cmdline``. The value lives in a :class:`Secret`, whose ``repr``/``str`` never show it
(tracebacks with ``--debug``, logs, manifests)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from torchsmith.errors import UsageError

TOKEN_USER = "__token__"
"""The user name PyPI-compatible indexes take an API token with (twine's convention)."""


@dataclass(frozen=True)
class Secret:
    """A credential; its text is only reachable through :meth:`reveal`."""

    _value: str = field(repr=False)
    source: str
    """Where it came from, for messages ('environment variable PKG_TOKEN')."""

    def reveal(self) -> str:
        return self._value

    def __str__(self) -> str:
        return f"<secret from {self.source}>"


def from_environment(env_value: str | None, name: str) -> Secret:
    """The token in environment variable ``name`` (its value read by the CLI)."""
    if not env_value or not env_value.strip():
        raise UsageError(
            f"--token-env {name}: the environment variable {name} is not set or empty",
            f"export {name}=<token> in the shell that runs torchsmith (never on its command line)",
        )
    _one_line(env_value.strip(), f"--token-env {name}: the variable")
    return Secret(env_value.strip(), f"environment variable {name}")


def from_file(path: Path) -> Secret:
    """The token in ``path``: a regular file owned by this user, readable by nobody else."""
    try:
        info = path.lstat()
    except OSError as exc:
        raise UsageError(
            f"--token-file {path}: {exc.strerror}", "give a file holding the token"
        ) from None
    _check_private(path, info)
    try:
        text = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError as exc:  # trial P10: was an internal error (exit 70)
        raise UsageError(
            f"--token-file {path} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
            "is it the token, or a binary file?",
            "write the token alone into it, as text (e.g. pypi-AgEI…)",
        ) from None
    if not text:
        raise UsageError(f"--token-file {path} is empty", "write the token into it")
    _one_line(text, f"--token-file {path}")
    return Secret(text, f"file {path}")


def _one_line(text: str, where: str) -> None:
    """A token is one line: trial P11 sent two lines of a file as the token without a word (an
    HTTP header cannot carry a line break). No byte of it is shown."""
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise UsageError(
            f"{where} is not one line of text: it holds {len(text.splitlines())} line(s) and a "
            "line break or control character inside the token",
            'write the token alone, on one line (printf %s "$TOKEN" > FILE; chmod 600 FILE)',
        )


def _check_private(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(
            f"--token-file {path} is not a regular file (a link or a device?)",
            "give the token file itself",
        )
    if info.st_uid != os.geteuid():
        raise UsageError(
            f"--token-file {path} belongs to uid {info.st_uid}, not to this user",
            "keep the token in a file you own (chmod 600)",
        )
    if info.st_mode & 0o077:
        raise UsageError(
            f"--token-file {path} has mode {stat.S_IMODE(info.st_mode):04o}: others can read it",
            f"chmod 600 {path}, and consider rotating the token",
        )


def from_keyring(service: str, username: str) -> Secret:
    """The password the user's keyring holds for ``service`` and ``username`` (``keyring``)."""
    import keyring
    from keyring.errors import KeyringError

    try:
        value = keyring.get_password(service, username)
    except KeyringError as exc:
        raise UsageError(
            f"--keyring: the keyring failed: {exc}", "check `keyring --list-backends`"
        ) from None
    if not value:
        raise UsageError(
            f"--keyring: no password for {service!r} (user {username!r}) in the keyring "
            f"({type(keyring.get_keyring()).__name__})",
            f"keyring set {service} {username}",
        )
    return Secret(value, f"keyring entry {service!r}")
