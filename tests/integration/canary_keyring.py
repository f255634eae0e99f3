"""A keyring backend for the publish test: a JSON file named by ``CANARY_KEYRING_FILE``, the
way ``keyrings.alt``'s plain-text keyring stores entries. The test selects it with keyring's own
``PYTHON_KEYRING_BACKEND`` switch, so torchsmith goes through the real ``keyring`` API."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["CANARY_KEYRING_FILE"])

    def _entries(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = {**self._entries(), f"{service}\0{username}": password}
        self._path().write_text(json.dumps(entries))
        self._path().chmod(0o600)

    def delete_password(self, service: str, username: str) -> None:
        raise NotImplementedError
