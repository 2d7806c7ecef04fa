"""Fixes from the twenty-seventh session's fresh-user runs (fu34–fu38): each test names the defect it guards."""
from __future__ import annotations

import json

import pytest

from supermemory.redact import redact


def _session(*turns: str):
    """A Claude Code session of these turns, the user's first and then by turns, parsed into its digest."""
    from supermemory.transcripts import parse_claude

    def line(i: int, text: str) -> dict:
        role = "user" if i % 2 == 0 else "assistant"
        content = text if role == "user" else [{"type": "text", "text": text}]
        return {"type": role, "uuid": f"x{i}", "cwd": "/p", "sessionId": "s", "message": {"role": role, "content": content}}

    return parse_claude([line(i, text) for i, text in enumerate(turns)])


@pytest.mark.parametrize("text, secret", [
    ("log in with password hunter2Secret! on staging", "hunter2Secret!"),
    ("ssh root@10.0.0.5, pw Xk9mP2qL7", "Xk9mP2qL7"),
    ("why does key AKIAIOSFODNN7EXAMPLE with password hunter2Secret! fail", "hunter2Secret!"),
    ("the password hunter2Secret! works", "hunter2Secret!"),
    ("pw: Xk9mP2qL7", "Xk9mP2qL7"),
])
def test_a_password_right_after_its_word_is_redacted(text, secret):
    """fu36 D4: a password named with no "is" between word and value was stored verbatim."""
    out, counts = redact(text)
    assert secret not in out
    assert counts.get("password_in_prose") == 1


@pytest.mark.parametrize("text", [
    "password reset flow uses tokens",
    "with password protection on",
    "pw test --headed",
    "the pw config file playwright.config.ts",
    "set pw timeout 30000",
    "password v2 flow",
    "password argon2id hashing",
    "password policy requires 12 chars",
])
def test_words_after_a_password_word_that_are_no_password_stay(text):
    assert redact(text) == (text, {})


# --- fu36 D1: a change of what an older memory is about, and a retirement said in the progressive ------------------

AUDIO = "Audio goes through the kira crate; we dropped rodio because it had no tweening or clock-synced playback."
AUDIO_MOVED = "We switched the audio backend from kira to FMOD Studio because the sound designers need live mixing."
SESSIONS = "Sessions are stored in Redis with a 24-hour TTL."
CACHE_MOVED = "We moved the page cache from Redis to memcached."
MODS = "Scripting language for mods is Lua 5.4 via mlua, sandboxed with no io or os libraries."
MODS_MOVED = "Mods will be written in Rhai from now on; Lua support is being removed."


def replaces_subject(older: str, newer: str) -> bool:
    from supermemory.store.supersession import _named_subjects, _replaces_its_subject
    from supermemory.text.traits import change_values

    return _replaces_its_subject(f"title\n{older}", _named_subjects(newer, change_values(newer)))


def test_a_change_of_the_value_an_older_memory_is_about_replaces_its_subject():
    assert replaces_subject(AUDIO, AUDIO_MOVED)                # audio: the subject both say
    assert not replaces_subject(SESSIONS, CACHE_MOVED)         # Redis, but another use of it
    assert not replaces_subject("The audio team edits sound effects in Reaper.", AUDIO_MOVED)   # no kira
    # the value in full, and a subject the new text names before it in its sentence
    assert not replaces_subject("团队分工：周凯（调度、DataX、集群运维）。", "订单表的同步从 DataX 全量改为 Flink CDC。")
    assert not replaces_subject("When a dbt model's columns change, check Looker.",
                                "dbt upgraded to 1.8. Makefile switched from --models to --select.")
    # one shared Chinese character is no subject (的, 过); a shared word is
    assert not replaces_subject("RabbitMQ 的管理后台只能在内网访问。", "订单服务的消息队列从 RabbitMQ 换成了 Kafka。")
    assert replaces_subject("CI 用 Jenkins 跑单元测试和 lint。", "CI 已经从 Jenkins 迁移到 GitLab CI。")


