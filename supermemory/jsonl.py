"""Read a JSONL file into a list of objects, naming the line of any error (bench sets, export files)."""
from __future__ import annotations

import json
from pathlib import Path

from supermemory.errors import InvalidInputError


def read_jsonl(path: str | Path) -> list[dict]:
    """Parse a JSONL file, naming the line of any error.

    :param path: the file; blank lines are skipped.
    Raises:
        InvalidInputError: a line is not JSON (the message names ``path:line``).
    """
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise InvalidInputError(f"{path}:{number}: not JSON: {exc}") from exc
    return rows
