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
# Characters of unchanged text kept on each side of a change; a longer unchanged stretch travels as
# `["…", "N"]` (N characters left out): the whole text of each version is sent once, apart.
CONTEXT = 120


def changes(before: dict | None, after: dict) -> list[dict]:
    """What changed from `before` to `after`: title and body as diffs (`[op, text]` pieces, op one
    of `=`, `-`, `+`), other fields as `from` → `to`. The first version has no changes."""
    if before is None:
        return []
    out = []
    for field in ("title", "body"):
        if before.get(field) != after.get(field):
            out.append({"field": field, "diff": elide(text_diff(before.get(field) or "", after.get(field) or ""))})
    for field in COMPARED:
        if before.get(field) != after.get(field):
            out.append({"field": field, "from": before.get(field), "to": after.get(field)})
    return out


def text_diff(a: str, b: str) -> list[list[str]]:
    """A word-level diff of two texts, as `[op, text]` pieces.

    Long texts are compared line by line first, then each run of changed lines word by word, so a
    few words changed in a long paragraph (one line) are marked as those words, not the whole text.
    The cost is bounded whatever the texts: all comparisons share one `DIFF_BUDGET`; each cuts the
    common head and tail first; SequenceMatcher (quadratic or worse on repetitive text: two 130 KB
    logs took 80 s) runs only while the pieces left fit the budget; past it a greedy shortest edit
    script (fast when few pieces changed) is tried, and a change larger than the budget allows is
    shown as one removal and one addition.
    """
    budget = [DIFF_BUDGET]
    if max(len(a), len(b)) < WORD_DIFF_TOKENS * 6:
        return _pieces(_token_ops(_words(a), _words(b), budget))
    ops: list[tuple[str, str]] = []
    changed: dict[str, list[str]] = {"-": [], "+": []}

    def refine() -> None:
        removed, added = "".join(changed["-"]), "".join(changed["+"])
        if removed and added:
            ops.extend(_token_ops(_words(removed), _words(added), budget))
        else:
            ops.extend([("-", t) for t in changed["-"]] + [("+", t) for t in changed["+"]])
        changed["-"], changed["+"] = [], []

    for op, line in _token_ops(a.splitlines(keepends=True), b.splitlines(keepends=True), budget):
        if op == "=":
            refine()
            ops.append((op, line))
        else:
            changed[op].append(line)
    refine()
    return _pieces(ops)


def elide(pieces: list[list[str]], context: int = CONTEXT) -> list[list[str]]:
    """`pieces` with each long unchanged stretch cut to the words next to its changes: the middle becomes
    `["…", "N"]`, N the characters left out (a 1 MB memory with one word changed was sent whole in its diff)."""
    out: list[list[str]] = []
    for index, (op, text) in enumerate(pieces):
        head = 0 if index == 0 else context
        tail = 0 if index == len(pieces) - 1 else context
        if op != "=" or len(text) <= head + tail + 200:
            out.append([op, text])
            continue
        before = re.sub(r"\s\S*$", " ", text[:head]) if head else ""
        after = re.sub(r"^\S*\s", " ", text[len(text) - tail:]) if tail else ""
        if before:
            out.append(["=", before])
        out.append(["…", str(len(text) - len(before) - len(after))])
        if after:
            out.append(["=", after])
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"\s+|\S+", text)


def common_ends(left: list, right: list) -> tuple[int, int]:
    """How many items two sequences share at the start, and then at the end (never overlapping the start)."""
    head = 0
    while head < min(len(left), len(right)) and left[head] == right[head]:
        head += 1
    tail = 0
    while tail < min(len(left), len(right)) - head and left[-1 - tail] == right[-1 - tail]:
        tail += 1
    return head, tail


def _token_ops(left: list[str], right: list[str], budget: list[int]) -> list[tuple[str, str]]:
    """`(op, token)` pairs from `left` to `right`, spending from `budget` (token pairs compared)."""
    head, tail = common_ends(left, right)
    middle_left, middle_right = left[head:len(left) - tail], right[head:len(right) - tail]
    size = len(middle_left) + len(middle_right)
    ops = None
    if not middle_left or not middle_right:
        ops = []
    elif len(middle_left) * len(middle_right) <= budget[0]:
        budget[0] -= len(middle_left) * len(middle_right)
        ops = _matcher_ops(middle_left, middle_right)
    elif budget[0] >= size:
        ops, edits = _edit_script(middle_left, middle_right, budget[0] // size)
        budget[0] -= size * (edits + 1)
    if not ops:
        ops = [("-", t) for t in middle_left] + [("+", t) for t in middle_right]
    return [("=", t) for t in left[:head]] + ops + [("=", t) for t in left[len(left) - tail:]]


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


def _edit_script(left: list[str], right: list[str], max_edits: int) -> tuple[list[tuple[str, str]] | None, int]:
    """A shortest edit script (Myers' greedy algorithm) as `(op, token)` pairs, or None when it needs
    more than `max_edits` insertions and deletions; and the edits it looked at. Time O((n + m) * edits)."""
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
                return _walk_back(left, right, trace), d
    return None, max_edits


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