@pytest.mark.parametrize("text, retired", [
    (MODS_MOVED, "Lua support"),
    ("Jest is being dropped: frontend tests move to Vitest starting this sprint.", "Jest"),
    ("The old dashboard is being phased out.", "The old dashboard"),
])
def test_a_retirement_under_way_is_a_change(text, retired):
    from supermemory.text.traits import change_values, revision_marker

    assert revision_marker(text) == "strong"
    assert (retired, "") in change_values(text)


@pytest.mark.model
def test_the_changes_fu36_stored_supersede_what_they_change_and_nothing_else(db_path, config, onnx_embedder):
    from supermemory.core import MemoryStore

    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="voxel") as s:
        audio = s.remember(AUDIO, kind="decision")["id"]
        mods = s.remember(MODS, kind="decision")["id"]
        s.remember(SESSIONS, kind="fact")
        assert s.remember(AUDIO_MOVED, kind="decision")["supersedes"] == [audio]
        assert s.remember(MODS_MOVED, kind="decision")["supersedes"] == [mods]
        assert s.remember(CACHE_MOVED, kind="decision")["supersedes"] == []


# --- fu36 D7: a summary is not cut at "e.g." -----------------------------------------------------------------------

@pytest.mark.parametrize("text, summary", [
    ("Commit messages follow Conventional Commits with the crate name as scope, e.g. feat(render): add SSAO. "
     "Squash before merging.",
     "Commit messages follow Conventional Commits with the crate name as scope, e.g. feat(render): add SSAO."),
    ("Prefer small crates, i.e. one job each. Keep them under 2k lines.", "Prefer small crates, i.e. one job each."),
    ("Tabs vs. spaces: four spaces. Never tabs.", "Tabs vs. spaces: four spaces."),
    ("E.g. the renderer crate owns the wgpu device. Nothing else does.",
     "E.g. the renderer crate owns the wgpu device."),
])
def test_a_summary_runs_past_an_abbreviation_with_a_full_stop(text, summary):
    from supermemory.text.summary import summarize

    assert summarize(text) == summary


def test_windows_are_not_split_at_an_abbreviation():
    from supermemory.text.chunking import sentence_windows

    assert sentence_windows("Use a small crate, e.g. thiserror, for errors. Keep it boring. Ship it.") == [
        "Use a small crate, e.g. thiserror, for errors. Keep it boring.", "Keep it boring. Ship it."]


# --- fu36 D9: a memory another one supersedes is no "current" fact, and stats counts such memories ----------------

def test_history_and_stats_say_a_memory_superseded_by_another_is_not_current(store):
    from supermemory.render import render_history, render_stats

    old = store.remember("Audio goes through the kira crate.", kind="decision")["id"]
    new = store.remember("Audio goes through FMOD Studio.", kind="decision")["id"]
    store.link(new, old, relation="supersedes")
    text = render_history(store.history(old))
    assert f"superseded by {new}" in text
    assert "(current" not in text        # the version is its chain's latest, the fact no longer current
    stats = store.stats()
    assert stats["superseded_by_links"] == 1
    assert "1 superseded by newer memories" in render_stats(stats)


# --- fu35 D4: the CLI's `remember` prints the id as soon as the memory is stored ---------------------------------

def test_cli_remember_prints_the_id_before_it_embeds_the_windows(monkeypatch, capsys, tmp_path):
    """A kill between the commit and the id's line left a stored memory the caller never heard of (fu35 D4): the id
    goes out first, the sentence windows (which a later fill-in also makes) after."""
    from supermemory import cli
    from supermemory.store import windows

    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    monkeypatch.chdir(tmp_path)
    seen = []
    real = windows.embed

    def embed(*args, **kwargs):
        seen.append(capsys.readouterr().out)
        return real(*args, **kwargs)

    monkeypatch.setattr(windows, "embed", embed)
    assert cli.main(["remember", "The chunk size is 32. Meshing runs on rayon. Saves use bincode."]) == 0
    assert seen and seen[0].strip() == "M1"


# --- fu36 D1, the third: a value set anew without naming the old one ----------------------------------------------

