"""What one publish did, per artifact."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["uploaded", "already-there", "not-uploaded"]
"""``not-uploaded``: a file the target cannot take (a wheel's attestations to a package index),
named so that nothing is dropped silently."""


@dataclass(frozen=True)
class Published:
    """One artifact and what happened to it at the target."""

    artifact: str
    sha256: str
    outcome: Outcome
    where: str
