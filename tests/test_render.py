"""The shared renderers: a memory line never loses a character where its title was cut."""
from __future__ import annotations

from supermemory.render import memory_line, render_history, render_recall, render_health
from supermemory.render_graph import render_graph, render_mermaid
from supermemory.text import estimate_tokens, excerpt, summarize


def test_a_title_cut_mid_word_is_shown_once_as_the_whole_text():
    """An untitled memory's title is its first sentence cut at 80 characters, often mid-word: the line shows the
    text once, from its start, instead of "…pushes the wheel to t… — …he internal index"."""
    text = "SQLite WAL mode with BEGIN IMMEDIATE keeps multi-row transactions safe across processes"
    title = summarize(text, max_chars=48)
    assert title.endswith("…")
    line = memory_line({"id": "M1", "kind": "fact", "title": title, "summary": text})
    assert line == "- [M1 fact] " + text
    short = memory_line({"id": "M1", "kind": "fact", "title": title, "summary": text}, max_chars=20)
    assert short.startswith("- [M1 fact] " + title.rstrip("…")) and short.endswith("…")
    assert len(short) < len(line)


def test_a_whole_title_that_repeats_the_text_start_is_not_shown_twice():
    line = memory_line({"id": "M2", "kind": "decision", "title": "Use uv",
                        "summary": "Use uv. It resolves faster than pip."})
    assert line == "- [M2 decision] Use uv — It resolves faster than pip."


def test_a_title_equal_to_the_text_shows_no_dangling_separator():
    line = memory_line({"id": "M3", "kind": "task", "status": "open", "title": "Ship the UI", "summary": "Ship the UI"})
    assert line == "- [M3 task/open] Ship the UI"


def test_a_title_that_repeats_a_chinese_lead_drops_its_full_width_separator():
    text = "部署流程：先在预发布环境验证，再用 ansible 发布到生产；缓存使用 Redis 集群"
    line = memory_line({"id": "M5", "kind": "note", "title": "部署流程", "summary": text})
    assert line == "- [M5 note] 部署流程 — 先在预发布环境验证，再用 ansible 发布到生产；缓存使用 Redis 集群"
    line = memory_line({"id": "M6", "kind": "note", "title": "部署", "summary": "部署，先验证再发布。"})
    assert line == "- [M6 note] 部署 — 先验证再发布。"


def test_a_title_that_is_a_words_start_keeps_the_whole_text():
    # Found by a fresh-user run: title "Deploy" over "Deployment …" showed "Deploy — ment …".
    line = memory_line({"id": "M7", "kind": "note", "title": "Deploy", "summary": "Deployment runs from CI nightly."})
    assert line == "- [M7 note] Deploy — Deployment runs from CI nightly."
    line = memory_line({"id": "M8", "kind": "note", "title": "Deploy", "summary": "Deploy: CI runs it nightly."})
    assert line == "- [M8 note] Deploy — CI runs it nightly."
    cut = memory_line({"id": "M9", "kind": "note", "title": "Deploym…", "summary": "Deployment runs nightly."})
    assert cut == "- [M9 note] Deployment runs nightly."


def test_a_title_that_holds_the_whole_text_shows_it_once():
    # Found by a fresh-user run: an imported rule read "CLAUDE.md › Style: Use ruff format. — Use ruff format." in
    # list and in every briefing.
    rule = "Use ruff format (not black) for formatting."
    line = memory_line({"id": "M1", "kind": "preference", "title": f"CLAUDE.md › Shop rules › Style: {rule}",
                        "summary": rule})
    assert line == f"- [M1 preference] CLAUDE.md › Shop rules › Style: {rule}"


def test_a_title_that_does_not_start_the_text_keeps_the_whole_text():
    line = memory_line({"id": "M4", "kind": "fact", "title": "Ports", "summary": "The API listens on 8080."})
    assert line == "- [M4 fact] Ports — The API listens on 8080."


