"""The CLI's text for a person, with control characters made visible so they cannot drive the terminal.

Memory text comes from transcripts and other people's files; a raw ESC in it would reach the user's terminal.
"""
from __future__ import annotations

import re
import sys
from typing import TextIO

# C0 controls except tab and newline, DEL, and the C1 controls (U+0080–U+009F: some terminals act on them too).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with each control character but tab and newline written as its Python escape (ESC → `\\x1b`,
    CR → `\\x0d`): still readable, never acted on; stored data is left as it is, only what is shown changes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(text: str, *, end: str = "\n", stream: TextIO | None = None) -> None:
    """Print rendered text for a person (the CLI's human output path; `--json` goes through json.dumps)."""
    (stream or sys.stdout).write(printable(text) + end)
