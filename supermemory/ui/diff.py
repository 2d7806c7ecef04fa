"""What changed between two versions of a memory: field changes and word diffs whose cost is bounded."""
from __future__ import annotations

import difflib
import re

# Longer texts are diffed line by line instead of word by word (SequenceMatcher is quadratic).
WORD_DIFF_TOKENS = 4000
# Token pairs a diff may compare (SequenceMatcher: left × right; the edit script: (left + right) × edits):
# about 0.4 s of work at worst.
DIFF_BUDGET = 4_000_000

COMPARED = ("kind", "tags", "importance", "pinned", "status")


def changes(before: dict | None, after: dict) -> list[dict]:
    """What changed from `before` to `after`: title and body as diffs (`[op, text]` pieces, op one
    of `=`, `-`, `+`), other fields as `from` → `to`. The first version has no changes."""
    if before is None:
        return []
    out = []
    for field in ("title", "body"):
        if before.get(field) != after.get(field):
            out.append({"field": field, "diff": text_diff(before.get(field) or "", after.get(field) or "")})
    for field in COMPARED:
        if before.get(field) != after.get(field):
            out.append({"field": field, "from": before.get(field), "to": after.get(field)})
    return out


def text_diff(a: str, b: str) -> list[list[str]]:
    """A word-level diff of two texts (line-level when they are long), as `[op, text]` pieces.

    The cost is bounded whatever the texts: the common head and tail are cut first; SequenceMatcher
    (quadratic or worse on repetitive text: two 130 KB logs took 80 s) runs only while the pieces left
    are within `DIFF_BUDGET`; past it a greedy shortest edit script (fast when few pieces changed) is
    tried, and a change larger than the budget allows is shown as one removal and one addition.
    """
    split = (lambda t: re.findall(r"\s+|\S+", t)) if max(len(a), len(b)) < WORD_DIFF_TOKENS * 6 \
        else (lambda t: t.splitlines(keepends=True))
    left, right = split(a), split(b)
    head = 0
    while head < min(len(left), len(right)) and left[head] == right[head]:
        head += 1
    tail = 0
    while tail < min(len(left), len(right)) - head and left[-1 - tail] == right[-1 - tail]:
        tail += 1
    middle_left, middle_right = left[head:len(left) - tail], right[head:len(right) - tail]
    if len(middle_left) * len(middle_right) <= DIFF_BUDGET:
        ops = _matcher_ops(middle_left, middle_right)
    else:
        ops = _edit_script(middle_left, middle_right, DIFF_BUDGET // (len(middle_left) + len(middle_right)))
    if ops is None:
        ops = [("-", t) for t in middle_left] + [("+", t) for t in middle_right]
    return _pieces([("=", t) for t in left[:head]] + ops + [("=", t) for t in left[len(left) - tail:]])


def _matcher_ops(left: list[str], right: list[str]) -> list[tuple[str, str]]:
    ops: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            ops.extend(("=", t) for t in left[i1:i2])
            continue
        ops.extend(("-", t) for t in left[i1:i2])
        ops.extend(("+", t) for t in right[j1:j2])
    return ops


def _edit_script(left: list[str], right: list[str], max_edits: int) -> list[tuple[str, str]] | None:
    """A shortest edit script (Myers' greedy algorithm) as `(op, token)` pairs, or None when it needs
    more than `max_edits` insertions and deletions. Time O((n + m) * edits)."""
    n, m = len(left), len(right)
    frontier = {1: 0}
    trace = []
    for d in range(max_edits + 1):
        trace.append(dict(frontier))
        for k in range(-d, d + 1, 2):
            x = frontier[k + 1] if k == -d or (k != d and frontier[k - 1] < frontier[k + 1]) else frontier[k - 1] + 1
            y = x - k
            while x < n and y < m and left[x] == right[y]:
                x, y = x + 1, y + 1
            frontier[k] = x
            if x >= n and y >= m:
                return _walk_back(left, right, trace)
    return None


def _walk_back(left: list[str], right: list[str], trace: list[dict]) -> list[tuple[str, str]]:
    x, y = len(left), len(right)
    ops: list[tuple[str, str]] = []
    for d in range(len(trace) - 1, 0, -1):
        frontier, k = trace[d], x - y
        previous = k + 1 if k == -d or (k != d and frontier[k - 1] < frontier[k + 1]) else k - 1
        start_x = frontier[previous]
        start_y = start_x - previous
        while x > start_x and y > start_y:
            x, y = x - 1, y - 1
            ops.append(("=", left[x]))
        if x == start_x:
            y -= 1
            ops.append(("+", right[y]))
        else:
            x -= 1
            ops.append(("-", left[x]))
    while x > 0 and y > 0:
        x, y = x - 1, y - 1
        ops.append(("=", left[x]))
    ops.reverse()
    return ops


def _pieces(ops: list[tuple[str, str]]) -> list[list[str]]:
    """`(op, token)` pairs as `[op, text]` pieces; each run of changes is one removal, then one addition."""
    out: list[list[str]] = []
    runs: dict[str, list[str]] = {"=": [], "-": [], "+": []}

    def flush(ops_done: str) -> None:
        for op in ops_done:
            if runs[op]:
                out.append([op, "".join(runs[op])])
                runs[op].clear()

    for op, token in ops:
        if op == "=":
            flush("-+")
        else:
            flush("=")
        runs[op].append(token)
    flush("=-+")
    return out