def test_progress_off_a_terminal_prints_a_line_per_tenth_with_rate_and_eta():
    import io

    from supermemory.progress import progress_printer

    ticks = iter(float(i) for i in range(1000))
    out = io.StringIO()
    report = progress_printer("embedding", stream=out, min_total=5, clock=lambda: next(ticks))
    for done in range(1, 51):
        report(done, 50)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11      # the start, then every tenth
    assert lines[-1] == "embedding: 50/50 (100%, 1.0/s, ETA 0 s)"
    silent = io.StringIO()
    short = progress_printer("embedding", stream=silent, min_total=5)
    for done in range(1, 4):
        short(done, 3)
    assert silent.getvalue() == ""


# --- one renderer per view, each shell's own commands in its hints -----------------------------------

def _item(n: int) -> dict:
    return {"id": f"M{n}", "kind": "fact", "title": f"Fact {n}", "summary": f"fact number {n}"}


def test_a_list_page_points_each_shell_at_its_own_next_page_argument():
    from supermemory.render import CLI_COMMANDS, MCP_COMMANDS, render_list

    page = {"items": [_item(1), _item(2)], "total": 5, "offset": 0}
    assert render_list(page, commands=MCP_COMMANDS).endswith("(showing 1-2 of 5; next page: offset=2)")
    assert render_list(page, commands=CLI_COMMANDS).endswith("(showing 1-2 of 5; next page: --offset 2)")
    assert render_list({"items": [], "total": 0}, commands=CLI_COMMANDS) == "No memories."


def test_forget_and_remember_hints_name_the_shells_own_commands():
    from supermemory.render import CLI_COMMANDS, MCP_COMMANDS, remember_notes, render_forget

    forgotten = {"forgotten": ["M1"], "hard": False}
    assert "memory_restore brings them back" in render_forget(forgotten, commands=MCP_COMMANDS)
    assert "`supermemory restore` brings them back" in render_forget(forgotten, commands=CLI_COMMANDS)
    stored = {"id": "M2", "status": "created", "near_duplicates": [{"id": "M1", "similarity": 0.9, "title": "x"}]}
    assert "memory_update M1 and memory_forget M2" in remember_notes(stored, commands=MCP_COMMANDS)[0]
    assert "`supermemory update M1` and `supermemory forget M2`" in remember_notes(stored, commands=CLI_COMMANDS)[0]


def test_get_can_leave_the_ids_not_found_to_the_caller():
    from supermemory.render import CLI_COMMANDS, render_get

    result = {"memories": [], "missing": ["M9"], "forgotten": []}
    assert render_get(result, commands=CLI_COMMANDS) == "Not found: M9"
    assert render_get(result, commands=CLI_COMMANDS, missing=False) == ""


def test_stats_of_a_new_store_says_no_searches_yet_and_never_none():
    from supermemory.render import render_stats

    text = render_stats({"memories": 0, "by_kind": {}, "by_namespace": {}, "versions_superseded": 0, "deleted": 0,
                         "db_path": "/x/memory.db", "db_bytes": 4096, "embedder": None, "driver": "sqlite3",
                         "vector_index": "sqlite-vec", "searches": 0, "empty_result_rate": 0.0, "mean_hits": 0.0,
                         "latency_ms_p50": None, "latency_ms_p95": None, "recent_empty_queries": []})
    assert "0 live memories" in text and "searches     none yet" in text and "not pinned yet" in text
    assert "None" not in text


GRAPH = {"nodes": [{"id": "M1", "kind": "fact", "title": "alpha", "live": True},
                   {"id": "M2", "kind": "fact", "title": "beta", "live": True}],
         "edges": [{"src": "M1", "dst": "M2", "relation": "refines", "weight": 1.0}]}


def test_a_graph_cut_at_its_limit_says_how_many_links_it_left_out_in_text_and_mermaid():
    assert render_graph({**GRAPH, "truncated": False, "total_edges": 1}) == "M1 --refines--> M2   (alpha → beta)"
    cut = {**GRAPH, "truncated": True, "total_edges": 1234}
    assert render_graph(cut).splitlines()[-1].startswith("showing the 1 newest of 1,234 links (--limit N for more")
    assert "%% showing the 1 newest of 1,234 links" in render_mermaid(cut).splitlines()[1]
    around = render_graph({**GRAPH, "truncated": True, "total_edges": None})
    assert "showing 1 link of this neighbourhood; it has more" in around
    assert render_graph({"nodes": [], "edges": [], "truncated": False, "total_edges": 0}) == "no links"


