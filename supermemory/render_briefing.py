"""The briefing's text view, shared by the SessionStart hook, the MCP server and the CLI.

Its sections come in the order the budget serves them, within that token budget; room is kept for the memories
that must not be cut away, and a long pinned rule is shown as far as the room left allows.
"""
from __future__ import annotations

from supermemory.render import memory_line
from supermemory.text import estimate_tokens

_SECTION_TITLES = {
    "pinned": "Pinned rules",
    "relevant": "Relevant to this session",
    "tasks": "Open tasks",
    "decisions": "Key decisions",
    "preferences": "Preferences",
    "gotchas": "Gotchas",
    "recent": "Recent changes",
    "sessions": "Last sessions",
}
# Sections whose first memory the briefing keeps room for, up to a share of its budget, whatever comes before it:
# what the caller asked about, the last session (what the agent was doing; the one a compaction just captured), and
# the first preference and gotcha (fresh-user run fu37 D5: fifteen decisions took the whole budget, no gotcha shown).
_LEAD_KEPT = ("relevant", "sessions", "preferences", "gotchas")
_LEAD_SHARE = 0.2
_WHOLE = 10 ** 9   # `memory_line`'s max_chars for a text shown whole
COMPACTED_CHARS = 1200   # the line of the session just compacted: its rules, open ends and requests (~300 tokens)


def _pinned_line(item: dict, max_chars: int | None = None) -> str:
    """A pinned rule's line: its summary (`max_chars` None) or its text up to `max_chars` characters; a line
    that leaves some of the text out says so and where the rest is."""
    body = item.get("body") or ""
    # Only as much of a long text is read as the line can show (twice that: whitespace runs fold to one space).
    head = {**item, "body": body[:2 * (max_chars or 200) + len(item.get("title") or "") + 64]}
    line = memory_line(head, with_body=max_chars is not None, max_chars=max_chars or 200)
    if len(head["body"]) == len(body) and line == memory_line(head, with_body=True, max_chars=_WHOLE):
        return line
    return line + ("" if line.endswith("…") else " …") + f" (memory_get {item['id']} for the rest)"


def _longest_pinned(item: dict, room: int) -> str | None:
    """The pinned rule's line with the most of its text that costs at most `room` tokens (with its newline);
    None when not even 24 characters of it fit."""
    def fits(line: str) -> bool:
        return estimate_tokens(line) + 1 <= room

    body = item.get("body") or item.get("summary") or ""
    if len(body) <= 8 * room:   # else not even its folded whitespace would let it fit whole
        whole = memory_line(item, with_body=True, max_chars=_WHOLE)
        if fits(whole):
            return whole
    low, high = 24, max(24, min(len(body), 4 * room))   # a line of `room` tokens holds 4 * room characters at most
    if not fits(_pinned_line(item, low)):
        return None
    while low < high:   # the line grows with max_chars (the note on the rest stays the same)
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(_pinned_line(item, mid)) else (low, mid - 1)
    return _pinned_line(item, low)


def _briefing_line(key: str, item: dict) -> str:
    """One memory of a briefing section, with what it superseded ("was: …")."""
    width = (COMPACTED_CHARS if item.get("compacted") else 320) if key == "sessions" else 200
    line = _pinned_line(item) if key == "pinned" else memory_line(item, max_chars=width)
    for was in item.get("was") or []:   # what it superseded (left out of the briefing)
        line += "\n  was: " + (was if len(was) <= 120 else was[:119] + "…")
    return line


def _cut_to(key: str, item: dict, line: str, room: int) -> str:
    """`line` shortened to cost at most `room` tokens with its newline ('…' where it is cut; a pinned rule keeps
    the note on where the rest is when it can), or 24 characters of it when less fits."""
    if key == "pinned":
        longest = _longest_pinned(item, room)
        if longest is not None:
            return longest
    line = line.split("\n")[0]
    while len(line) > 24 and estimate_tokens(line + "…") + 1 > room:
        line = line[:-1]
    return line.rstrip() + "…"


