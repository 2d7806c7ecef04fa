"""Token-aware text rendering shared by the MCP server, the CLI and the hooks."""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from supermemory.text import estimate_tokens

_SECTION_TITLES = (
    ("pinned", "Pinned rules"),
    ("tasks", "Open tasks"),
    ("decisions", "Key decisions"),
    ("preferences", "Preferences"),
    ("gotchas", "Gotchas"),
    ("relevant", "Relevant to this session"),
    ("recent", "Recent changes"),
    ("sessions", "Last sessions"),
)


def memory_line(item: dict, *, with_body: bool = False, max_chars: int = 240) -> str:
    """One memory as `- [M12 decision] Title — summary` (body instead of summary when asked)."""
    label = item["kind"] + (f"/{item['status']}" if item.get("status") and item["kind"] == "task" else "")
    text = item.get("body") if with_body and item.get("body") else item.get("summary", "")
    title = item.get("title") or ""
    stem = title.strip().rstrip("…").rstrip()
    if text and stem and text.strip().startswith(stem):
        # The title repeats the text's start: show only the rest, cut exactly where the title was.
        rest = text.strip()[len(stem):]
        cut_mid_text = title.strip().endswith("…")
        text = rest.lstrip(" .:—-") if not cut_mid_text else ("…" + rest.lstrip() if rest.strip() else "")
    text = " ".join(text.split())
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    line = f"- [{item['id']} {label}] {title}"
    if text:
        line += f" — {text}"
    return line


def render_briefing(sections: dict, *, budget: int, namespace: str) -> tuple[str, int]:
    """Section-by-section briefing cut to `budget` tokens; returns (text, tokens used).

    Each line is charged its token estimate plus one for its newline. When items are left out,
    the "more not shown" note is charged too (room for it is kept back, so the total stays within
    `budget` unless the header and the note alone exceed it).
    """
    total_items = sum(len(v) for v in sections.values())
    if total_items == 0:
        text = (f"supermemory: no memories yet for {namespace}. Store durable facts with memory_remember "
                "as you learn them (decisions, gotchas, preferences, open tasks).")
        return text, estimate_tokens(text)
    header = f"# supermemory briefing ({namespace})"

    def lay_out(limit: int) -> tuple[list[str], int, int]:
        lines = [header]
        used = estimate_tokens(header)
        omitted = 0
        for key, title in _SECTION_TITLES:
            items = sections.get(key) or []
            if not items:
                continue
            heading = f"## {title}"
            cost_heading = estimate_tokens(heading) + 1
            first = True
            for item in items:
                line = memory_line(item, max_chars=320 if key == "sessions" else 200)
                cost = estimate_tokens(line) + 1
                if used + cost + (cost_heading if first else 0) > limit:
                    omitted += 1
                    continue
                if first:
                    lines.append(heading)
                    used += cost_heading
                    first = False
                lines.append(line)
                used += cost
        return lines, used, omitted

    def note(omitted: int) -> str:
        return f"(…{omitted} more not shown — use memory_recall or memory_list)"

    lines, used, omitted = lay_out(budget)
    if omitted:
        # Lay out again with room for the note; `total_items` has at least as many digits as any count.
        lines, used, omitted = lay_out(budget - (estimate_tokens(note(total_items)) + 1))
        lines.append(note(omitted))
        used += estimate_tokens(lines[-1]) + 1
    return "\n".join(lines), used


def render_recall(result: dict, *, full: bool = False, explain: bool = False) -> str:
    """Compact text of a recall result: one line per hit, with the feature breakdown if asked."""
    results = result.get("results", [])
    lines = []
    if not results:
        lines.append(f"No relevant memories for {result.get('query', '')!r}.")
    for item in results:
        lines.append(memory_line(item, with_body=full, max_chars=4000 if full else 240)
                     + f"  (score {item['score']:.3f}, attention {item['attention']:.3f})")
        if explain and "features" in item:
            feats = item["features"]
            parts = [f"{k} {feats[k]:.2f}" for k in ("lexical", "vector", "importance", "recency",
                                                      "reinforcement", "pinned") if isinstance(feats.get(k), (int, float))]
            cos = feats.get("cosine")
            parts.append(f"cosine {cos:.3f}" if isinstance(cos, (int, float)) else "cosine n/a")
            parts.append(f"coverage {feats.get('coverage', 0):.2f}")
            contrib = item.get("contributions", {})
            lines.append("    features: " + " · ".join(parts))
            lines.append("    contributions: " + " · ".join(f"{k} {v:+.3f}" for k, v in contrib.items()))
    for dropped in result.get("dropped", []):
        lines.append(f"  dropped {dropped['id']} {dropped.get('title', '')}: {dropped['reason']}")
    for key in ("note", "warning"):
        if result.get(key):
            lines.append(f"({result[key]})")
    return "\n".join(lines)


def render_list(result: dict) -> str:
    """Index lines for `list`: no bodies."""
    items = result.get("items", [])
    if not items:
        return "No memories."
    lines = [memory_line(i) for i in items]
    if result.get("truncated"):
        lines.append(f"(…{result['total'] - result['offset'] - len(items)} more; use --offset)")
    return "\n".join(lines)


def fit_bytes(text: str, max_bytes: int, pointer: str = "") -> str:
    """Cut text to a UTF-8 byte budget at a line boundary, adding a pointer to the rest."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    note = f"\n…(truncated to fit {max_bytes} bytes{'; ' + pointer if pointer else ''})"
    room = max(0, max_bytes - len(note.encode("utf-8")))
    cut = data[:room].decode("utf-8", "ignore")
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut + note


def render_mermaid(graph: dict) -> str:
    """A Mermaid flowchart of memory links."""
    def label(text: str) -> str:
        return (text or "").replace('"', "'").replace("\n", " ")[:60]

    lines = ["graph LR"]
    for node in graph["nodes"]:
        lines.append(f'  {node["id"]}["{node["id"]} {label(node["title"])}"]')
    for edge in graph["edges"]:
        lines.append(f"  {edge['src']} -- {edge['relation']} --> {edge['dst']}")
    return "\n".join(lines)


def progress_printer(label: str, *, stream: TextIO | None = None, min_total: int = 1,
                     clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback for long CLI work: on a terminal one line redrawn in place
    (count, percent, rate, ETA); elsewhere a line at every tenth, so logs show it moving too.
    Totals under `min_total` stay silent (a short write needs no progress)."""
    started = clock()
    shown = {"step": -1}

    def report(done: int, total: int) -> None:
        out = stream or sys.stderr
        if total < min_total:
            return
        elapsed = max(clock() - started, 1e-9)
        rate = done / elapsed
        eta = (total - done) / rate if rate > 0 else 0.0
        line = f"{label}: {done}/{total} ({done * 100 // max(total, 1)}%, {rate:.1f}/s, ETA {eta:.0f} s)"
        tty = getattr(out, "isatty", lambda: False)()
        if tty:
            out.write("\r" + line + ("\n" if done >= total else ""))
        else:
            step = done * 10 // max(total, 1)
            if step == shown["step"]:
                return
            shown["step"] = step
            out.write(line + "\n")
        out.flush()
    return report