def test_a_value_set_anew_is_read_against_the_older_statement_of_its_subject():
    from supermemory.store.supersession import _sets_its_value, _values_set

    chunk = _values_set("The chunk size changed to 16x16x16 after the mobile port.")
    assert chunk == [(frozenset({"chunk", "size"}), "9x9x9")]
    assert _sets_its_value("t\nChunk size for the voxel world is 32x32x32; 16 caused too many draw calls.", chunk)
    assert not _sets_its_value("t\nChunk meshes are rebuilt on a worker thread whenever a block changes.", chunk)
    assert not _sets_its_value("t\nThe chunk size is documented in docs/world.md.", chunk)    # no value of its shape
    assert _values_set("Retention changed to 30 days.") == []       # one subject word says too little
    assert _values_set("The pool was changed to use pgbouncer.") == []   # no value


@pytest.mark.model
def test_the_chunk_size_set_anew_supersedes_the_older_chunk_size(db_path, config, onnx_embedder):
    from supermemory.core import MemoryStore

    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="voxel") as s:
        size = s.remember("Chunk size for the voxel world is 32x32x32; 16 caused too many draw calls and 64 made "
                          "remeshing stalls visible.", kind="decision")["id"]
        s.remember("Chunk meshes are rebuilt on a worker thread whenever a block changes.", kind="fact")
        assert s.remember("The chunk size changed to 16x16x16 after the mobile port.", kind="decision")["supersedes"] \
            == [size]


# --- fu34 D6: a turn that only sets a standing instruction is no unanswered request -------------------------------

@pytest.mark.parametrize("last, rule, open_end", [
    ("Also remember: the idempotency key header is called Idempotency-Key and keys expire after 24 hours.",
     "Remember: the idempotency key header is called Idempotency-Key and keys expire after 24 hours.", False),
    ("Remember that the staging DB is reset every Monday.", "Remember that the staging DB is reset every Monday.", False),
    ("From now on always run make lint before you commit.", "From now on always run make lint before you commit.", False),
    ("Fix the tests. From now on always run lint.", "From now on always run lint.", True),      # asks for now too
    ("remember to fix the flaky test", None, True),                                          # a request
    ("do you remember that bug?", None, True),
])
def test_a_turn_that_only_sets_a_rule_is_kept_as_one_and_leaves_nothing_unanswered(last, rule, open_end):
    d = _session("add the currency column to the PDF", "Added the column.", last)
    assert d.instructions == ([rule] if rule else [])
    assert d.open_ends == ([f"Unanswered request: {last}"] if open_end else [])


@pytest.mark.parametrize("text", [
    "Connecting to 5432 reaches the Postgres 9.6 cluster that is being retired.",
    "Talk to the billing service which is being phased out only through its adapter.",
])
def test_a_thing_described_as_being_retired_announces_no_change(text):
    """A relative clause describes ("the cluster that is being retired"): no change wording (the UI test's gotcha
    superseded the staging port fact with it)."""
    from supermemory.text.traits import revision_marker

    assert revision_marker(text) is None


# --- fu37 D6: credentials in prose a login pair or a project key names ------------------------------------------

@pytest.mark.parametrize("text, secret", [
    ("Log in to the Wageningen VPN with tomasz / Wag3n!ngen#77", "Wag3n!ngen#77"),
    ("Log in to the gateway with pi / Rasp!b3rry99 and check the logs.", "Rasp!b3rry99"),
    ("Credentials for the PPK2 laptop are admin and Pp2k#9911", "Pp2k#9911"),
    ("The Memfault project key is 3f9a1c7e55b04d2e8a61f0c9d7b2e4a1 (keep it out of the repo).",
     "3f9a1c7e55b04d2e8a61f0c9d7b2e4a1"),
])
def test_a_login_pair_after_a_phrase_and_a_project_key_are_redacted(text, secret):
    out, counts = redact(text)
    assert secret not in out and sum(counts.values()) == 1
    assert "tomasz" in out or "pi /" in out or "admin" in out or "project key" in out   # the user name stays


@pytest.mark.parametrize("text", [
    "log in to the dashboard with admin/settings",
    "Sign in to GitHub with SSO and 2FA",
    "Credentials are rotated and stored in vault2",
    "The Jira project key is SOIL.",
    "the project key is documented in the wiki",
])
def test_prose_near_a_login_word_or_a_project_key_stays(text):
    assert redact(text) == (text, {})