def render_briefing(sections: dict, *, budget: int, namespace: str, left_out: dict | None = None,
                    pinned_total: int | None = None) -> tuple[str, int, dict[str, list[str]]]:
    """Section-by-section briefing cut to `budget` tokens, sections in the order of `sections` (the order the
    budget serves them); returns (text, tokens used, the ids the text shows per section, in its order).

    Each line is charged its token estimate plus one for its newline. When items are left out,
    the "more not shown" note is charged too (room for it is kept back, so the total stays within
    `budget` unless the header and the note alone exceed it). The first memory of `_LEAD_KEPT`'s sections
    has room kept for it (a `_LEAD_SHARE` of the budget at most) while the sections before it are laid out, and is
    cut to fit that room rather than left out; so is the very first memory, into whatever room there is.
    A pinned rule shows its summary, and more of its text when the budget has room left at the end; a rule shown
    cut says where the rest is (`memory_get`). `left_out`: the memories imported from the file the agent loads by
    itself (`{"file", "memories"}`), named when nothing else is there. `pinned_total`: how many pinned rules the store
    holds for it (`pinned` lists twenty at most); the note says how many of them the text leaves out and where
    they are listed (fu32 D11: a hundred pins were cut without a word that pinned rules were among them).
    """
    total_items = sum(len(v) for v in sections.values())
    if total_items == 0:
        so_far = (f"nothing for {namespace} beyond the {left_out['memories']} rule(s) imported from "
                  f"{left_out['file']}, which you load already" if left_out else f"no memories yet for {namespace}")
        text = (f"supermemory: {so_far}. Store durable facts with memory_remember "
                "as you learn them (decisions, gotchas, preferences, open tasks).")
        return text, estimate_tokens(text), {}
    header = f"# supermemory briefing ({namespace})"
    laid = {key: [_briefing_line(key, item) for item in items] for key, items in sections.items()}

    def heading_of(key: str) -> str:
        return f"## {_SECTION_TITLES[key]}"

    def lay_out(limit: int) -> tuple[list[str], int, int, dict[str, list[str]], list[tuple[int, dict]]]:
        lines = [header]
        used = estimate_tokens(header)
        omitted = 0
        shown: dict[str, list[str]] = {}
        pinned_at: list[tuple[int, dict]] = []   # where each pinned rule's line is, to show more of it later
        kept = {key: min(estimate_tokens(heading_of(key)) + 1 + estimate_tokens(laid[key][0]) + 1,
                         int(limit * _LEAD_SHARE)) for key in _LEAD_KEPT if laid.get(key)}
        for key, items in sections.items():
            if not items:
                continue
            kept.pop(key, None)
            heading = heading_of(key)
            cost_heading = estimate_tokens(heading) + 1
            first = True
            for index, (item, line) in enumerate(zip(items, laid[key])):
                cost = estimate_tokens(line) + 1
                free = limit - used - (cost_heading if first else 0)
                room = free - sum(kept.values())
                if cost > room and not shown and not omitted:   # the most important one: cut to fit, never none
                    room = free
                    if cost > room:
                        line = _cut_to(key, item, line, room)
                elif cost > room and index == 0 and key in _LEAD_KEPT:   # its kept room
                    line = _cut_to(key, item, line, room)
                cost = estimate_tokens(line) + 1
                if cost > room:
                    omitted += 1
                    continue
                if first:
                    lines.append(heading)
                    used += cost_heading
                    first = False
                if key == "pinned":
                    pinned_at.append((len(lines), item))
                lines.append(line)
                used += cost
                shown.setdefault(key, []).append(item["id"])
        return lines, used, omitted, shown, pinned_at

    def pins_hidden(shown: dict[str, list[str]]) -> int:
        return max(0, (pinned_total or 0) - len(shown.get("pinned", [])))

    def note(omitted: int, pins: int) -> str:
        more = f"…{omitted} more not shown — use memory_recall or memory_list" if omitted else ""
        hidden = (f"{pins} pinned rule{'s' if pins != 1 else ''} not shown: memory_list with pinned: true "
                  f"(supermemory list --pinned) lists them all")
        return "(" + "; ".join(part for part in (more, hidden if pins else "") if part) + ")"

    lines, used, omitted, shown, pinned_at = lay_out(budget)
    needs = (omitted > 0, pins_hidden(shown) > 0)   # the note's parts: more items left out, pinned rules left out
    while any(needs):
        # Lay out again with room for the note's parts; `total_items` and `pinned_total` have at least as many
        # digits as any count. Less room can leave out more: then again, with room for every part needed.
        widest = note(total_items if needs[0] else 0, (pinned_total or 0) if needs[1] else 0)
        lines, used, omitted, shown, pinned_at = lay_out(budget - (estimate_tokens(widest) + 1))
        wider = (needs[0] or omitted > 0, needs[1] or pins_hidden(shown) > 0)
        if wider == needs:   # (less room never shows more: what the first layout left out, this one does too)
            lines.append(note(omitted, pins_hidden(shown)))
            used += estimate_tokens(lines[-1]) + 1
            break
        needs = wider
    for at, item in pinned_at:   # room left: more of each pinned rule shown cut, in order
        line, cost = lines[at], estimate_tokens(lines[at]) + 1
        head, newline, was = line.partition("\n")
        # The room of the line's first part: estimates add up to at least the estimate of the joined text.
        room = budget - (used - cost) - estimate_tokens(newline + was)
        longer = _longest_pinned(item, room) if used < budget else None
        if longer is not None and len(longer) > len(head):
            lines[at] = longer + newline + was
            used += estimate_tokens(lines[at]) + 1 - cost
    return "\n".join(lines), used, shown


def briefing_view(result: dict) -> dict:
    """A `MemoryStore.briefing` result as the shells show it: text cut to its budget, tokens used, per section
    the ids the text shows (`items`) and their count (`sections`), how many the budget left out of the text
    (`not_shown`, the note's "…N more"), namespaces."""
    sections = result["sections"]
    namespaces = result["namespaces"]
    text, used, shown = render_briefing(sections, budget=result["budget"], namespace=",".join(namespaces),
                                        left_out=result.get("left_out"), pinned_total=result.get("pinned_total"))
    ids = {name: shown.get(name, []) for name in sections}
    return {"text": text, "tokens": used, "sections": {name: len(ids[name]) for name in sections},
            "not_shown": {name: ((result.get("pinned_total") or len(items)) if name == "pinned" else len(items))
                          - len(ids[name]) for name, items in sections.items()},
            "namespaces": namespaces, "items": ids}
