"""Fresh-user run fu34: a file of another shape read as bench cases, and what a recall says of bad UTF-8."""
import json
import logging
import re
import subprocess
import sys

import pytest

from supermemory.errors import InvalidInputError


def test_a_cases_file_whose_lines_have_no_type_is_refused_by_name(tmp_path):
    """`bench CASES.jsonl` over lines without "type" printed "0 queries over 0 docs" and exited 0 (fu34 D5)."""
    from supermemory.bench.runner import load_cases_file

    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"type": "memory", "id": "m1", "text": "a"}) + "\n\n"
                    + json.dumps({"query": "how long are product pages cached", "expected": ["m1"]}) + "\n"
                    + json.dumps({"query": "sourdough recipe", "expected": []}) + "\n")
    with pytest.raises(InvalidInputError, match=r'2 line\(s\) have no "type" of memory, query, include, meta '
                                                r'\(JSON line 2 first\)'):
        load_cases_file(path)


def test_the_bench_command_exits_non_zero_on_such_a_file(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"query": "sourdough recipe", "expected": []}) + "\n")
    out = subprocess.run([sys.executable, "-m", "supermemory", "bench", str(path)], capture_output=True, text=True,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SUPERMEMORY_HOME": str(tmp_path / "sm")},
                         timeout=120)
    assert out.returncode != 0 and 'have no "type"' in out.stderr and "0 queries" not in out.stdout


def test_a_query_with_bad_utf8_is_said_to_be_replaced_not_stored(caplog):
    """A recall stores nothing, yet its warning said the bad characters were "stored as U+FFFD" (fu34 D7)."""
    from supermemory.store.records import clean_text

    with caplog.at_level(logging.WARNING):
        assert clean_text("redis \ud83d cache", "query", max_chars=100) == "redis \ufffd cache"
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "replaced by U+FFFD" in said and "stored" not in said


def test_an_import_keeps_its_work_when_another_process_takes_one_of_its_ids_meanwhile(tmp_path):
    """A `remember` from the CLI while an import embedded took M1, and the import failed on the UNIQUE id with all its
    work rolled back (fresh-user run fu35 D1); now that chain comes in under a new id, as when M1 was taken before."""
    from supermemory.config import Config
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    def opened(name):
        return MemoryStore(tmp_path / name / "memory.db", config=Config(home=tmp_path / name),
                           embedder=FakeEmbedder(), namespace="global")

    with opened("laptop") as laptop:
        first = laptop.remember("The API gateway runs on port 8080.")["id"]
        laptop.remember("Deploys happen on Tuesdays.")
        laptop.export(tmp_path / "dump.jsonl")
    with opened("desktop") as desktop, opened("desktop") as other_process:
        embed = desktop.embedder.embed_multi

        def embed_while_another_writes(texts, progress=None):
            other_process.remember("Written by the CLI while the import ran.")   # takes M1
            return embed(texts, progress=progress)

        desktop.embedder.embed_multi = embed_while_another_writes
        result = desktop.import_file(tmp_path / "dump.jsonl")
        assert result["imported"] == 2 and list(result["renumbered"]) == [first] and result["taken"] == {first: "other"}
        bodies = sorted(item["summary"] for item in desktop.list(namespace="*", limit=10)["items"])
        assert bodies == ["Deploys happen on Tuesdays.", "The API gateway runs on port 8080.",
                          "Written by the CLI while the import ran."]
        assert desktop.get(first)["memories"][0]["body"] == "Written by the CLI while the import ran."


def test_sqlite_keeps_its_temporary_files_in_memory_not_in_var_tmp(tmp_path):
    """`health` made a SQLite temporary file in /var/tmp, outside the data dir (fresh-user run fu35 D6)."""
    from supermemory.config import Config
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    with MemoryStore(tmp_path / "memory.db", config=Config(home=tmp_path), embedder=FakeEmbedder()) as store:
        assert store.context.q("PRAGMA temp_store")[0][0] == 2   # MEMORY


def test_a_private_tag_never_closed_in_a_transcript_is_said_where_the_session_is_kept(tmp_path):
    """An unclosed `<private>` in one message left the rest of the session out without a word, in backfill and the
    SessionEnd hook alike (fresh-user run fu35 D2): still left out (fail closed), now said in the session memory,
    the capture's answer and the backfill summary."""
    from supermemory.capture import PRIVATE_LEFT_OPEN
    from supermemory.config import Config
    from supermemory.core import MemoryStore
    from supermemory.render_intake import render_backfill
    from tests.conftest import FakeEmbedder
    from tests.helpers.histories import ClaudeSession

    path = tmp_path / "s1.jsonl"
    s = ClaudeSession("s1", str(tmp_path), "2026-12-01")
    s.user("Quick note <private>the vendor contract number is 4471")
    s.user("Now migrate the sessions table to Postgres 16 HIDDENREQUEST")
    s.write(path)
    with MemoryStore(tmp_path / "memory.db", config=Config(home=tmp_path), embedder=FakeEmbedder()) as store:
        result = store.capture_session(str(path), session_id="s1", platform="claude-code", cwd=str(tmp_path))
        assert result["private_open"] is True
        body = store.get(result["id"])["memories"][0]["body"]
        assert PRIVATE_LEFT_OPEN in body and "4471" not in body and "HIDDENREQUEST" not in body
        s.user("done </private> now VISIBLE")
        s.write(path)
        again = store.capture_session(str(path), session_id="s1", platform="claude-code", cwd=str(tmp_path))
        body = store.get(again["id"])["memories"][0]["body"]
        assert "private_open" not in again and PRIVATE_LEFT_OPEN not in body and "VISIBLE" in body
    summary = render_backfill({"projects": [], "sessions": 1, "files": 1, "bytes": 100, "captured": 1, "updated": 0,
                               "unchanged": 0, "skipped": 0, "seconds": 0.1, "lines": {"private_open": 1}})
    assert "1 sessions read only up to a <private> tag never closed" in summary


def test_an_export_round_trip_keeps_times_to_the_microsecond(tmp_path):
    """Export wrote whole seconds, so 1515 of 1517 rows came back with other times and a busy store's writes of one
    second lost their order (fresh-user run fu35 D3)."""
    from supermemory.config import Config
    from supermemory.core import MemoryStore
    from tests.conftest import FakeEmbedder

    def opened(name):
        return MemoryStore(tmp_path / name / "memory.db", config=Config(home=tmp_path / name),
                           embedder=FakeEmbedder(), namespace="global")

    with opened("a") as a:
        ids = [a.remember(f"Fact number {i} about the deploy pipeline.")["id"] for i in range(3)]
        a.link(ids[0], ids[1], relation="related")
        before = {i: a.context.fetch(int(i[1:])) for i in ids}
        a.export(tmp_path / "dump.jsonl")
    assert re.search(r'"created_at": "[0-9-]+T[0-9:]+\.[0-9]{6}Z"', (tmp_path / "dump.jsonl").read_text())
    with opened("b") as b:
        assert b.import_file(tmp_path / "dump.jsonl")["imported"] == 3
        for memory_id, rec in before.items():
            got = b.context.fetch(int(memory_id[1:]))
            for key in ("created_at", "updated_at", "valid_from"):
                assert abs(got[key] - rec[key]) < 2e-6, key
        link_at = b.context.q("SELECT created_at FROM links")[0][0]
    with opened("a") as a:
        assert abs(a.context.q("SELECT created_at FROM links")[0][0] - link_at) < 2e-6
