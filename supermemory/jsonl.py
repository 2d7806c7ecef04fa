"""Files the user names: read one (UTF-8 text, or JSONL lines as a list) or write one, naming the line or byte of any error."""
from __future__ import annotations

import json
from pathlib import Path

from supermemory.errors import InvalidInputError


def not_utf8(raw: bytes, exc: UnicodeDecodeError) -> str:
    """What to tell the user about bytes that are not UTF-8: the first bad byte, its offset, a fix."""
    return (f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "convert it first, e.g. `iconv -f latin1 -t utf-8`")


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file.

    Raises:
        InvalidInputError: the file is missing, a folder or unreadable (``cannot read PATH: reason``),
            or not UTF-8 (``PATH:LINE: not valid UTF-8 (byte … at offset …)``); never a replacement character.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(f"{path}:{line}: {not_utf8(raw, exc)}") from None


def write_text(path: str | Path, text: str) -> None:
    """Write `text` to a file as UTF-8.

    Raises:
        InvalidInputError: the file cannot be written (``cannot write PATH: reason``).
    """
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"cannot write {path}: {exc.strerror or exc}") from None


def read_jsonl(path: str | Path) -> list[dict]:
    """Parse a JSONL file, naming the line of any error.

    :param path: the file; blank lines are skipped.
    Raises:
        InvalidInputError: the file cannot be read or is not UTF-8 (`read_text`), or a line is not
            JSON (the message names ``path:line``).
    """
    rows = []
    for number, line in enumerate(read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            raise InvalidInputError(f"{path}:{number}: not JSON: {exc}") from exc
        except RecursionError:
            raise InvalidInputError(f"{path}:{number}: not JSON: nested too deeply") from None
    return rows