# --- fu37 D7: a standing instruction the user takes back in the same session is no longer kept -------------------

@pytest.mark.parametrize("rule, later, kept", [
    ("From now on always run `west build -t pristine` before flashing.",
     "Actually, scratch the pristine build rule, incremental builds are fine again.", False),
    ("From now on always run make lint before you commit.", "Forget that rule.", False),
    ("From now on always run make lint before you commit.", "You don't need to run make lint anymore.", False),
    ("以后每次提交前都要跑 lint。", "取消那条 lint 的规则。", False),
    ("From now on always run make lint before you commit.", "Ignore the failing test for now.", True),
    ("From now on always run make lint before you commit.", "Drop the users table and rebuild it.", True),
])
def test_a_rule_the_user_takes_back_is_dropped_from_the_standing_instructions(rule, later, kept):
    d = _session(rule, "OK.", later, "OK.")
    assert d.instructions == ([rule] if kept else [])


# --- fu37 D1–D3: a revert, "instead of" after a parenthesis, "stop using", "swapped … for", and a change that
# replaces two numbered words of a detailed memory ------------------------------------------------------------------

def test_the_wordings_fu37_missed_are_change_wording_with_their_values():
    from supermemory.text.revisions import retirement_scopes
    from supermemory.text.traits import change_values, revision_marker

    assert revision_marker("The LoRaWAN uplink interval is back to 15 minutes.") == "strong"
    assert revision_marker("We went back to the lake after lunch.") == "weak"      # everyday talk stays weak
    assert ("CBOR", "protobuf") in change_values("From now on we encode uplink payloads with protobuf (nanopb) "
                                                 "instead of CBOR.")
    assert revision_marker("Stop using k_malloc in drivers.") == "strong"
    assert change_values("Stop using k_malloc in drivers.") == [("k_malloc", "")]
    assert retirement_scopes("Stop using k_malloc in drivers.") == [frozenset({"driver"})]
    assert revision_marker("We swapped the DS18B20 temperature sensor for a TMP117.") == "strong"


@pytest.mark.model
def test_the_changes_fu37_stored_supersede_what_they_change(db_path, config, onnx_embedder):
    from supermemory.core import MemoryStore

    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="soil") as s:
        sensor = s.remember("The temperature sensor is a DS18B20 on the 1-Wire bus at pin P0.13.", kind="decision")["id"]
        cbor = s.remember("Sensor readings are encoded with CBOR before uplink, not JSON, to keep payloads under 51 "
                          "bytes at SF10.", kind="decision")["id"]
        s.remember("k_malloc failures are logged with LOG_ERR and a counter.", kind="fact")
        malloc = s.remember("Use k_malloc in drivers.", kind="decision")["id"]
        assert s.remember("The DS18B20 temperature sensor was replaced by a TMP117 on I2C.",
                          kind="decision")["supersedes"] == [sensor]
        assert s.remember("From now on we encode uplink payloads with protobuf (nanopb) instead of CBOR.",
                          kind="decision")["supersedes"] == [cbor]
        assert s.remember("Stop using k_malloc in drivers.", kind="decision")["supersedes"] == [malloc]
        interval = s.remember("We switched the LoRaWAN uplink interval from 15 minutes to 30 minutes to save battery.",
                              kind="decision")["id"]
        assert s.remember("The LoRaWAN uplink interval is back to 15 minutes; the 30 minute interval missed "
                          "irrigation events.", kind="decision")["supersedes"] == [interval]




# --- fu37 D9: the session just compacted is shown whole in the briefing, with what it was doing --------------------