HEALTH = {"schema_version": 5, "model_pin_status": "ok", "near_duplicate_pairs": 0, "near_duplicates": [],
          "contradictions": [], "contradiction_count": 0, "rule_conflicts": [], "stale": 0, "expired": 0,
          "vectors_pending": 0,
          "orphans": {"chunks_without_memory": 0, "fts_without_live_chunk": 0, "live_chunks_without_fts": 0}}


def test_health_lists_the_first_contradictions_and_says_how_many_more_there_are():
    # Found on a 20k-memory store: `supermemory health` printed all 5,405 contradicts links (5,411 lines).
    listed = [{"src": f"M{i}", "dst": f"M{i + 1}", "titles": ["a", "b"]} for i in range(50)]
    text = render_health({**HEALTH, "contradictions": listed, "contradiction_count": 5405, "clean": False})
    assert text.count(" contradicts ") == 50
    assert "contradictions: 5,405" in text and "…and 5,355 more" in text
    assert text.splitlines()[-1] == "needs attention"


def test_health_lists_possible_contradictions_apart_from_merges_and_says_how_many_more():
    listed = [{"a": "M7", "b": "M6", "similarity": 0.93, "titles": ["Use staging", "Do not use staging"]}]
    text = render_health({**HEALTH, "possible_contradictions": listed, "possible_contradiction_count": 3,
                          "clean": False})
    assert "possible contradictions (close, but one says not or gives another value: no merge): 3" in text
    assert "  M7 vs M6 (0.93): Use staging / Do not use staging" in text and "…and 2 more" in text
    assert "supermemory merge" not in text and "possible" not in render_health({**HEALTH, "clean": True})


def test_chunks_waiting_for_their_vectors_are_not_called_orphans_nor_a_problem():
    # Found after storing a 1 MB text: health said "live_chunks_without_vector 1424" among the orphans and
    # "needs attention", for the vectors that come by design while the MCP server idles.
    text = render_health({**HEALTH, "vectors_pending": 1424, "clean": True})
    assert "vectors pending: 1,424 chunks of long texts" in text and "live_chunks_without_vector" not in text
    assert text.splitlines()[-1] == "clean"


def test_a_long_hit_shows_the_part_of_its_passage_around_the_query_word_it_holds_least():
    text = " ".join(f"shard{n % 3} row{n}." for n in range(200))
    shown = excerpt(text, "row150 shard1", tokens=30)
    assert "row150." in shown and shown.startswith("…") and shown.endswith("…") and len(shown) <= 122
    chinese = "".join(f"第{n}段记录了服务器的日常运行情况。" for n in range(60)) + "数据库迁移在周二完成。" + "其余内容不相关。" * 40
    shown = excerpt(chinese, "数据库迁移是什么时候完成的")
    assert "数据库迁移在周二完成" in shown and estimate_tokens(shown) <= 110   # ~100 tokens: ~100 characters here
    assert 90 <= estimate_tokens(excerpt(text, "row150")) <= 110
    assert excerpt("short passage", "anything") == "short passage"
    result = {"query": "row150", "results": [{"id": "M3", "kind": "note", "title": "a log", "summary": "shard0 row0.",
                                              "score": 1.0, "attention": 1.0,
                                              "passage": {"chunk": 7, "chunks": 40,
                                                          "text": excerpt(text, "row150")}}]}
    lines = render_recall(result).splitlines()
    assert lines[1].startswith("    chunk 7 of 40: …") and "row150." in lines[1]


