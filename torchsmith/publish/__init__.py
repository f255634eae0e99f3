"""``torchsmith publish``: built artifacts to where people install them from.

Targets (:mod:`.target`): a PyPI-compatible index (:mod:`.pypi`, the upload API through twine),
a conda channel directory (:mod:`.conda_channel`). Credentials (:mod:`.credentials`) come from an
environment variable, a keyring or a file with mode 0600, never from the command line; they are
held in a :class:`~.credentials.Secret` that never shows its value. Publishing is idempotent: an
artifact already there with the same sha256 is a no-op, a different one under the same name is
refused.
"""

from __future__ import annotations

from torchsmith.publish.model import Outcome, Published

__all__ = ["Outcome", "Published"]
