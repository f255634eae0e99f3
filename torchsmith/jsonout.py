"""The stable machine format: indented, key-sorted JSON on stdout. Kept apart from
:mod:`torchsmith.console` (rich) so that a ``--json`` command does not import rich."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(data: Any) -> None:
    """Write ``data`` as indented, key-sorted JSON to stdout (the stable machine format)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
