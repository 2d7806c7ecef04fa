"""The shared renderers: a memory line never loses a character where its title was cut."""
from __future__ import annotations

from supermemory.render import memory_line
from supermemory.text import summarize


def test_a_cut_title_is_followed_by_the_rest_of_the_text_without_losing_a_character():
    text = "SQLite WAL mode with BEGIN IMMEDIATE keeps multi-row transactions safe across processes"
    title = summarize(text, max_chars=48)
    assert title.endswith("…")
    line = memory_line({"id": "M1", "kind": "fact", "title": title, "summary": text})
    shown_title, shown_rest = line.split("] ", 1)[1].split(" — ", 1)
    assert shown_rest.startswith("…")
    assert shown_title.rstrip("…") + shown_rest.lstrip("…") == text


def test_a_whole_title_that_repeats_the_text_start_is_not_shown_twice():
    line = memory_line({"id": "M2", "kind": "decision", "title": "Use uv",
                        "summary": "Use uv. It resolves faster than pip."})
    assert line == "- [M2 decision] Use uv — It resolves faster than pip."


def test_a_title_equal_to_the_text_shows_no_dangling_separator():
    line = memory_line({"id": "M3", "kind": "task", "status": "open", "title": "Ship the UI", "summary": "Ship the UI"})
    assert line == "- [M3 task/open] Ship the UI"


def test_a_title_that_does_not_start_the_text_keeps_the_whole_text():
    line = memory_line({"id": "M4", "kind": "fact", "title": "Ports", "summary": "The API listens on 8080."})
    assert line == "- [M4 fact] Ports — The API listens on 8080."


def test_progress_off_a_terminal_prints_a_line_per_tenth_with_rate_and_eta():
    import io

    from supermemory.render import progress_printer

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