def test_the_compacted_sessions_line_holds_its_open_ends_and_requests_whole():
    from supermemory.render_briefing import _briefing_line
    from supermemory.transcripts.digest import headline, render_digest

    d = _session("From now on always run `west build -t pristine` before flashing a board, incremental builds have "
                 "bitten us twice.", "Noted.",
                 "Can you fix the SX1262 reset timing in drivers/sx1262/sx1262.c? The join fails after a cold boot.",
                 "Fixed the delay.",
                 "TODO: add the watchdog feed to the join retry loop, and we still need to test the new delay on rev C "
                 "hardware.")
    _, body = render_digest(d)
    summary = headline(body, standing_first=True, requests=True)
    assert "Requests: Can you fix the SX1262 reset timing" in summary
    assert summary.count("west build -t pristine") == 1           # a rule is not said again among the requests
    item = {"id": "M9", "kind": "session", "title": "Session 2026-12-05", "summary": summary, "compacted": True}
    shown = _briefing_line("sessions", item)
    assert "test the new delay on rev C hardware" in shown and "SX1262 reset timing" in shown
    assert len(_briefing_line("sessions", {**item, "compacted": False})) < len(shown)   # the others stay short


def test_doing_a_thing_now_instead_of_later_defers_nothing():
    """fu37 D8: "Let's do the watchdog now instead of tomorrow." left "Deferred: the watchdog now instead of"."""
    from supermemory.transcripts.open_ends import _named_deferral

    assert _named_deferral("Let's do the watchdog now instead of tomorrow.") is None
    assert _named_deferral("let's do the CSV export tomorrow") == "the CSV export"
    assert _named_deferral("leave the data checks for next week") == "the data checks"


def test_history_of_a_memory_superseded_twice_names_the_one_that_holds_the_fact_now(store):
    """fu37 D11: `history M1` named M33, itself superseded by M60, and not M60."""
    from supermemory.render import render_history

    first = store.remember("Firmware builds use Zephyr 3.5.", kind="decision")["id"]
    second = store.remember("Firmware builds use Zephyr 3.7 LTS.", kind="decision")["id"]
    third = store.remember("Firmware builds use Zephyr 4.0.", kind="decision")["id"]
    store.link(second, first, relation="supersedes")     # idempotent where the rule linked them already
    store.link(third, second, relation="supersedes")
    history = store.history(first)
    assert history["superseded_by"] == second and history["now_held_by"] == third
    assert f"superseded by {second} (itself superseded: now {third})" in render_history(history)
    assert "now_held_by" not in store.history(second)


def test_a_briefing_full_of_decisions_still_shows_the_first_preference_and_gotcha(store):
    """fu37 D5: with many decisions the 900-token briefing showed none of the gotchas or preferences."""
    from supermemory.render_briefing import briefing_view

    for i in range(30):
        store.remember(f"Decision {i}: the sensor node firmware module number {i} keeps its ring buffer in retained "
                       f"RAM and flushes it to flash every {i + 5} minutes, so a brown-out loses at most one window.",
                       kind="decision")
    store.remember("The SX1262 needs 20 ms after reset before the first SPI command.", kind="gotcha")
    store.remember("Prefer k_msleep over busy waits in drivers.", kind="preference")
    view = briefing_view(store.briefing(max_tokens=900))
    assert view["items"]["gotchas"] and view["items"]["preferences"]
    assert view["tokens"] <= 900 and len(view["items"]["decisions"]) >= 5


# --- fu38 D1, fu37 D8: a to-do the user later asks for is taken up, not left open ----------------------------------

@pytest.mark.parametrize("turns, open_ends", [
    (["Fix the checkout total. TODO: also fix the refund path in shop/refunds.py, later.",
      "Fixed the total. Note: I left the refund path for later (TODO).", "Now fix the refund path",
      "The refund path is fixed."], []),
    (["OK. TODO: add the watchdog feed to the join retry loop tomorrow, and we still need to test the new delay on "
      "rev C hardware.", "Noted.", "Let's do the watchdog now instead of tomorrow.",
      "Done: the join retry loop now feeds the watchdog."],
     ["To do: we still need to test the new delay on rev C hardware."]),
    (["TODO: update the README and fix the flaky test.", "Noted.", "Fix the lint errors.", "Done."],
     ["TODO: update the README and fix the flaky test."]),
    (["TODO: update the README.", "Noted.", "Fix the README typo in the title.", "Done."], ["TODO: update the README."]),
    (["Rename the job.", "Renamed. Still to do: the cron entry still uses the old name.",
      "Thanks, also bump the version.", "Bumped."], ["Still to do: the cron entry still uses the old name."]),
])
def test_a_to_do_the_user_asks_for_later_is_taken_up(turns, open_ends):
    assert _session(*turns).open_ends == open_ends


