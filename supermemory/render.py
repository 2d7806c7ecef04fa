"""The text views of store results, one renderer per view, shared by the MCP tools, the CLI and the hooks."""
from __future__ import annotations

import math
from dataclasses import dataclass

# When the chunks a write did not embed get their vectors (store/embedding.py `embed_missing_vectors`).
VECTORS_LATER = "while the MCP server idles, at the next CLI recall or at `supermemory maintenance`"


@dataclass(frozen=True)
class Commands:
    """How a shell names its own commands in the hints a view gives (`{id}` / `{offset}` are filled in)."""

    update: str
    forget: str
    restore: str
    next_page: str
    unlink: str = "unlink {src} {dst} (relation {relation})"
    every_namespace: str = "namespace '*'"


MCP_COMMANDS = Commands(update="memory_update {id}", forget="memory_forget {id}", restore="memory_restore",
                        next_page="offset={offset}",
                        unlink='memory_link {{"src": "{src}", "dst": "{dst}", "relation": "{relation}", "remove": true}}',
                        every_namespace='namespace "*"')
CLI_COMMANDS = Commands(update="`supermemory update {id}`", forget="`supermemory forget {id}`",
                        restore="`supermemory restore`", next_page="--offset {offset}",
                        unlink="`supermemory unlink {src} {dst} --relation {relation}`",
                        every_namespace="--namespace '*'")


QUERY_CHARS = 120   # a query quoted back (no result, the failed ones `stats` lists) is cut here


