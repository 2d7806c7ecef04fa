"""What a CLI command reads and prints around its view: text arguments (`-` = stdin, UTF-8 checked), JSON on stdout, a write's id and notes."""
from __future__ import annotations

import json
import os
import sys

from supermemory.errors import InvalidInputError
from supermemory.terminal import printable, say


def print_json(data) -> None:
    """`data` as indented JSON on stdout (what `--json` prints)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def text_arg(value: str | None, field: str) -> str | None:
    """A text argument as the user meant it: `-` reads stdin; bytes that are not UTF-8 (kept by
    argv and stdin as surrogates) are refused with their offset instead of being stored as `?`."""
    if value is None:
        return None
    raw = sys.stdin.buffer.read() if value == "-" else os.fsencode(value)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        from supermemory.jsonl import not_utf8

        raise InvalidInputError(f"{field} is {not_utf8(raw, exc)}") from None


def print_written(args, result: dict, notes: list[str]) -> None:
    """A write's id on stdout (or its JSON), and what it says about the text on stderr."""
    print_json(result) if args.json else say(result["id"])
    sys.stderr.write(printable("".join(line + "\n" for line in notes)) if not args.json else "")
    sys.stdout.flush()   # out now: the command may still have work to do (`MemoryStore.defer_windows`)