def test_the_briefing_lists_as_shown_exactly_the_ids_its_text_shows_and_counts_the_rest():
    """A fresh-user run: `briefing --json` listed all twelve decisions under `items` while the budget let the text
    show two; the structured lists now describe the text, and what the budget cut is only counted."""
    import re

    from supermemory.render_briefing import briefing_view

    decisions = [{"id": f"M{i}", "kind": "decision", "title": f"Decision {i}",
                  "summary": f"Decision {i}: use library{i} for feature{i} because of reasons" + " long" * (i % 3)}
                 for i in range(12, 0, -1)]
    sections = {"pinned": [], "tasks": [], "decisions": decisions, "recent": [], "relevant": []}
    view = briefing_view({"sections": sections, "budget": 80, "namespaces": ["demo"]})
    in_text = re.findall(r"^- \[(M\d+) ", view["text"], flags=re.M)
    assert 0 < len(in_text) < 12
    assert view["items"]["decisions"] == in_text and view["sections"]["decisions"] == len(in_text)
    assert view["not_shown"] == {"pinned": 0, "tasks": 0, "decisions": 12 - len(in_text), "recent": 0, "relevant": 0}
    assert view["text"].endswith(f"(…{12 - len(in_text)} more not shown — use memory_recall or memory_list)")
    whole = briefing_view({"sections": sections, "budget": 100_000, "namespaces": ["demo"]})
    assert whole["items"]["decisions"] == [d["id"] for d in decisions] and sum(whole["not_shown"].values()) == 0
    empty = briefing_view({"sections": {"pinned": []}, "budget": 80, "namespaces": ["demo"]})
    assert empty["items"] == {"pinned": []} and empty["not_shown"] == {"pinned": 0}


def test_get_of_several_memories_shows_each_ones_links_with_it_once():
    """A fresh-user run: `supermemory get M1 M2 M3` printed every record's links after the last record, M1→M2
    twice (it is M1's and M2's); each record now carries its own links, once."""
    from supermemory.render import CLI_COMMANDS, render_get

    def memory(n: int, links: list[tuple[int, int]]) -> dict:
        return {"id": f"M{n}", "kind": "fact", "title": f"fact {n}", "namespace": "p", "tags": [], "importance": 0.5,
                "updated_at": "2026-01-01T00:00:00Z", "body": f"body {n}",
                "links": [{"src": f"M{s}", "dst": f"M{d}", "relation": "related", "weight": 1.0} for s, d in links]}

    text = render_get({"memories": [memory(1, [(1, 2)]), memory(2, [(2, 3), (1, 2), (2, 3)]), memory(3, [(2, 3)])],
                       "missing": []}, commands=CLI_COMMANDS)
    records = text.split("\nM")
    assert [r.splitlines()[0].split()[0].lstrip("M") for r in records] == ["1", "2", "3"]
    links = [[line.strip() for line in r.splitlines() if line.startswith("  link ")] for r in records]
    assert links == [["link M1 -related→ M2 (1.0)"],
                     ["link M2 -related→ M3 (1.0)", "link M1 -related→ M2 (1.0)"],
                     ["link M2 -related→ M3 (1.0)"]]


def test_history_names_what_changed_besides_the_text_and_shows_an_unchanged_body_once():
    """A status-only version used to print as a copy of the one before it."""
    base = {"kind": "task", "title": "Ship it", "body": "Ship it", "tags": [], "importance": 0.5, "pinned": False,
            "source": {"platform": "codex"}, "version_of": None}
    versions = [{**base, "id": "M1", "status": "open", "valid_from": "T1", "valid_to": "T2"},
                {**base, "id": "M2", "status": "done", "valid_from": "T2", "valid_to": "T3", "version_of": "M1",
                 "source": {"platform": "codex", "by": "cli"}},
                {**base, "id": "M3", "status": "done", "valid_from": "T3", "version_of": "M1", "body": "Ship it today",
                 "tags": ["release"], "pinned": True}]
    text = render_history({"id": "M1", "current": "M3", "versions": versions})
    assert text.splitlines() == ["History of M1 (current version M3):",
                                 "- M1 T1 (until T2, by codex) Ship it", "    Ship it",
                                 "- M2 T2 (until T3, by cli) Ship it", "    changed: status open → done",
                                 "- M3 T3 (current) Ship it", "    changed: pinned no → yes; tags none → release",
                                 "    Ship it today"]