def shorten(text: str, limit: int = QUERY_CHARS) -> str:
    """A text to quote back on one line: whitespace runs as one space, and past `limit` characters cut with how
    long it was (`xxxx…(9,999 characters)`), so a pasted log or a 10 KB query never fills the screen."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rstrip() + f"…({len(flat):,} characters)"


def repeated(texts) -> list[tuple[str, int]]:
    """Each distinct text once (as `shorten` shows it), in the order first met, with how many times it came."""
    counts: dict[str, int] = {}
    for text in texts:
        flat = " ".join(str(text).split())
        counts[flat] = counts.get(flat, 0) + 1
    return [(shorten(text), n) for text, n in counts.items()]


def memory_line(item: dict, *, with_body: bool = False, max_chars: int = 240, namespace: bool = False,
                pinned: bool = False) -> str:
    """One memory as `- [M12 decision] Title — summary` (body instead of summary when asked), then
    `[superseded by M…]` when a newer memory holds the current fact: every view that lists memories says so.
    `namespace` adds where it lives (`[M12 decision · billing-api]`), for a list that spans several; `pinned`
    marks a pinned one (`[M12 preference · pinned]`), for a view that does not already group them apart."""
    label = item["kind"] + (f"/{item['status']}" if item.get("status") and item["kind"] == "task" else "")
    if namespace and item.get("namespace"):
        label += f" · {item['namespace']}"
    if pinned and item.get("pinned"):
        label += " · pinned"
    text = item.get("body") if with_body and item.get("body") else item.get("summary", "")
    title = item.get("title") or ""
    stem = title.strip().rstrip("…").rstrip()
    rest = text.strip()[len(stem):] if text and stem and text.strip().startswith(stem) else None
    if rest and not title.strip().endswith("…") and stem[-1].isascii() and stem[-1].isalnum() and rest[0].isalnum():
        rest = None   # "Deploy" over "Deployment …": the title is a word's start, not the text's lead
    if rest is not None:
        if title.strip().endswith("…") and rest.strip():
            # The title is the text cut short (often mid-word): show the text once, from its start.
            title, text, max_chars = "", stem + rest, max_chars + len(stem)
        else:   # a whole title that repeats the text's start: show only the rest
            text = rest.lstrip(" \u3000.。:：—–-,，;；、")   # and its separator, full-width ones too
    text = " ".join(text.split())
    if text and text in " ".join(title.split()):   # the title holds the whole text ("CLAUDE.md › Style: <rule>")
        text = ""
    if len(text) > max_chars:
        text = text[: max_chars - 1].rstrip() + "…"
    stale = f"  [superseded by {item['superseded_by']}]" if item.get("superseded_by") else ""
    return f"- [{item['id']} {label}] " + " — ".join(part for part in (title, text) if part) + stale


def _less_related(result: dict) -> list[dict]:
    """The hits of a ranked page listed under a relevant one without being relevant on their own (relevance under
    the page's `relevant_from`, the fitted threshold): the text shows them apart, as pointers, so an agent does not
    read filler as answers. A page with no relevant hit (gate off) or a listing (no relevance) has none."""
    line = result.get("relevant_from")
    results = result.get("results", [])
    if not isinstance(line, (int, float)) or line <= 0:
        return []
    below = [r for r in results if isinstance(r.get("relevance"), (int, float)) and r["relevance"] < line]
    return below if len(below) < len(results) else []


def render_recall(result: dict, *, full: bool = False, explain: bool = False) -> str:
    """Compact text of a recall result: one line per hit, with the feature breakdown if asked; hits not relevant
    on their own come last, under a line that says so, as one short line each (`_less_related`)."""
    results = result.get("results", [])
    lines = []
    if not results:
        lines.append(f"No relevant memories for {shorten(result.get('query') or '')!r}.")
    less = {id(item) for item in _less_related(result)}
    several = len({r.get("namespace") for r in results}) > 1   # hits of several projects say whose they are
    headed = False
    filler = sorted((r for r in results if id(r) in less), key=lambda r: -r["relevance"])   # by the figure shown
    for item in [r for r in results if id(r) not in less] + filler:
        if id(item) in less and not explain:
            if not headed:
                lines.append(f"Less related (relevance under {result['relevant_from']:.2f}; pointers, not answers):")
                headed = True
            shown = math.floor(item["relevance"] * 100) / 100   # cut, not rounded: 0.279 under 0.28 reads 0.27
            lines.append(memory_line({**item, "summary": ""}, namespace=several) + f"  (relevance {shown:.2f})")
            continue
        scored = isinstance(item.get("score"), (int, float))   # a broad query's listing has no score
        # relevance first: the chance this hit answers the query, the figure that tells an answer from filler
        relevance = f"relevance {item['relevance']:.2f}, " if isinstance(item.get("relevance"), (int, float)) else ""
        figures = (f"  ({relevance}score {item['score']:.3f}, attention {item['attention']:.3f})"
                   if scored else "")
        lines.append(memory_line(item, with_body=full, max_chars=4000 if full else 240, namespace=several) + figures)
        passage = item.get("passage")
        if passage:   # a long memory: where in it the answer is
            lines.append(f"    chunk {passage['chunk']} of {passage['chunks']}: "
                         + passage["text"])
        if explain and item.get("reason"):
            lines.append(f"    {item['reason']}")
        if explain and "features" in item:
            feats = item["features"]
            parts = [f"relevance {feats['relevance']:.3f}"] if isinstance(feats.get("relevance"), (int, float)) else []
            parts += [f"{k} {feats[k]:.2f}" for k in ("lexical", "vector", "importance", "recency",
                                                       "reinforcement", "pinned") if isinstance(feats.get(k), (int, float))]
            cos = feats.get("cosine")
            parts.append(f"cosine {cos:.3f}" if isinstance(cos, (int, float)) else "cosine n/a")
            if isinstance(feats.get("window_cosine"), (int, float)):   # `cosine` moved toward its best window's
                parts[-1] += f" (best window {feats['window_cosine']:.3f})"
            # the share of the query's words this memory holds, whether the embedder reads them or not
            parts.append(f"coverage {feats.get('coverage', 0) + feats.get('blind_coverage', 0):.2f}")
            contrib = item.get("contributions", {})
            if feats.get("superseded_by"):
                parts.append(f"superseded by {feats['superseded_by']}")
            if feats.get("supersedes"):
                parts.append(f"supersedes {feats['supersedes']}")
            lines.append("    features: " + " · ".join(parts))
            lines.append("    contributions: " + " · ".join(f"{k} {v:+.3f}" for k, v in contrib.items()))
    if explain and result.get("query_embedding"):
        lines.append(f"  query embedded: {result['query_embedding']}")
    if explain and result.get("intent"):
        facets = result["intent"]
        lines.append(f"  intent: {', '.join(facets.get('words') or [])} → {facets.get('applied')}")
    for dropped in result.get("dropped", []):
        lines.append(f"  dropped {dropped['id']} {dropped.get('title', '')}: {dropped['reason']}")
    for key in ("note", "warning"):
        if result.get(key):
            lines.append(f"({result[key]})")
    return "\n".join(lines)


def _with_note(text: str, result: dict) -> str:
    return text + (f"\n({result['note']})" if result.get("note") else "")


def remember_notes(result: dict, *, commands: Commands) -> list[str]:
    """What a remember result says besides its id: an exact repeat, no vector, near-duplicates, possible
    contradictions, supersedes links, then `text_notes`."""
    lines = []
    if result.get("status") == "duplicate":
        lines.append(f"Already stored as {result['id']} (exact duplicate); nothing new written.")
    elif result.get("embedded") is False:
        lines.append(f"(stored without a vector for now: keyword search finds it; its vectors come once the model runs, "
                     f"{VECTORS_LATER})")
    for near in result.get("near_duplicates") or []:
        lines.append(f"Similar: {near['id']} ({near.get('similarity', 0):.2f}) {near.get('title', '')} — if the new "
                     f"memory revises it, {commands.update.format(id=near['id'])} and "
                     f"{commands.forget.format(id=result['id'])}.")
    for against in result.get("possible_contradictions") or []:
        lines.append(f"May contradict: {against['id']} ({against.get('similarity', 0):.2f}) {against.get('title', '')} "
                     f"— close, but one of the two says not or gives another value. If the new memory reverses it, "
                     f"{commands.update.format(id=against['id'])} and {commands.forget.format(id=result['id'])}.")
    for old in result.get("supersedes") or []:
        lines.append(f"Supersedes {old}: this memory announces a change to it, so recall ranks {old} lower "
                     f"(never hides it); if it still holds, "
                     f"{commands.unlink.format(src=result['id'], dst=old, relation='supersedes')}.")
    return lines + text_notes(result)


def text_notes(result: dict) -> list[str]:
    """What a remember or update says about the text it stored: what was redacted, what an unclosed
    `<private>` tag left out, and chunks of a long text whose vectors come later."""
    lines = []
    redacted = result.get("redacted") or {}
    if redacted:
        lines.append("Redacted before storing: " + ", ".join(f"{n} × {k}" for k, n in redacted.items()))
    if result.get("unclosed_private"):
        lines.append(f"An unclosed <private> tag: everything after it ({result['unclosed_private']} characters) was "
                     "left out. Close the span with </private> to keep the text after it; to mention the tag "
                     "itself, write it without angle brackets (backticks do not stop it hiding the rest).")
    if result.get("vectors_pending"):
        lines.append(f"({result['vectors_pending']} chunks of this long text get their vectors later, {VECTORS_LATER}; "
                     f"keyword search finds them now)")
    return lines


def render_remember(result: dict, *, commands: Commands) -> str:
    """A remember result: what was stored where (or the id it repeats), then its notes."""
    lines = remember_notes(result, commands=commands)
    if result.get("status") != "duplicate":
        lines.insert(0, f"Stored {result['id']} ({result.get('kind', 'note')}) in namespace {result.get('namespace')}.")
    return "\n".join(lines)


def _memory_records(items: list[dict]) -> list[str]:
    """Each memory's full record, then its own links (once each), before the next memory."""
    lines = []
    for item in items:
        state = ""
        if item.get("superseded_by"):
            now = item.get("current") or item["superseded_by"]
            state = f" · superseded by {item['superseded_by']}" + (f" (current version {now})" if now != item["superseded_by"] else "")
        if item.get("deleted_at"):
            state += f" · deleted {item['deleted_at']}"
        lines.append(f"{item['id']} [{item['kind']}{'/' + item['status'] if item.get('status') else ''}] "
                     f"{item['title']}")
        lines.append(f"  namespace {item.get('namespace')} · tags {', '.join(item.get('tags') or []) or '-'} · "
                     f"importance {item.get('importance')}{' · pinned' if item.get('pinned') else ''} · "
                     f"updated {item.get('updated_at')}{state}")
        body = item.get("body") or ""
        if body:
            lines.append("  " + body.replace("\n", "\n  "))
        if item.get("body_truncated"):
            lines.append(f"  …(body cut at {len(body)} of {item.get('body_chars')} characters)")
        links = {(link["src"], link["relation"], link["dst"]): link for link in item.get("links") or []}
        lines += [f"  link {link['src']} -{link['relation']}→ {link['dst']} ({link['weight']})" for link in links.values()]
    return lines


def searched_where(result: dict) -> str:
    """" in namespace(s) …" for a not-found message, when the result says where it looked."""
    namespaces = result.get("namespaces")
    return f" in namespace(s) {', '.join(namespaces)}" if namespaces else ""


def render_get(result: dict, *, commands: Commands, missing: bool = True) -> str:
    """Full records (header, namespace/tags/importance line, body, its links), then the ids not found.

    :param missing: list the ids not found and the forgotten ones (the CLI reports them on stderr instead).
    """
    lines = _memory_records(result.get("memories", []))
    if missing:
        forgotten = result.get("forgotten") or []
        gone = [m for m in result.get("missing", []) if m not in forgotten]
        if gone:
            lines.append("Not found: " + ", ".join(gone) + searched_where(result))
        if forgotten:
            lines.append(f"Forgotten ({commands.restore} brings them back): " + ", ".join(forgotten))
    if not lines and missing:
        lines = ["Nothing found."]
    return _with_note("\n".join(lines), result).lstrip("\n")


def render_list(result: dict, *, commands: Commands) -> str:
    """Index lines for a list page (no bodies), with where the next page starts."""
    items = result["memories"] if "memories" in result else result.get("items", [])   # memory_list: `memories`
    if not items:
        return "No memories."
    lines = [memory_line(i, pinned=True) for i in items]
    shown_to = result.get("offset", 0) + len(items)
    if shown_to < result.get("total", 0):
        lines.append(f"(showing {result.get('offset', 0) + 1}-{shown_to} of {result['total']}; "
                     f"next page: {commands.next_page.format(offset=shown_to)})")
    return _with_note("\n".join(lines), result)


def list_json(result: dict) -> dict:
    """A list page as `list --json` prints it and `memory_list` returns it: its records under `memories`, the key
    `get` uses, and under `items` too (the same list object), the key both gave them before (an alias kept for this
    release only, then dropped)."""
    return {"memories": result["items"], **result}


def update_moved(result: dict) -> list[str]:
    """The line an update of an old version's id adds (`asked`: the change went to the current version of its
    chain), in the words MCP and the CLI share; none for an update of a current version."""
    return ([f"{result['asked']} was superseded: the change went to its current version."]
            if result.get("asked") else [])


def render_update(result: dict) -> str:
    """An update result: the new version and the one it supersedes, or that nothing changed."""
    moved = update_moved(result)
    if result.get("status") == "unchanged":
        return "\n".join(moved + [f"{result['id']} unchanged: the new values equal the current ones."])
    return "\n".join(moved + [f"Updated: {result['id']} is the new version and supersedes {result.get('previous')} "
                               f"(history kept)."] + text_notes(result))


HISTORY_FIELDS = ("kind", "status", "importance", "pinned", "tags")   # named in history as `field old → new`


def _field_value(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value) or "none"
    return "none" if value is None or value == "" else str(value)


def version_changes(before: dict, after: dict) -> list[str]:
    """What changed from one version to the next besides the text: `status open → done`, one per field."""
    return [f"{field} {_field_value(before.get(field))} → {_field_value(after.get(field))}"
            for field in HISTORY_FIELDS if before.get(field) != after.get(field)]


def render_history(result: dict) -> str:
    """Every version of a chain, oldest first: when each one was current, who wrote it (when known), what changed
    besides the text (a status-only change: `status open → done`), and the body when it differs from the
    version before."""
    # A chain's newest version that another memory supersedes is its latest, not a current fact (fu36 D9).
    successor = f", superseded by {result['superseded_by']}" if result.get("superseded_by") else ""
    successor += f" (itself superseded: now {result['now_held_by']})" if result.get("now_held_by") else ""
    latest = "latest" if successor else "current"
    lines = [f"History of {result['id']} ({latest} version {result.get('current')}{successor}):"]
    previous = None
    for version in result.get("versions", []):
        state = (latest + successor if version["id"] == result.get("current")
                 else f"until {version.get('valid_to')}")
        if version.get("deleted_at"):
            state += f", deleted {version['deleted_at']}"
        if version.get("merged_into"):
            state += f", merged into {version['merged_into']}"
        source = version.get("source") or {}
        if by := source.get("by") or (source.get("platform") if not version.get("version_of") else None):
            state += f", by {by}"
        if version.get("deleted_at") and source.get("forgotten_by"):
            state += f", forgotten by {source['forgotten_by']}"
        lines.append(f"- {version['id']} {version.get('valid_from')} ({state}) {version['title']}")
        before = None if version.get("merged_into") else previous
        changed = version_changes(before, version) if before is not None else []
        body = version.get("body") or ""
        same_text = before is not None and (before.get("title"), before.get("body") or "") == (version["title"], body)
        merged = version.get("merged_from") or []   # a merge's step says what it took in, never "(no change)"
        notes = [f"merged in {', '.join(merged)} (its text stays in history, its links moved here)"] if merged else []
        notes += ["changed: " + "; ".join(changed)] if changed else []
        if notes or same_text:
            lines.append("    " + ("; ".join(notes) or "(no change)"))
        if body and not same_text:
            lines.append("    " + body.replace("\n", "\n    "))
        if not version.get("merged_into"):
            previous = version
    for event in result.get("redactions", []):
        lines.append(f"- {event['id']} {event['at']} redacted in place: {', '.join(event['fields'])}")
    for link in result.get("links", []):
        lines.append(f"- link {link['src']} -{link['relation']}→ {link['dst']}")
    return _with_note("\n".join(lines), result)


def render_forget(result: dict, *, commands: Commands) -> str:
    """A forget result: which ids, and whether a restore can bring them back."""
    ids = ", ".join(result.get("forgotten", [])) or "nothing"
    if result.get("hard"):
        return f"Hard-deleted with their history: {ids}."
    return f"Forgotten (soft delete; {commands.restore} brings them back): {ids}."


def render_sweep(result: dict, *, applied: bool) -> str:
    """`supermemory forget --sweep`: how many memories are (or would be) archived, with a sample."""
    verb = "archived" if applied else "would archive (dry run; --apply to archive)"
    lines = [f"{verb}: {result['matched']} memories"]
    lines += [f"  {item['id']} [{item['kind']}] {item['title']} (last used {item['last_used']})"
              for item in result["sample"]]
    if result["truncated"]:
        lines.append(f"  … and {result['matched'] - len(result['sample'])} more")
    return "\n".join(lines)


def render_restore(result: dict) -> str:
    """A restore result: the ids brought back."""
    if not result.get("restored"):
        return "Nothing to restore: those memories are not deleted."
    return "Restored: " + ", ".join(result["restored"]) + "."


def render_link(result: dict) -> str:
    """A link result: the typed relation and its weight."""
    said = {"unchanged": "Already linked", "updated": "Link weight updated:"}.get(result.get("status"), "Linked")
    return f"{said} {result['src']} -{result['relation']}→ {result['dst']} (weight {result['weight']})."


def render_unlink(result: dict) -> str:
    """An unlink result: the relations removed (no link to remove is an error)."""
    return f"Removed {result['src']} -{'/'.join(result['removed'])}→ {result['dst']}."


def render_merge(result: dict) -> str:
    """A merge result: which memory was folded into which, and the new current version."""
    return f"{result['merged']} merged into {result['kept']}; current version {result['id']}"


def render_stats(result: dict, *, commands: Commands = MCP_COMMANDS) -> str:
    """Store health: which namespaces it counts (and how to count every one), live memories by kind and namespace,
    old versions, size, embedder, search figures, the failed queries (short, each once)."""
    by_kind = ", ".join(f"{k} {v}" for k, v in sorted((result.get("by_kind") or {}).items())) or "none"
    by_ns = ", ".join(f"{k} {v}" for k, v in sorted((result.get("by_namespace") or {}).items())) or "none"
    embedder = result.get("embedder") or {}
    pinned = f"{embedder.get('provider')}/{embedder.get('model', '-')}" if embedder else "not pinned yet"
    counted = result.get("namespace") or ["*"]
    scope = ("every namespace" if "*" in counted else
             " + ".join(counted) + f" ({commands.every_namespace} counts every namespace)")
    lines = [
        f"counting     {scope}",
        f"memories     {result.get('memories', 0)} live memories ({by_kind}), "
        f"{result.get('versions_superseded', 0)} superseded versions, {result.get('superseded_by_links', 0)} superseded "
        f"by newer memories, {result.get('deleted', 0)} deleted",
        f"namespaces   {by_ns}",
        f"embedder     {pinned}",
        f"database     {result.get('db_path')} ({(result.get('db_bytes') or 0) / 1e6:.1f} MB), driver "
        f"{result.get('driver')}, vectors via {result.get('vector_index')}",
    ]
    if result.get("searches"):
        lines.append(f"searches     {result['searches']} (empty {result.get('empty_result_rate', 0):.0%}, mean hits "
                     f"{result.get('mean_hits')}, p50 {result.get('latency_ms_p50')} ms, "
                     f"p95 {result.get('latency_ms_p95')} ms)")
    else:
        lines.append("searches     none yet (latency figures appear after the first recall)")
    for query, times in repeated(result.get("recent_empty_queries") or []):
        lines.append(f"  no result: {query}" + (f"  ({times}×)" if times > 1 else ""))
    return _with_note("\n".join(lines), result)


def render_export(result: dict) -> str:
    """An export result: the file written, its counts and which namespaces it holds (a file of several projects'
    memories must say so; CLI and MCP name the option that narrows it differently, so neither is named here)."""
    extra = ", ".join(f"{k} {v}" for k, v in result.items() if k != "path" and isinstance(v, (int, float, str)))
    text = f"Exported to {result['path']}" + (f" ({extra})" if extra else "") + "."
    held = result.get("namespaces") or {}
    if held:
        text += (f"\nIt holds {len(held)} namespace{'' if len(held) == 1 else 's'}: "
                 + ", ".join(f"{ns} {n}" for ns, n in held.items())
                 + ".")
    return text


def render_import(result: dict) -> str:
    """An import result: how many memories came in, were here already, which took new ids, what was redacted."""
    text = f"imported {result['imported']} memories ({result['skipped']} already present)"
    moved = result.get("renumbered") or {}
    if moved:
        taken = result.get("taken") or {}
        why = {"other": "another memory here has", "revised": "the same memory, revised here since, has",
               "file": "an earlier line of the file has"}
        reasons = [f"{', '.join(ids)} ({why[reason]} {'that id' if len(ids) == 1 else 'those ids'})"
                   for reason in why if (ids := [i for i, r in taken.items() if r == reason])]
        text += ("\nids already taken: " + "; ".join(reasons) + ". " if reasons else "\n") + \
            ("Their memories came in under new ids, each with its whole version chain: "
             + ", ".join(f"{old} → {new}" for old, new in moved.items()))
    dropped = result.get("links_dropped") or []
    if dropped:
        text += (f"\n{len(dropped)} link{'s' if len(dropped) != 1 else ''} not kept: " + ", ".join(
            f"{d['src']} -{d['relation']}→ {d['dst']} ({d['why']})" for d in dropped[:10])
            + (f", and {len(dropped) - 10} more" if len(dropped) > 10 else ""))
    redacted = result.get("redacted") or {}
    if redacted:
        text += "\n" + "\n".join(text_notes({"redacted": redacted}))
    return text


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


def render_index_md(result: dict) -> dict:
    """A `MemoryStore.memory_index` result as MEMORY.md text: one line per memory, then how many more when
    that line fits in its `max_lines`; `left_out` says which kinds the cap left out ("12 fact, 3 superseded")."""
    lines = [memory_line(i, max_chars=160) for i in result["items"]]
    if not lines and not result["more"]:   # an empty store: list's one line, not a blank one (a valid file too)
        return {"text": "No memories.\n", "lines": 0, "total": result["total"], "more": 0, "left_out": ""}
    if result["more"] and len(lines) < result.get("max_lines", len(lines) + 1):
        lines.append(f"…and {result['more']} more — use memory_recall / `supermemory recall`")
    left_out = ", ".join(f"{n} {kind}" for kind, n in (result.get("left_out") or {}).items())
    return {"text": "\n".join(lines) + "\n", "lines": len(lines), "total": result["total"], "more": result["more"],
            "left_out": left_out}


def render_health(result: dict) -> str:
    """`supermemory health` as text: pin, near-duplicates with their merge command, contradictions
    (linked: the first ones the store lists, and how many more; close pairs where one negates the other,
    not to be merged; and new memories that contradict an imported rule), `supersedes` cycles with the
    unlink commands that break them, orphans, the chunks still
    waiting for a vector (work to come, not a problem), stale and expired."""
    lines = [f"schema {result['schema_version']} · model pin: {result['model_pin_status']}",
             f"near-duplicate pairs: {result['near_duplicate_pairs']:,}"]
    for pair in result["near_duplicates"]:
        lines.append(f"  {pair['a']} ~ {pair['b']} ({pair['similarity']:.2f}); keep {pair['canonical']}: {pair['merge']}")
    kept = [pair["canonical"] for pair in result["near_duplicates"]]
    if len(kept) > len(set(kept)):   # a group of copies: every merge makes the kept memory a new version
        lines.append("  (a merge gives the memory kept a new id, which it prints: use that id in the next merge)")
    if result["near_duplicate_pairs"] > len(result["near_duplicates"]):
        lines.append(f"  …and {result['near_duplicate_pairs'] - len(result['near_duplicates']):,} more")
    contradictions = result["contradictions"]
    lines.append(f"contradictions: {result['contradiction_count']:,}")
    for c in contradictions:
        lines.append(f"  {c['src']} contradicts {c['dst']}: {c['titles'][0]} / {c['titles'][1]}")
    if result["contradiction_count"] > len(contradictions):
        lines.append(f"  …and {result['contradiction_count'] - len(contradictions):,} more")
    possible = result.get("possible_contradictions") or []
    more = result.get("possible_contradiction_count", 0) - len(possible)
    if possible:
        lines.append(f"possible contradictions (close, but one says not or gives another value: no merge): {len(possible) + more:,}")
    for pair in possible:
        lines.append(f"  {pair['a']} vs {pair['b']} ({pair['similarity']:.2f}): {pair['titles'][0]} / {pair['titles'][1]}")
    if more > 0:
        lines.append(f"  …and {more:,} more")
    pending = pending_passes_line(result.get("passes_pending"), links=bool(possible))
    if pending:   # the pass links such pairs itself: not a fix for the user to make by hand
        lines.append(pending)
    rules = result.get("rule_conflicts") or []
    if rules:
        lines.append(f"memories that contradict an imported rule: {len(rules)}")
        for c in rules:
            lines.append(f"  {c['memory']} vs rule {c['rule']} ({c['file']}): {c['titles'][0]} / {c['titles'][1]}")
    cycles = result.get("supersedes_cycles") or []
    if cycles:
        lines.append(f"supersedes cycles (each memory marks the next outdated, so a stale fact reads as current): "
                     f"{len(cycles)}; remove the wrong link of each")
    for cycle in cycles:
        ids = cycle["ids"]
        pairs = list(zip(ids, ids[1:] + ids[:1]))
        lines.append("  " + " → ".join(ids + ids[:1]) + ": " + " / ".join(cycle["titles"]))
        lines.append("    " + " or ".join(f"`supermemory unlink {a} {b} --relation supersedes`" for a, b in pairs))
    lines.append("orphans: " + ", ".join(f"{k} {v}" for k, v in result["orphans"].items()))
    if result.get("vectors_pending"):
        lines.append(f"vectors pending: {result['vectors_pending']:,} chunks of long texts, work in progress, not a problem "
                     f"(keyword search finds them now; their vectors come {VECTORS_LATER})")
    if result.get("windows_pending"):
        lines.append(f"windows pending: {result['windows_pending']:,} memories without their two-sentence window vectors "
                     f"yet (imported, written before windows were kept, or without the model), not a problem: recall matches "
                     f"their whole text; the MCP server fills them in while idle, `supermemory maintenance` at once")
    lines.append(f"stale (sweep candidates): {result['stale']} · expired: {result['expired']}")
    lines.append("clean" if result["clean"] else "needs attention")
    return "\n".join(lines)


def pending_passes_line(pending: list[str] | None, *, links: bool = False) -> str | None:
    """"N one-time passes pending (…): run `supermemory maintenance`" (doctor, health, maintenance cut short), or
    None; `links`: the view lists close pairs, which the pending supersedes passes may link themselves."""
    if not pending:
        return None
    line = (f"{len(pending)} one-time pass{'' if len(pending) == 1 else 'es'} pending ({', '.join(pending)}): "
            "run `supermemory maintenance`")
    if links and any("supersedes" in name for name in pending):
        line += " (it may link some of the pairs above itself)"
    return line


def changed_words(old: str, new: str, most: int = 4) -> str | None:
    """What a new text changed of an old one when that is a few words in one place ("03:00 → 04:30"), or None."""
    from supermemory.ui.diff import common_ends   # the version diff's own trim (standard library only)

    a, b = old.split(), new.split()
    start, end = common_ends(a, b)
    gone, came = a[start:len(a) - end], b[start:len(b) - end]
    if not gone or not came or len(gone) > most or len(came) > most:
        return None
    return f"{' '.join(gone).rstrip('.,;:!?')} → {' '.join(came).rstrip('.,;:!?')}"


def render_maintenance(result: dict, *, shown: int = 20) -> str:
    """`supermemory maintenance` as text: the counts on one line, then the `supersedes` links its links pass
    wrote, each named ("M57 supersedes M56 (03:00 → 04:30): …"), and the one-time passes still pending."""
    lists = ("supersedes", "passes_pending")
    lines = [", ".join(f"{k} {v}" for k, v in result.items() if k not in lists)]
    links = result.get("supersedes") or []
    for link in links[:shown]:
        new, old = link["titles"]
        change = changed_words(old, new)
        lines.append(f"  {link['src']} supersedes {link['dst']}" + (f" ({change}): {shorten(new)}" if change else
                                                                      f": {shorten(new)} (was: {shorten(old)})"))
    more = result.get("supersedes_links", 0) - len(links[:shown])
    if links and more > 0:
        lines.append(f"  …and {more:,} more")
    pending = pending_passes_line(result.get("passes_pending"))
    if pending:
        lines.append(pending + " again: it goes on where this run stopped")
    return "\n".join(lines)
