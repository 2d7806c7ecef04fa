"""A fresh user's run of the CLI and the Python API: the data dir they share, backfill's plan against its run, data safety."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import FakeEmbedder
from helpers.histories import ClaudeSession, claude_path
from supermemory.cli import main
from supermemory.config import data_dir, namespace_for_dir
from supermemory.core import MemoryStore


# --- the data dir: MemoryStore() opens what the CLI opens ----------------------------------------------

def test_memory_store_without_a_path_opens_the_clis_database_under_supermemory_home(tmp_path, monkeypatch, capsys):
    home = tmp_path / "elsewhere"
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["remember", "The staging proxy listens on port 8443", "--namespace", "global"]) == 0
    written = capsys.readouterr().out.strip()
    with MemoryStore(embedder=FakeEmbedder()) as store:
        assert Path(store.path) == home / "memory.db" == data_dir() / "memory.db"
        assert store.get(written, namespace="*")["memories"][0]["body"] == "The staging proxy listens on port 8443"
    assert not (work / "memory.db").exists()          # never a database in the working directory
    assert os.stat(work).st_mode & 0o077               # and the working directory's mode is left alone


def test_memory_store_without_a_path_reads_the_config_file_the_cli_reads(tmp_path, monkeypatch):
    home = tmp_path / "elsewhere"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"recall": {"default_limit": 3}}))
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    with MemoryStore(embedder=FakeEmbedder()) as store:
        assert store.config.get("recall.default_limit") == 3 and store.config.home == home


def test_a_project_folder_whose_parent_cannot_be_searched_for_git_is_its_own_project(tmp_path, monkeypatch):
    def denied(self, *args, **kwargs):   # stat() of <parent>/.git refused (a folder the user may not enter)
        if self.name == ".git":
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    real_stat = Path.stat
    project = tmp_path / "Shop App"
    project.mkdir()
    monkeypatch.setattr(Path, "stat", denied)
    assert namespace_for_dir(project) == "shop-app"


# --- backfill --dry-run says what the run does ---------------------------------------------------------

def _empty_rollout(codex: Path, lines: list[dict] | None = None) -> Path:
    folder = codex / "2025" / "03" / "04"
    folder.mkdir(parents=True)
    path = folder / "rollout-2025-03-04T10-00-00-11111111-2222-3333-4444-555555555555.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines or []))
    return path


@pytest.mark.parametrize("lines", [[], [{"timestamp": "2025-03-04T10:00:00Z", "type": "session_meta",
                                         "payload": {"id": "11111111-2222-3333-4444-555555555555",
                                                     "timestamp": "2025-03-04T10:00:00Z"}}]],
                         ids=["zero-bytes", "only-session-meta"])
def test_dry_run_of_an_empty_codex_rollout_without_cwd_says_what_the_run_does(store, tmp_path, lines):
    codex = tmp_path / "codex"
    _empty_rollout(codex, lines)
    claude = tmp_path / "claude"
    claude.mkdir()
    plan = store.backfill_plan(claude=str(claude), codex=str(codex))
    run = store.backfill(claude=str(claude), codex=str(codex))
    keys = ("sessions", "captured", "updated", "unchanged", "skipped")
    assert {k: plan[k] for k in keys} == {k: run[k] for k in keys} == {
        "sessions": 1, "captured": 0, "updated": 0, "unchanged": 0, "skipped": 1}
    assert [(p["namespace"], p["reasons"]) for p in plan["projects"]] == [
        (p["namespace"], p["reasons"]) for p in run["projects"]]
    assert all(p["namespace"] != "2025" for p in run["projects"])   # a year folder is no project
    again = store.backfill_plan(claude=str(claude), codex=str(codex))
    assert again["unchanged"] == 1 and store.backfill(claude=str(claude), codex=str(codex))["unchanged"] == 1


def test_dry_run_of_a_session_with_a_request_deep_in_a_large_file_still_counts_it(store, tmp_path):
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    notes = tmp_path / "notes"
    notes.mkdir()
    session = ClaudeSession("late", str(notes), "2026-10-01")
    for n in range(300):
        session.say(f"Thinking step {n} " + "about nothing in particular " * 40)
    session.user("Rename the export script to dump.py")
    session.write(claude_path(claude, str(notes), "late"))
    plan = store.backfill_plan(claude=str(claude), codex=str(codex))
    assert plan["captured"] == 1 and plan["skipped"] == 0
    assert store.backfill(claude=str(claude), codex=str(codex))["captured"] == 1


def test_dry_run_with_capture_switched_off_is_refused_like_the_run(tmp_path, db_path):
    from supermemory.config import Config
    from supermemory.errors import InvalidInputError

    config = Config(home=tmp_path / "smhome", settings={"capture": {"enabled": False}})
    with MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj") as store:
        for call in (store.backfill, store.backfill_plan):
            with pytest.raises(InvalidInputError, match="capture is switched off"):
                call(claude=str(tmp_path), codex=str(tmp_path))


# --- a data folder this process cannot write: reads work, writes say why ----------------------------------

@pytest.fixture
def deny_writes(monkeypatch):
    """os.access answers 'not writable' for the data folder and what is in it (as chmod -R a-w does for a
    normal user; root ignores the mode bits, so the suite patches the check instead)."""
    real_access = os.access

    def deny(folder: Path) -> None:
        def access(path, mode, **kw):
            if mode & os.W_OK and str(path).startswith(str(folder)):
                return False
            return real_access(path, mode, **kw)
        monkeypatch.setattr(os, "access", access)
    return deny


def _seeded_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "smhome"
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    monkeypatch.chdir(tmp_path)
    for text in ("The staging proxy listens on port 8443", "Release notes live in docs/CHANGES.md"):
        assert main(["remember", text, "--namespace", "global"]) == 0
    return home


def test_a_read_only_data_folder_still_answers_list_get_recall_and_history(tmp_path, monkeypatch, capsys,
                                                                            deny_writes):
    home = _seeded_home(tmp_path, monkeypatch)
    capsys.readouterr()
    before = sorted(p.name for p in home.iterdir())
    deny_writes(home)
    assert main(["list"]) == 0 and "staging proxy" in capsys.readouterr().out
    assert main(["get", "M1"]) == 0 and "port 8443" in capsys.readouterr().out
    assert main(["history", "M2"]) == 0 and "CHANGES.md" in capsys.readouterr().out
    assert main(["recall", "which port does the staging proxy listen on", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["results"][0]["id"] == "M1" and out.err == ""   # no write warning: nothing to say
    for args in (["remember", "A third memory"], ["forget", "M1"], ["update", "M1", "--content", "port 9443"]):
        assert main(args) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: nothing was written: the database {home / 'memory.db'} is read-only"), err
        assert f"chmod u+w {home}" in err
    assert sorted(p.name for p in home.iterdir()) == before    # no -shm / -wal left behind
    monkeypatch.undo()
    with MemoryStore(home / "memory.db") as store:
        assert store.stats(namespace="*")["memories"] == 2
        assert store.get("M1", namespace="*")["memories"][0]["recall_count"] == 0


def test_a_read_only_open_reads_the_writes_still_waiting_in_the_wal(tmp_path, monkeypatch, deny_writes):
    from supermemory.errors import StorageError
    from supermemory.store import db as dbm

    home = _seeded_home(tmp_path, monkeypatch)
    db = home / "memory.db"
    holder = dbm.connect(str(db), dbm.choose_driver(None))     # another process with the file open
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("SELECT count(*) FROM memories").fetchone()
    try:
        with MemoryStore(db) as writer:
            late = writer.remember("Written last, still only in the WAL", namespace="global")["id"]
        assert os.path.getsize(f"{db}-wal") > 0
        deny_writes(home)
        with MemoryStore(db, namespace="global") as reader:
            assert reader.context.readonly
            assert reader.get(late)["memories"][0]["body"] == "Written last, still only in the WAL"
            with pytest.raises(StorageError, match="nothing was written: the database .* is read-only"):
                reader.remember("refused")
    finally:
        holder.close()


def test_a_write_that_waits_out_another_writers_lock_says_so_and_names_the_file(tmp_path, monkeypatch, capsys):
    from supermemory.errors import StorageError
    from supermemory.store import db as dbm

    home = _seeded_home(tmp_path, monkeypatch)
    holder = dbm.connect(str(home / "memory.db"), dbm.choose_driver(None))
    holder.execute("BEGIN EXCLUSIVE")      # another process in the middle of a long write
    try:
        with MemoryStore(home / "memory.db") as store:
            store.conn.execute("PRAGMA busy_timeout = 20")   # not 30 s in a test
            assert store.list(namespace="*")["total"] == 2   # reads are not blocked (WAL)
            with pytest.raises(StorageError) as raised:
                store.remember("Written while another process holds the lock", namespace="global")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(raised.value)
    assert message.startswith(f"nothing was written: the database {home / 'memory.db'} is locked by another "
                              "process"), message
    assert "try again" in message


# --- import into a store that already holds memories: nothing lost, nothing doubled ------------------------

def _bodies(store) -> list[str]:
    return sorted(item["summary"] for item in store.list(namespace="*", limit=100)["items"])


def test_import_into_a_store_whose_ids_hold_other_memories_keeps_both_under_new_ids(tmp_path):
    from supermemory.config import Config

    def opened(name):
        return MemoryStore(tmp_path / name / "memory.db", config=Config(home=tmp_path / name),
                           embedder=FakeEmbedder(), namespace="global")

    with opened("laptop") as laptop:
        first = laptop.remember("The API gateway runs on port 8080.")["id"]
        head = laptop.update(first, content="The API gateway runs on port 9090.")["id"]
        other = laptop.remember("Deploys happen on Tuesdays.")["id"]
        laptop.link(other, head, relation="related")
        laptop.export(tmp_path / "dump.jsonl")
    with opened("desktop") as desktop:        # used on its own first: its M1, M2 are other memories
        desktop.remember("The desktop keeps its builds in /srv/builds.")
        desktop.remember("Use the staging VPN before deploying.")
        result = desktop.import_file(tmp_path / "dump.jsonl")
        assert result["imported"] == 2 and result["skipped"] == 0
        assert _bodies(desktop) == ["Deploys happen on Tuesdays.", "The API gateway runs on port 9090.",
                                    "The desktop keeps its builds in /srv/builds.",
                                    "Use the staging VPN before deploying."]
        renumbered = result["renumbered"]      # only the chain whose ids were taken; M3 was free and kept
        assert set(renumbered) == {first, head} and set(renumbered.values()).isdisjoint({"M1", "M2", other})
        assert desktop.get(other)["memories"][0]["body"] == "Deploys happen on Tuesdays."
        history = desktop.history(renumbered[head])
        assert [v["body"] for v in history["versions"]] == ["The API gateway runs on port 8080.",
                                                            "The API gateway runs on port 9090."]
        graph = desktop.graph(namespace="*")
        assert {(e["src"], e["dst"], e["relation"]) for e in graph["edges"]} == {
            (other, renumbered[head], "related")}
        again = desktop.import_file(tmp_path / "dump.jsonl")          # a second import adds nothing
        assert again["imported"] == 0 and again["skipped"] == 2
        assert len(_bodies(desktop)) == 4


def test_a_second_export_after_an_update_continues_the_imported_memory_instead_of_doubling_it(tmp_path):
    from supermemory.config import Config

    def opened(name):
        return MemoryStore(tmp_path / name / "memory.db", config=Config(home=tmp_path / name),
                           embedder=FakeEmbedder(), namespace="global")

    with opened("laptop") as laptop:
        first = laptop.remember("The nightly backup runs at 02:00.")["id"]
        laptop.export(tmp_path / "monday.jsonl")
        head = laptop.update(first, content="The nightly backup runs at 03:30.")["id"]
        laptop.export(tmp_path / "friday.jsonl")
    with opened("desktop") as desktop:
        assert desktop.import_file(tmp_path / "monday.jsonl")["imported"] == 1
        result = desktop.import_file(tmp_path / "friday.jsonl")
        assert result["imported"] == 1 and result["renumbered"] == {}
        assert _bodies(desktop) == ["The nightly backup runs at 03:30."]
        assert [v["id"] for v in desktop.history(head)["versions"]] == [first, head]
        hits = desktop.recall("when does the nightly backup run", gates=False)["results"]
        assert [h["id"] for h in hits] == [head]          # the old version left the search index


def test_a_folder_where_the_database_file_belongs_is_named_and_left_as_it_was(tmp_path, monkeypatch, capsys):
    home = tmp_path / "smhome"
    (home / "memory.db").mkdir(parents=True)
    (home / "memory.db").chmod(0o755)
    monkeypatch.setenv("SUPERMEMORY_HOME", str(home))
    assert main(["list"]) == 1
    assert capsys.readouterr().err == (f"error: {home / 'memory.db'} is a folder, not a database file; move it "
                                       "aside and run again\n")
    assert (home / "memory.db").stat().st_mode & 0o777 == 0o755
