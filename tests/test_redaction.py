"""Behaviour of supermemory.store.redaction: secrets already in a store leave every stored copy.

The store is filled with redaction switched off (``supermemory.redact.redact`` patched to
return its input), as a store written before a rule existed would be; the fake secrets are
built from a fixed seed and split prefixes so this file holds nothing a scanner would flag.
"""
from __future__ import annotations

import contextlib
import json
import random

import numpy as np
import pytest

from helpers.common import check_consistency
from supermemory import redact as redact_module
from supermemory.store import redaction as reredact
from supermemory.core import MemoryStore
from supermemory.store.records import embed_text as _embed_text
from supermemory.errors import EmbeddingUnavailableError
from supermemory.redact import rules_fingerprint

from conftest import FakeEmbedder

_rng = random.Random(7)
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def fake(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


HF_BODY = fake(30, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") + "aQzR"
HF = "hf" + "_" + HF_BODY
SENDGRID = "SG" + "." + fake(22) + "." + fake(43)
DO_BODY = fake(64, "0123456789abcdef")
DIGITALOCEAN = "dop" + "_v1_" + DO_BODY
SECRETS = [HF_BODY, SENDGRID, DO_BODY]


@contextlib.contextmanager
def unredacted():
    """While active, nothing is redacted: writes store secrets as a store from before the rules did."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(redact_module, "redact", lambda text, **kw: (text, {}))
        yield


def _plant(store: MemoryStore) -> dict:
    """Secrets in a body, a title, an old version, a deleted row, the search log and capture state."""
    ids = {}
    ids["live"] = store.remember(f"Use {HF} for the model hub. The mail relay key is {SENDGRID}.",
                                 title="hub access")["id"]
    ids["titled"] = store.remember("Droplet provisioning runs from CI nightly.", title=f"doctl uses {DIGITALOCEAN}",
                                   tags=["droplets", SENDGRID])["id"]
    old = store.remember(f"Old relay key {SENDGRID} (rotated).", title="relay")["id"]
    ids["old"], ids["head"] = old, store.update(old, content="The relay key was rotated; see the vault.")["id"]
    ids["deleted"] = store.remember(f"scratch: {HF}", title="scratch")["id"]
    store.forget(ids["deleted"])
    store.recall(f"which key is {SENDGRID}")
    digest = {"requests": [f"set HF to {HF}"], "files": [], "commands": [f"doctl auth init -t {DIGITALOCEAN}"]}
    with store.context.txn():
        store.conn.execute("INSERT INTO capture_state(session_key, path, offset, digest, memory_id, updated_at) "
                           "VALUES ('claude-code:s1', '/tmp/t.jsonl', 10, ?, NULL, 0)", (json.dumps(digest),))
    return ids


def _all_text(store: MemoryStore) -> str:
    """Every value of every table (FTS shadow tables included), as one lower-cased string."""
    parts = []
    tables = [r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table in ("vec_mem",) or table.startswith("vec_mem_"):
            continue
        for row in store.conn.execute(f'SELECT * FROM "{table}"'):
            for value in row:
                if isinstance(value, bytes):
                    parts.append(value.decode("latin-1"))
                elif value is not None:
                    parts.append(str(value))
    return "\n".join(parts).lower()


def _file_bytes(store: MemoryStore) -> bytes:
    data = b""
    for suffix in ("", "-wal"):
        try:
            with open(store.path + suffix, "rb") as fh:
                data += fh.read()
        except FileNotFoundError:
            pass
    return data.lower()


def test_a_planted_store_holds_the_secrets_everywhere_before_the_pass(store):
    with unredacted():
        _plant(store)
    text = _all_text(store)
    assert all(s.lower() in text for s in SECRETS)
    assert HF.lower() in " ".join(r[0] for r in store.conn.execute("SELECT tokens FROM fts"))


def test_redact_stored_removes_every_stored_copy(store):
    with unredacted():
        ids = _plant(store)
    out = store.redact_stored()
    assert out["dry_run"] is False
    assert out["memories"] == 4  # live, titled, the old version and the deleted row
    assert out["search_log"] == 1 and out["capture_state"] == 1
    assert {"huggingface_token", "sendgrid_key", "digitalocean_token"} <= set(out["types"])
    assert set(out["ids"]) == {ids["live"], ids["titled"], ids["old"], ids["deleted"]}
    text = _all_text(store)
    assert [s for s in SECRETS if s.lower() in text] == []
    assert "[redacted:huggingface_token]" in text
    digest = json.loads(store.conn.execute("SELECT digest FROM capture_state").fetchone()[0])
    assert digest["commands"] == ["doctl auth init -t [REDACTED:digitalocean_token]"]
    assert store.conn.execute("SELECT query FROM search_log").fetchone()[0] == "which key is [REDACTED:sendgrid_key]"


def test_the_secret_bytes_leave_the_database_file(db_path, config):
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder(), namespace="proj")
    with unredacted():
        _plant(s)
    s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    assert HF_BODY.lower().encode() in _file_bytes(s)
    s.redact_stored()
    s.close()
    with open(db_path, "rb") as fh:
        raw = fh.read()
    assert not (db_path.parent / (db_path.name + "-wal")).exists() or (
        db_path.parent / (db_path.name + "-wal")).stat().st_size == 0
    for secret in SECRETS:
        assert secret.encode() not in raw and secret.lower().encode() not in raw, secret
    check_consistency(db_path)


def test_history_records_the_redaction_and_a_second_pass_changes_nothing(store):
    with unredacted():
        ids = _plant(store)
    first = store.redact_stored()
    assert first["rows"] > 0
    history = store.history(ids["head"])
    events = {e["id"]: e for e in history["redactions"]}
    assert ids["old"] in events and ids["head"] not in events
    assert "body" in events[ids["old"]]["fields"] and events[ids["old"]]["types"] == {"sendgrid_key": 1}
    assert store.history(ids["titled"])["redactions"][0]["fields"] == ["title", "tags"]
    again = store.redact_stored()
    assert again["rows"] == 0 and again["memories"] == 0 and again["types"] == {}
    assert len(store.history(ids["head"])["redactions"]) == 1


def test_a_dry_run_counts_and_writes_nothing(store):
    with unredacted():
        _plant(store)
    before = _all_text(store)
    dry = store.redact_stored(dry_run=True)
    assert dry["dry_run"] is True and dry["memories"] == 4 and dry["search_log"] == 1 and dry["capture_state"] == 1
    assert _all_text(store) == before
    assert store.redact_stored()["memories"] == dry["memories"]


def test_redacted_memories_stay_findable_with_vectors_of_the_new_text(store, db_path):
    with unredacted():
        ids = _plant(store)
    out = store.redact_stored()
    assert out["vectors_reembedded"] > 0 and out["vectors_dropped"] == 0
    rec = store.get(ids["live"])["memories"][0]
    assert "[REDACTED:sendgrid_key]" in rec["body"]
    rows = store.conn.execute("SELECT c.text, v.embedding FROM chunks c JOIN vectors v ON v.chunk_id = c.id "
                              "WHERE c.memory_id = ?", (int(ids["live"][1:]),)).fetchall()
    expected = FakeEmbedder().embed_multi([_embed_text(rec["title"], t) for t, _ in rows])
    assert np.allclose(np.vstack([np.frombuffer(b, dtype="<f4") for _, b in rows]), expected)
    hits = store.recall("model hub mail relay")["results"]
    assert ids["live"] in [h["id"] for h in hits]
    check_consistency(db_path)


def test_without_an_embedder_the_redacted_chunks_lose_their_vectors(store, monkeypatch):
    with unredacted():
        _plant(store)

    def unavailable(texts, progress=None):
        raise EmbeddingUnavailableError("model missing")

    monkeypatch.setattr(store.context.embedder, "embed_multi", unavailable)
    out = store.redact_stored()
    assert out["vectors_reembedded"] == 0 and out["vectors_dropped"] > 0
    assert store.health()["vectors_pending"] > 0
    assert [s for s in SECRETS if s.lower() in _all_text(store)] == []


def test_maintenance_re_redacts_once_after_the_rules_changed(store):
    assert store.maintenance()["redacted"] == 0  # a new store is stamped with the current rules
    with unredacted():
        _plant(store)
    assert store.maintenance()["redacted"] == 0  # the stamp says nothing changed in the rules
    with store.context.txn():
        store.conn.execute("UPDATE meta SET value = 'older-rules' WHERE key = ?", (reredact.STAMP_KEY,))
    assert store.maintenance()["redacted"] == 6  # 4 memory rows, the search log row, the capture state
    assert store.conn.execute("SELECT value FROM meta WHERE key = ?", (reredact.STAMP_KEY,)).fetchone()[0] == \
        rules_fingerprint()
    assert store.maintenance()["redacted"] == 0
    assert [s for s in SECRETS if s.lower() in _all_text(store)] == []


def test_maintenance_redact_true_forces_a_pass(store):
    with unredacted():
        _plant(store)
    assert store.maintenance(redact=True)["redacted"] == 6


def test_with_redaction_switched_off_maintenance_leaves_text_alone_and_drops_the_stamp(store):
    store.config.settings.setdefault("store", {})["redact_secrets"] = False
    store.remember(f"key {HF}", title="hub")
    assert store.maintenance()["redacted"] == 0
    assert HF in store.conn.execute("SELECT body FROM memories").fetchone()[0]
    assert reredact.is_stale(store.context)
    store.config.settings["store"]["redact_secrets"] = True
    assert store.maintenance()["redacted"] == 1
    assert HF not in store.conn.execute("SELECT body FROM memories").fetchone()[0]


def test_a_title_cut_from_the_body_is_cut_again_from_the_redacted_body(store):
    body = "Relay " + SENDGRID + " is the key for outgoing mail and it lives in the vault"
    with unredacted():
        mid = store.remember(body)["id"]
    title = store.get(mid)["memories"][0]["title"]
    assert SENDGRID[:20] in title  # the automatic title holds part of the key
    store.redact_stored()
    rec = store.get(mid)["memories"][0]
    assert SENDGRID[:20] not in rec["title"] and rec["title"].startswith("Relay [REDACTED:sendgrid_key]")


def test_a_secret_split_across_two_chunks_is_removed_from_both(store):
    store.config.settings.setdefault("store", {}).update(chunk_max_tokens=20, chunk_overlap_tokens=0)
    body = " ".join(["word"] * 18) + " " + HF + " " + " ".join(["tail"] * 30)
    with unredacted():
        mid = store.remember(body, title="split")["id"]
    store.redact_stored()
    chunks = [r[0] for r in store.conn.execute("SELECT text FROM chunks WHERE memory_id = ?", (int(mid[1:]),))]
    assert chunks and not any(HF_BODY[:8] in c or HF_BODY[-8:] in c for c in chunks)


def test_a_secret_only_in_a_tag_is_redacted_in_the_row_and_the_search_index(store, db_path):
    with unredacted():
        mid = store.remember("Mail goes out through the relay.", tags=["mail", SENDGRID])["id"]
    out = store.redact_stored()
    assert out["ids"] == [mid] and out["types"] == {"sendgrid_key": 1}
    assert store.get(mid)["memories"][0]["tags"] == ["mail", "[REDACTED:sendgrid_key]"]
    assert SENDGRID.lower() not in _all_text(store)
    assert store.recall("mail relay", gates=False)["results"][0]["id"] == mid
    check_consistency(db_path)


def test_an_import_is_redacted_as_it_is_stored_and_leaves_maintenance_nothing_to_do(store, tmp_path):
    record = {"id": "M900", "namespace": "proj", "kind": "note", "title": "imported", "body": f"old key {HF}",
              "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
              "valid_from": "2024-01-01T00:00:00Z"}
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert store.import_file(path)["redacted"] == {"huggingface_token": 1}
    assert HF_BODY.lower() not in _all_text(store)
    assert not reredact.is_stale(store.context)
    assert store.maintenance(redact=True)["redacted"] == 0


def test_a_secret_only_in_the_callers_source_is_redacted_too(store):
    # A store written before remember redacted `source` holds a caller's secret there (key and value).
    with unredacted():
        mid = store.remember("The deploy hook posts to the relay.", title="deploy hook",
                             source={"url": f"https://relay.example/hook?key={SENDGRID}", HF: "token as a key"})["id"]
    assert SENDGRID in store.conn.execute("SELECT source FROM memories").fetchone()[0]
    dry = store.redact_stored(dry_run=True)
    assert dry["memories"] == 1 and dry["ids"] == [mid]
    out = store.redact_stored()
    assert out["ids"] == [mid] and out["types"].get("sendgrid_key") == 1
    source = json.loads(store.conn.execute("SELECT source FROM memories").fetchone()[0])
    assert SENDGRID not in json.dumps(source) and HF_BODY not in json.dumps(source)
    assert "[REDACTED:sendgrid_key]" in source["url"]
    assert store.history(mid)["redactions"][0]["fields"] == ["source"]
    assert store.redact_stored()["memories"] == 0