def test_the_smallest_briefing_budget_still_shows_the_most_important_memory_shortened(store):
    """`memory_briefing {"query": "CI", "max_tokens": 50}` (the least allowed) showed the header and "(…7 more not
    shown)" only: no line fitted whole. The first memory in the briefing's order is now cut to fit instead."""
    from supermemory.render_briefing import briefing_view

    rule = store.remember("CI runs the full pytest suite on every push and blocks the merge when any test fails, "
                          "including the slow browser tests that need chromium installed", kind="preference",
                          pinned=True)["id"]
    for i in range(6):
        store.remember(f"CI gotcha number {i}: the cache key of job {i} must include the lockfile hash or the "
                       "runner restores stale wheels from an older branch", kind="gotcha")
    for budget in (50, 60, 80):
        brief = briefing_view(store.briefing(query="CI", max_tokens=budget))
        lines = brief["text"].splitlines()
        shown = [line for line in lines if line.startswith("- [")]
        assert shown and shown[0].startswith(f"- [{rule} preference] CI runs the full pytest"), brief["text"]
        assert brief["tokens"] <= budget and estimate_tokens(brief["text"]) <= brief["tokens"], brief
        assert brief["items"]["pinned"] == [rule] and lines[-1].startswith("(…"), brief["text"]
    assert shown[0].endswith("…") or budget > 50


def _hit(id_, title, relevance, score):
    return {"id": id_, "kind": "note", "title": title[:60], "summary": title, "relevance": relevance, "score": score,
            "attention": 0.1}


def test_hits_not_relevant_on_their_own_come_last_under_a_line_that_says_so():
    """A fresh user's pages held one answer and six filler lines formatted like it (fu20 D6)."""
    from supermemory.render import render_recall

    page = {"query": "q", "relevant_from": 0.28,
            "results": [_hit("M1", "We use chi as the HTTP router.", 0.99, 8.0),
                        _hit("M5", "The HTTP client timeout is 60s. " * 8, 0.03, 3.0),
                        _hit("M2", "Notes on chi middlewares.", 0.41, 2.9)]}
    lines = render_recall(page).splitlines()
    assert [line.split("]")[0] for line in lines if line.startswith("- [")] == ["- [M1 note", "- [M2 note", "- [M5 note"]
    assert lines[2].startswith("Less related (relevance under 0.28")
    assert lines[3].endswith("(relevance 0.03)") and len(lines[3]) < 140 and "score" not in lines[3]
    assert "score" in lines[0] and "score" in lines[1]


def test_less_related_hits_are_ordered_by_the_relevance_they_show_and_never_read_as_the_line():
    """fu21 N7: 0.2795 printed as 0.28 under "relevance under 0.28", and 0.13 was listed above 0.14."""
    from supermemory.render import render_recall

    page = {"query": "q", "relevant_from": 0.28,
            "results": [_hit("M1", "answer", 0.9, 5.0), _hit("M2", "b", 0.13, 2.0), _hit("M3", "c", 0.2795, 1.9),
                        _hit("M4", "d", 0.14, 1.8)]}
    filler = [line for line in render_recall(page).splitlines()[2:]]
    assert [line.split("]")[0][3:] for line in filler] == ["M3 note", "M4 note", "M2 note"]
    assert filler[0].endswith("(relevance 0.27)")


def test_no_separator_without_a_relevant_hit_a_line_or_with_explain():
    from supermemory.render import render_recall

    low = [_hit("M1", "a", 0.1, 1.0), _hit("M2", "b", 0.05, 0.5)]
    mixed = [_hit("M1", "a", 0.9, 1.0), _hit("M2", "b", 0.05, 0.5)]
    assert "Less related" not in render_recall({"query": "q", "relevant_from": 0.28, "results": low})
    assert "Less related" not in render_recall({"query": "q", "results": mixed})      # a listing: no line given
    assert "Less related" not in render_recall({"query": "q", "relevant_from": 0.28, "results": mixed}, explain=True)


def test_a_ranked_page_says_where_relevant_hits_start(store):
    from supermemory.retrieval.ranking import shipped_threshold

    store.remember("redis is the cache")
    assert store.recall("redis cache", touch=False)["relevant_from"] == shipped_threshold("auto")
