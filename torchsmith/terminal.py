"""Text from outside (log lines, wheel metadata, paths) made harmless for a terminal: escape
sequences and control characters removed (security review L5). Dependency-free, so both the
library (doctor's log reader) and the CLI's console can use it without start-up cost."""

from __future__ import annotations

import re

# ECMA-48: strings (OSC title/clipboard, DCS, SOS, PM, APC) up to BEL, ST or the text's end;
# CSI (colours, cursor); any other ESC sequence. Then every C0/C1 control but tab.
ESCAPES = re.compile(
    r"\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\|$)"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]",
    re.MULTILINE,
)
CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_CONTROLS_BUT_NEWLINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_terminal_codes(text: str) -> str:
    """``text`` without escape sequences and control characters (tab and newline kept)."""
    return _CONTROLS_BUT_NEWLINE.sub("", ESCAPES.sub("", text))
