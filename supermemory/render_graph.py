"""Text views of the link graph (`supermemory graph`): one line per link, or a Mermaid flowchart.

A graph cut at its limit says what it left out."""
from __future__ import annotations


def graph_note(graph: dict, *, cli: bool = True) -> str | None:
    """What a graph cut at its `limit` leaves out ("showing the 500 newest of 1,234 links"), or None when
    it shows every link; `cli` adds the options that show more."""
    if not graph.get("truncated"):
        return None
    shown, total = len(graph["edges"]), graph.get("total_edges")
    if total is None:
        note = f"showing {shown:,} link{'' if shown == 1 else 's'} of this neighbourhood; it has more"
        more = " (--limit N for more, or a smaller --depth)"
    else:
        note = f"showing the {shown:,} newest of {total:,} links"
        more = " (--limit N for more, --id M12 for one memory's neighbourhood)"
    return note + (more if cli else "")


def render_graph(graph: dict) -> str:
    """The links of a graph as text, one `src --relation--> dst (titles)` line each, then what was left out."""
    titles = {n["id"]: n["title"] for n in graph["nodes"]}
    lines = [f"{e['src']} --{e['relation']}--> {e['dst']}   ({titles.get(e['src'], '')} → {titles.get(e['dst'], '')})"
             for e in graph["edges"]]
    note = graph_note(graph)
    if note:
        lines.append(note)
    return "\n".join(lines) or "no links"


def render_mermaid(graph: dict) -> str:
    """A Mermaid flowchart of memory links; a cut graph says so in a `%%` comment."""
    def label(text: str) -> str:
        return (text or "").replace('"', "'").replace("\n", " ")[:60]

    lines = ["graph LR"]
    note = graph_note(graph)
    if note:
        lines.append(f"  %% {note}")
    for node in graph["nodes"]:
        lines.append(f'  {node["id"]}["{node["id"]} {label(node["title"])}"]')
    for edge in graph["edges"]:
        lines.append(f"  {edge['src']} -- {edge['relation']} --> {edge['dst']}")
    return "\n".join(lines)