# --- fu38 D4: a chain moved to new ids continues the versions the store already holds -------------------------------

def test_an_import_of_a_merge_made_elsewhere_continues_the_memories_it_merged(tmp_path, config):
    from supermemory.core import MemoryStore

    def open_store(name):
        return MemoryStore(tmp_path / f"{name}.db", config=config, namespace="shop")

    with open_store("one") as one:
        lint = one.remember("Run make lint before every commit.", kind="preference")["id"]
        money = one.remember("All amounts are Decimal, never float.", kind="decision")["id"]
        one.export(tmp_path / "one.jsonl")
    with open_store("two") as two:
        two.import_file(tmp_path / "one.jsonl")
        merged = two.merge(lint, money, content="Run make lint before every commit; all amounts are Decimal.")["id"]
        two.export(tmp_path / "two.jsonl")
    with open_store("one") as one:
        other = one.remember("The staging database listens on port 5433.", kind="fact")["id"]
        assert other == merged          # the merge's id holds another memory here: the chain moves to a new one
        result = one.import_file(tmp_path / "two.jsonl")
        live = {m["id"]: m["title"] for m in one.list(limit=50)["items"]}
        head = result["renumbered"][merged]
        assert set(live) == {other, head}                  # no second live copy of what the merge folded in
        assert lint not in result["renumbered"] and money not in result["renumbered"]
        assert one.get(lint)["memories"][0]["superseded_by"] == head


def test_linking_twice_says_the_link_is_there_already(store):
    """fu38 D8: a second identical `link` said "Linked" again."""
    from supermemory.render import render_link

    a = store.remember("The gateway runs ChirpStack v4.", kind="fact")["id"]
    b = store.remember("Back up the gateway config before upgrading ChirpStack.", kind="gotcha")["id"]
    first = store.link(a, b, relation="refines")
    assert first["status"] == "created" and render_link(first).startswith("Linked ")
    assert render_link(store.link(a, b, relation="refines")).startswith("Already linked ")
    assert store.link(a, b, relation="refines", weight=2)["status"] == "updated"


def test_health_folds_copies_into_one_memory_to_keep(store):
    """fu38 D5: six copies were fifteen pairs whose "keep" advice disagreed; now one keeper and five merges."""
    ids = [store.remember(f"Run make lint before every commit {'please ' * n}".strip(), kind="preference")["id"]
           for n in range(6)]
    report = store.health()
    keep = {pair["canonical"] for pair in report["near_duplicates"]}
    assert len(keep) == 1 and report["near_duplicate_pairs"] == 5
    (keeper,) = keep
    for pair in report["near_duplicates"]:     # each merge folds another copy into the keeper's newest version
        keeper = store.merge(keeper, pair["b"] if pair["a"] in (pair["canonical"], keeper) else pair["a"])["id"]
    assert {m["id"] for m in store.list(limit=20)["items"]} & set(ids) == set()   # all folded into new versions


def test_an_unclosed_private_tag_is_said_after_the_sessions_own_open_ends(tmp_path, store):
    """fu38 D2: the note on an unclosed <private> led the open ends and pushed the real ones out of the briefing."""
    from supermemory.capture import PRIVATE_LEFT_OPEN

    path = tmp_path / "t.jsonl"
    turns = ["Fix the checkout total.", "Fixed. Still to do: the refund path.", "<private>token 4471 for the call"]
    with open(path, "w", encoding="utf-8") as fh:
        for i, text in enumerate(turns):
            role = "user" if i % 2 == 0 else "assistant"
            content = text if role == "user" else [{"type": "text", "text": text}]
            fh.write(json.dumps({"type": role, "uuid": f"x{i}", "cwd": "/p", "sessionId": "s",
                                 "message": {"role": role, "content": content}}) + "\n")
    result = store.capture_session(str(path), session_id="s", platform="claude-code", cwd="/p")
    body = store.get(result["id"])["memories"][0]["body"]
    ends = body.split("Open ends:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert ends[-1] == f"- {PRIVATE_LEFT_OPEN}" and "refund path" in ends[0] and "4471" not in body
