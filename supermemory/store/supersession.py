"""`supersedes` links written when a memory is stored, from it to the older memories it makes stale.

A memory that announces a change and is close in meaning to an older live one, or restates one word for word with
one value replaced (below), supersedes it: a link new → old that recall demotes by, never hides by.

The rule (`supersession.*` settings, fitted on `bench/revision_pairs.jsonl` by `bench/revisions.py`):
the new text carries a change marker (`text.revision_marker`: "no longer", "moved from … to",
改用 …) in a text short enough to restate one fact (at most `max_terms` distinct content
words, `text.traits.word_count`: Chinese counted in words, about two characters each, not in the characters and
bigrams the index holds; scientific abstracts, code and long chat turns mention changes without revising a memory),
and an older memory of the same namespace is close to it: the best cosine between their chunk vectors (the new
ones are already computed, so no extra embedding) reaches `cosine`, or `cosine_with_overlap` while the new
text repeats `overlap` of the old one's content words, and in either case at least `min_overlap` of them.
Numbers and numbered names ("5432", "db1") are no content words, so word overlap cannot tell two facts of one
shape apart: a revision changes one value ("port 8080" → "port 9000", often naming the old one too), so an
older memory two of whose numbered words the new text replaces with others ("5432 on db1" → "5433 on db2")
is another fact, never superseded (`text.traits.replaced_numbers`). Negations are not compared: saying that
something is no longer done is how many revisions read.
When the only change wording is of the kind everyday talk uses too (a bare "now", "went … to":
`text.revision_marker` says "weak"), the new text must restate the old one: `cosine_with_overlap` and
`overlap` both (in conversation these words wrote most links, between turns that revise nothing), unless it names a
value the old one states ("now … 24 hours instead of 7 days" beside "a 7-day TTL": "7-day" states 7), or the
older memory says something is the only case and the new one adds to what that "only" restricted ("only X" →
"now also Y": `text.traits.widens`), which announces a change as plainly as "no longer" does. A text whose only
change wording is such an addition ("… now also …": `text.traits.adds`) supersedes nothing else: an addition
leaves the older fact standing. A task (kind task, or a note headed "TODO:") is superseded only by a text that
restates it, whatever the marker: a change that shares a topic word with an open task does not close it. And a
change to one occurrence ("today's … was postponed") leaves an older recurring schedule ("every Thursday")
standing (`text.traits.one_off`).
A change that names its values ("from A to B", "A is replaced by B", "dropped A in favour of B", "B instead of A",
"B is now used for … instead of A", "B, which replaced A", "B is …; A was dropped", "moved off A":
`text.traits.change_values`) is about the memories that state A: one that states no A (none of its
words, or another version: "OpenSearch 2.10" is not "OpenSearch 2.11") is another fact of the same subject ("switched
the pnpm store from the home folder to …" beside "the package manager is pnpm") and is never superseded; one that
does needs no `min_overlap` (naming the replaced value is saying what the change is about, where a long older memory
shares few other words), and one that states all of a value the text retires ("A is no longer used", 不再使用A: A
itself, not one use of it) needs no word overlap either: "Logging uses logrus with the JSON formatter; …" is stale
beside "moved from logrus to log/slog …; logrus is no longer used", close in meaning (`cosine_with_overlap`) though
it shares few words; so does one whose first statement is about the value the change replaces, stating it in full
with a word the new text names before it ("Audio goes through the kira crate" beside "switched the audio backend
from kira to FMOD Studio": `_replaces_its_subject`), and one whose first statement holds every subject word of a value
set anew and another value of its shape ("Chunk size … is 32x32x32" beside "The chunk size changed to 16x16x16":
`_sets_its_value`; fresh-user run fu36). A change that names what it replaces is not set aside for replacing two
numbered words ("The DS18B20 … was replaced by a TMP117 on I2C" beside "… a DS18B20 on the 1-Wire bus at pin
P0.13": fu37); a revert ("… is back to 15 minutes") and "stop using A" are change wording too. A change of a value the older memory states only after its first statement revises a detail
("…; health check at /healthz" beside "the health check moved from /healthz to /livez", `_changes_a_detail`): when
that first statement names no replaced value and holds two content words the new text does not restate, it still
holds and is never superseded. A retirement said of one area ("A is no longer used in the admin pages", "… for
backend errors", "no longer use A in CI", 不再用于任务队列, 不再用 A 做每晚备份: `text.revisions.retirement_scopes`) retires A there only: it supersedes
only older memories that state that area (all its words), never one of another area ("The marketing site still uses
jQuery") nor one that states A with no area ("We use jQuery"), which still holds of the others. And an older memory that already states B agrees with the change instead of going stale:
one that names B but not A ("dependencies are managed with uv" ← "Poetry was replaced by uv"), or one that
announces the same change itself ("migrated from OpenSearch to Meilisearch" ← "OpenSearch was replaced by
Meilisearch"); "use npm, not yarn" names both without a change of its own, so "switched from npm to yarn" revises it.
Where cosines carry no meaning (mostly-CJK text: bge-small has no CJK vocabulary; or no vectors at all)
the words decide alone (`overlap_cjk`), a Chinese text's
words read in English too (`text.glossary.cross_terms`: 限流 → rate, limit) against an English memory.
A bare value change needs no change wording (`restates_value`, scored on `bench/revision_pairs_values.jsonl`): a text
without any that says what an older memory of the namespace says word for word but for one value ("The API request
timeout is 30 seconds." → "… 60 seconds.") supersedes it. Its values are its numbered words, short quoted spans and
code-like words (`flags.yaml`); the rest are its subject words, which must be the same, two at least ("More detail on
1." says nothing of what 1 is), with as many negations, one value of the older text replaced by one of the newer's in its place
and nothing else (values compared in order: "Worker 1 … replica 2 … 5s" → "Worker 2 … replica 1 … 3s" swaps two
names besides), neither text adding one more value ("CI also runs on Go 1.22", 也, 还: `text.traits.adds`), and that value stated of the subject, not part of its name: a value that heads its sentence or what
follows it (a timestamp, "Step 3:", 第3步), a count mark ("#42") or a number of an item ("Issue 42 blocks …", "service
number 3 talks …", "fixed issue 42 in …", "port 8080") names a thing, so two entries of a list, two chat turns of one
template and two numbered things stay side by side. A question or code states no value, and where cosines are read
the pair reaches `cosine` too. Such memories are found by an FTS query for all the subject words: no vector search,
the words decide. A quantity stated anew needs neither change wording nor a word for word restatement
(`_requantified`, `text.revisions.restates_quantity`, fresh-user run fu24 D1): a text that states one quantity of a
subject ("Billing worker scaled to 6 replicas on Dec 2 …", "The billing worker runs 8 replicas.") supersedes an older
one that states exactly one other value of that unit for the same subject words, whatever else it says ("… runs 4
replicas in production (k8s deployment billing-worker), autoscaling is disabled."); a scope after the unit ("in
staging", "for uploads") must be stated by both texts, production being no scope ("per pod" is a rate, no scope),
and a plan, a question, a negation, a range or history, an addition, a list step or a counted name states no
quantity. A pair read word for word but for the value stays `restates_value`'s (which reads cosines too). Found by
an FTS query for the subject words and the unit. Likewise a period stated anew with change wording (`_reperioded`,
`text.revisions.restates_period`, fu25 D3): "Mei's leave moved: she is now on leave from 2026-12-21 to 2027-01-10"
supersedes "Mei is on leave from 2026-12-14 to 2027-01-05; …", both ends changed though they are.
Links are ordinary `links` rows: `unlink … --relation supersedes` undoes one, and for good: the
removal is recorded (`link_removals`) and no automatic writer (`record_links`: `remember`, the passes below) writes
that pair again; only the user's own `link` does. Stores written before the rule get their links once (`backfill`,
from maintenance: change-announcing memories, then, in passes with a stamp of their own that stores which ran the
first get once too, the value-stating ones and the Chinese change-announcing ones, which the length cap missed while
it counted a Chinese sentence's characters and bigrams as words).
"""
from __future__ import annotations

import functools
import re
import time
import unicodedata
from typing import Sequence

from supermemory.store import db as dbm
from supermemory.store import embedding, search_index
from supermemory.store.context import StoreContext
from supermemory.store.records import LIVE, format_id
from supermemory.text import cjk_share, fts_match, has_revision_marker, is_cjk, revision_marker, tokenize
from supermemory.text.glossary import cross_terms
from supermemory.text.revisions import (in_scope, period_subject, quantity_subject, quantity_values, restates_period,
                                        restates_quantity, retirement_scopes)
from supermemory.text.traits import (adds, change_values, content_terms, numbered_words, one_off, replaced_numbers,
                                     restates_value, statements, value_subject, widens, word_count)

RELATION = "supersedes"
NEIGHBOURS = 8          # nearest memories (by vector and by words) a revision is compared with
STAMP_KEY = "supersedes_backfill"   # meta: the maintenance pass over older memories has run
CURSOR_KEY = "supersedes_backfill_at"   # meta: "created_at id" of the last memory that pass has read
VALUES_STAMP_KEY = "supersedes_backfill_values"      # meta: the pass for bare value changes has run
VALUES_CURSOR_KEY = "supersedes_backfill_values_at"  # meta: where that pass has got to
CJK_STAMP_KEY = "supersedes_backfill_cjk"       # meta: the pass for Chinese change wording (words counted as words)
CJK_CURSOR_KEY = "supersedes_backfill_cjk_at"   # meta: where that pass has got to
WORDINGS_STAMP_KEY = "supersedes_backfill_wordings24"   # meta: change wordings read since (moved X off A onto B, 调整为)
WORDINGS_CURSOR_KEY = "supersedes_backfill_wordings24_at"
SUBJECT_STAMP_KEY = "supersedes_backfill_subject36"   # meta: a change of what a memory is about, "is being removed"
SUBJECT_CURSOR_KEY = "supersedes_backfill_subject36_at"
# Characters beyond which a text revises nothing: `max_terms` counts distinct words, so a pasted log of thousands of
# lines of a few words passed it and every value of it was read (fresh-user run fu25 D1: 281 KB took 154 s to store).
# The longest labelled revision (bench/revision_pairs*.jsonl) has 121 characters.
MAX_CHARS = 2000
BACKFILL_SLICE = 50                  # memories looked up between two commits of a pass
CJK_TEXT = 0.3          # share of CJK characters from which cosines are not trusted
_TO_DO = re.compile(r"(?i)^\W*(?:todo|to-do|fixme)\b")   # a task written as a note: "TODO: …"
def _settings(ctx: StoreContext) -> dict:
    return {key: ctx.config.get(f"supersession.{key}")
            for key in ("enabled", "cosine", "cosine_with_overlap", "overlap", "min_overlap", "overlap_cjk",
                        "max_links", "max_terms")}


def _values(spans) -> list[tuple[frozenset, frozenset]]:
    """Each named side of a change as (content words, numbered words), sides that name nothing left out."""
    out = []
    for span in spans:
        value = (content_terms(tokenize(span)), numbered_words(span))
        if value[0] or value[1]:
            out.append(value)
    return out


def _states(value: tuple[frozenset, frozenset], words: frozenset, numbers: frozenset, *, fully: bool) -> bool:
    """Does a memory with these content and numbered words state this value? Its numbers (a version: "OpenSearch
    2.11") always, and one of its words (`fully`: all of them)."""
    mine, digits = value
    plain = numbers | _unit_numbers(numbers)
    if not all(d in plain or _unit_numbers(frozenset([d])) & plain for d in digits):
        return False
    if digits and not digits <= numbers:    # a number with a unit glued on, on either side ("30s" for "30 seconds",
        return True                         # 30 秒): the unit is spelt another way, the number says it (fu31 N1)
    return mine <= words if fully else (not mine or bool(mine & words))


_NUMBER_WITH_UNIT = re.compile(r"(\d+(?:\.\d+)?)-?[^\W\d_]+")


def _unit_numbers(numbers: frozenset) -> set:
    """The numbers of numbered words that glue a unit on, with a hyphen or without ("7-day" states 7 of days, as
    "7 days" does: fresh-user run fu25 D3; "30s" states 30 of seconds: fu31 N1)."""
    return {m.group(1) for word in numbers for m in [_NUMBER_WITH_UNIT.fullmatch(word)] if m}


def judge(cosine: float | None, overlap: float, cjk: bool, cfg: dict, *, weak: bool = False) -> bool:
    """Is an older memory close enough to a change-announcing one to be superseded by it?

    :param weak: the only change wording is everyday talk ("now"): the new text must also restate the old.
    """
    if cjk or cosine is None:
        return overlap >= max(cfg["overlap_cjk"], cfg["overlap"] if weak else 0.0)
    if overlap < cfg.get("min_overlap", 0.0):   # close in meaning but about other things ("list endpoints …")
        return False
    restates = cosine >= cfg["cosine_with_overlap"] and overlap >= cfg["overlap"]
    return restates or (not weak and cosine >= cfg["cosine"])


def _restated(ctx: StoreContext, namespace: str, text: str, vectors, cfg: dict, *,
              newer_than: tuple[float, int] | None, exclude: Sequence[int]) -> list[dict]:
    """The older memories a text without change wording supersedes: those it restates but for one value
    (`restates_value`), close in meaning as well (`cosine`) where cosines are read, found by an FTS query for all
    its subject words (each of them says every one)."""
    own = value_subject(text)
    if not own:
        return []
    match = " AND ".join(fts_match([word]) for word in sorted(own))
    older, _ = _neighbours(ctx, namespace, text, None, match, newer_than=newer_than, exclude=exclude)
    stale = [mid for mid in older if restates_value(older[mid], text)]
    cosines = _cosines(ctx, vectors, stale) if cjk_share(text) < CJK_TEXT else {}
    return _closest([{"id": mid, "cosine": None if mid not in cosines else round(cosines[mid], 4), "overlap": 1.0}
                     for mid in stale if cosines.get(mid, 1.0) >= cfg["cosine"]], cfg)


def _closest(found: list[dict], cfg: dict) -> list[dict]:
    """The `max_links` closest of these superseded memories: by cosine, else by word overlap; newest first on ties."""
    found.sort(key=lambda d: (-(d["cosine"] if d["cosine"] is not None else d["overlap"]), -d["id"]))
    return found[:int(cfg["max_links"])]


def superseded(ctx: StoreContext, namespace: str, text: str, vectors, *, newer_than: tuple[float, int] | None = None,
               exclude: Sequence[int] = ()) -> list[dict]:
    """The live memories of `namespace` that a memory with this text and these chunk vectors supersedes.

    :param newer_than: (created_at, id) of the memory itself when it is already stored: only memories
        written before it count (None: every live memory is older, as in `remember`).
    :returns: [{"id": int, "cosine": float | None, "overlap": float}], closest first, at most `max_links`.
    """
    cfg = _settings(ctx)
    if not cfg["enabled"]:
        return []
    if len(text) > MAX_CHARS:       # a document (a pasted log, a spec), not one fact restated
        return []
    own = content_terms(tokenize(text))
    if word_count(text) > cfg["max_terms"]:     # a long text that mentions a change is not the revision of one fact
        return []
    marker = revision_marker(text)
    anew = _requantified(ctx, namespace, text, newer_than=newer_than, exclude=exclude)   # values stated anew
    if marker is not None:      # a period said anew ("Mei's leave moved: she is now on leave from … to …")
        found = {d["id"] for d in anew}
        anew += [d for d in _reperioded(ctx, namespace, text, newer_than=newer_than, exclude=exclude)
                 if d["id"] not in found]
    if marker is None:      # no change wording: only a restatement with one value replaced supersedes
        return _merged(_restated(ctx, namespace, text, vectors, cfg, newer_than=newer_than, exclude=exclude),
                       anew, cfg)
    changes = change_values(text)
    # A change that names what it replaces tells the facts apart itself (below: a memory that states no replaced value
    # is another fact): "The DS18B20 … was replaced by a TMP117 on I2C" replaces two numbered words of "… a DS18B20 on
    # the 1-Wire bus at pin P0.13" and is still its revision (fresh-user run fu37 D2).
    older, tasks = _neighbours(ctx, namespace, text, vectors, fts_match(sorted(own)) if own else "",
                               newer_than=newer_than, exclude=exclude,
                               other_facts=any(old for old, _ in changes))
    if not older:
        return _closest(anew, cfg)
    cosines = _cosines(ctx, vectors, list(older))
    terms: dict[int, set] = {}
    for mid, tokens in search_index.chunk_tokens(ctx, list(older)):
        terms.setdefault(mid, set()).update(tokens.split())
    replaced, replacing = _values(old for old, _ in changes), _values(new for _, new in changes)
    retired = _values(old for old, new in changes if not new)     # "A is no longer used": A itself is gone
    text_cjk = cjk_share(text) >= CJK_TEXT
    # A Chinese text is read in English too against an English memory, every translation the glossary gives its
    # words (限流 → rate, limit: fresh-user runs fu29 D2, fu31 N2).
    read_as = own | {t for forms in cross_terms(text).values() for form in forms for t in form} if text_cjk else own
    weak = marker == "weak"
    additive = weak and adds(text)      # "X now also does Y": a change only to an older "only"
    scopes = retirement_scopes(text)    # "A is no longer used in the admin pages": only there
    set_anew = _values_set(text) if not changes else []     # "the chunk size changed to …": no old value named
    subjects = _named_subjects(text, changes)
    out = []
    for mid in older:
        theirs = content_terms(terms.get(mid, ()))
        widened = weak and widens(older[mid], text)      # "only X" → "now also Y"
        if not theirs or (additive and not widened):
            continue
        stated = content_terms(tokenize(older[mid])), numbered_words(older[mid])
        if not in_scope(scopes, stated[0]):     # a fact of another area, or of A with none: it still stands
            continue
        named = any(_states(value, *stated, fully=False) for value in replaced)
        if replaced and not named:      # "from A to B" where this memory states no A: a change of something else
            continue
        if named and _changes_a_detail(older[mid], replaced, own):     # its first statement still holds
            continue
        if _agrees(older[mid], stated, replacing, named):     # it already says B: a restatement, not a stale fact
            continue
        overlap = len(theirs & read_as) / len(theirs)
        cjk = text_cjk or sum(1 for t in theirs if not t.isascii()) * 2 > len(theirs)
        cosine = cosines.get(mid)
        # Everyday change wording that names the value this memory states ("now … 24 hours instead of 7 days" beside
        # "a 7-day TTL") says what changed as plainly as a strong marker (fu25 D3).
        strict = (weak and not widened and not named) or mid in tasks
        # Naming what it replaces is saying what the change is about: a long older memory shares few other words.
        # Retiring a value this memory states in full ("logrus is no longer used" beside "Logging uses logrus with
        # the JSON formatter; …") restates it whatever else either says: closeness in meaning alone decides
        # (`cosine_with_overlap`; mostly-CJK pairs, where cosines mean nothing: the retired value is the evidence).
        gone = not strict and (any(_states(value, *stated, fully=True) for value in retired)
                               or _replaces_its_subject(older[mid], subjects))
        if set_anew and not strict and _sets_its_value(older[mid], set_anew):
            named = gone = True
        bar = {**cfg, "min_overlap": 0.0, **({"overlap": 0.0, "overlap_cjk": 0.0} if gone else {})} if named else cfg
        if judge(cosine, overlap, cjk, bar, weak=strict):
            out.append({"id": mid, "cosine": None if cosine is None else round(cosine, 4),
                        "overlap": round(overlap, 3)})
    return _merged(out, anew, cfg)


def _merged(found: list[dict], more: list[dict], cfg: dict) -> list[dict]:
    """`found` and those of `more` it lacks, the `max_links` closest (`_closest`)."""
    ids = {d["id"] for d in found}
    return _closest(found + [d for d in more if d["id"] not in ids], cfg)


def _requantified(ctx: StoreContext, namespace: str, text: str, *, newer_than: tuple[float, int] | None,
                  exclude: Sequence[int]) -> list[dict]:
    """The older memories whose one value of a quantity this text states anew, for the same subject and unit
    (`text.revisions.restates_quantity`: "The billing worker runs 4 replicas in production (…), autoscaling is
    disabled." ← "Billing worker scaled to 6 replicas on Dec 2 …"), found by an FTS query for the subject words
    and the unit; tasks and an older recurring schedule beside a one-off change are left alone. The words decide:
    the older text may say more besides, which moves its vector away (fresh-user run fu24, D1); one that says the
    same word for word but for the value is left to `_restated`, which reads cosines too."""
    stated = quantity_subject(text)
    if stated is None:
        return []
    match = " AND ".join(fts_match([word]) for word in sorted(stated[0] | {stated[1]}))
    older, tasks = _neighbours(ctx, namespace, text, None, match, newer_than=newer_than, exclude=exclude,
                               other_facts=True)
    # A pair read word for word but for its value is `_restated`'s to judge (it must be close in meaning as well). A
    # quantity the older memory states only after a first statement that still holds is a detail of it
    # (`_changes_a_detail`): `remember` flags the pair as a possible contradiction instead (fu25 D4).
    own = content_terms(tokenize(text))
    return [{"id": mid, "cosine": None, "overlap": 1.0} for mid in older
            if mid not in tasks and not restates_value(older[mid], text) and restates_quantity(older[mid], text)
            and not _changes_a_detail(older[mid], [(frozenset(), frozenset({value}))
                                                   for value in quantity_values(older[mid], stated[1])], own)]


def _reperioded(ctx: StoreContext, namespace: str, text: str, *, newer_than: tuple[float, int] | None,
                exclude: Sequence[int]) -> list[dict]:
    """The older memories whose one period of a subject this change states anew (`text.revisions.restates_period`:
    "Mei is on leave from 2026-12-14 to 2027-01-05; …" ← "Mei's leave moved: she is now on leave from 2026-12-21 to
    2027-01-10", fresh-user run fu25 D3), found by an FTS query for its subject words. Both ends change, which
    `_neighbours` otherwise reads as another fact (`other_facts`); tasks are left alone."""
    subject = period_subject(text)
    if not subject:
        return []
    match = " OR ".join(fts_match([word]) for word in sorted(subject))
    older, tasks = _neighbours(ctx, namespace, text, None, match, newer_than=newer_than, exclude=exclude,
                               other_facts=True)
    return [{"id": mid, "cosine": None, "overlap": 1.0} for mid in older
            if mid not in tasks and restates_period(older[mid], text)]


def _neighbours(ctx: StoreContext, namespace: str, text: str, vectors, match: str, *,
                newer_than: tuple[float, int] | None, exclude: Sequence[int],
                other_facts: bool = False) -> tuple[dict[int, str], set[int]]:
    """The live memories of `namespace` written before this text that may be stale beside it: the nearest to its
    chunk `vectors` (None: none looked up) and the best FTS hits of `match` (an FTS5 expression over content words;
    "": none), less those of another fact (two numbers replaced) or of a recurring schedule a one-off change leaves
    standing (`other_facts`: those with two numbers replaced are kept, for a caller that tells facts apart itself).
    Returns ({id: title and body}, the ids of those that are tasks)."""
    found: set[int] = set()
    if vectors is not None:
        for vector in vectors:
            found.update(mid for mid, _ in search_index.vector_search(ctx, vector, [namespace], NEIGHBOURS + 1))
    if match:
        found.update(hit[0] for hit in search_index.lexical_hits(
            ctx, f'ns : "ns_{namespace}" AND tokens : ({match})', [namespace], "1 = 1", [], NEIGHBOURS + 1))
    found -= set(exclude)
    if not found:
        return {}, set()
    marks = ",".join("?" * len(found))
    rows = ctx.q(f"SELECT m.id, m.created_at, m.title, m.body, m.kind FROM memories m WHERE m.id IN ({marks}) "
                 f"AND {LIVE} AND m.namespace = ? AND m.kind != 'session'", [*found, namespace])
    older = {mid: f"{title}\n{body}" for mid, created, title, body, _ in rows
             if (newer_than is None or (created, mid) < newer_than)
             and (other_facts or replaced_numbers(f"{title}\n{body}", text) <= 1)   # two replaced: another fact
             and not one_off(f"{title}\n{body}", text)}            # "today's … postponed" vs "every Thursday"
    tasks = {mid for mid, _, title, body, kind in rows
             if kind == "task" or _TO_DO.match(title or "") or _TO_DO.match(body or "")}
    return older, tasks


def _cosines(ctx: StoreContext, vectors, memory_ids: list[int]) -> dict[int, float]:
    """{id: the best cosine between these chunk vectors and the memory's chunks}, only under bge-small (the
    thresholds are calibrated on it; any other embedder: {})."""
    cosines: dict[int, float] = {}
    if vectors is None or not memory_ids or embedding.provider_id(ctx) != "onnx":
        return cosines
    import numpy as np

    mine = np.asarray(vectors, dtype=np.float32)
    for mid, vec in search_index.chunk_vectors(ctx, memory_ids):
        cosines[mid] = max(cosines.get(mid, -1.0), float(np.max(mine @ vec)))
    return cosines


@functools.lru_cache(maxsize=64)
def _first_statement(older: str) -> tuple[frozenset, frozenset, int]:
    """What a memory ("title\nbody") is about: the content and numbered words of its body's first statement, and how
    many statements the body has ((∅, ∅, 0) for none). One reading for every rule below that asks it."""
    said = statements(older.split("\n", 1)[-1])
    if not said:
        return frozenset(), frozenset(), 0
    return content_terms(tokenize(said[0])), numbered_words(said[0]), len(said)


def _changes_a_detail(older: str, replaced: list, own: frozenset) -> bool:
    """Does a change of these values touch only a detail of `older` (title, then body)? A memory's first statement is
    what it is about: when the body has more than one, its first states none of the replaced values and holds two
    content words or more the new text (its content words: `own`) does not restate, that statement still holds
    ("The api service is FastAPI on port 8081 behind nginx; health check at /healthz." beside "The api service health
    check moved from /healthz to /livez", fresh-user run fu24 D15), and a `supersedes` link would tell recall it is
    stale. A change of the value the first statement states ("Logging uses logrus …; every request logs …" beside
    "moved from logrus to log/slog") revises the memory whatever its later details say."""
    words, numbers, count = _first_statement(older)
    if count < 2:
        return False
    if any(_states(value, words, numbers, fully=False) for value in replaced):
        return False
    return len(words - own) >= 2


def _named_subjects(text: str, changes: list[tuple[str, str]]) -> list[tuple[tuple[frozenset, frozenset], frozenset]]:
    """Each value a change replaces, with the content words the new text says before it in its sentence (its subject:
    "We switched the audio backend from kira" → kira, {switch, audio, backend}); read once per new text."""
    out = []
    for old, _ in changes:
        value = _values([old])
        if value:
            before = next((part[:part.find(old)] for part in statements(text) if old in part), "")
            out.append((value[0], content_terms(tokenize(before)) - value[0][0]))
    return out


def _replaces_its_subject(older: str, named: list[tuple[tuple[frozenset, frozenset], frozenset]]) -> bool:
    """Does a change replace what `older` is about? Its first statement states a replaced value in full and a subject
    word the new text names before that value (`_named_subjects`): "Audio goes through the kira crate; …" beside "We
    switched the audio backend from kira to FMOD Studio" (fresh-user run fu36 D1), not "Sessions are stored in Redis …"
    beside "moved the page cache from Redis to memcached" (another use of Redis), nor a memory that only mentions the
    value ("team: …, DataX, …" beside "… 同步从 DataX 全量改为 …")."""
    words, numbers, _ = _first_statement(older)
    return any(_states(value, words, numbers, fully=True)
               and any(w.isascii() or len(w) > 1 for w in subject & words)   # one Chinese character names no subject
               for value, subject in named)


# "<subject> changed to <value>", "… was raised to …": a value set anew with no old one named (fresh-user run fu36 D1)
_SET_TO = re.compile(r"(?i)^(?P<subject>.{3,80}?) (?:was |were |has been |have been |is |got )?(?:changed|set|raised|"
                     r"lowered|increased|decreased|reduced|bumped|cut|moved) (?:up |down )?to (?P<value>\S*\d\S*)")
_DIGITS_RUN = re.compile(r"\d+")


def _values_set(text: str) -> list[tuple[frozenset, str]]:
    """(subject words, shape) of each value a text sets anew without naming the old one ("The chunk size changed to
    16x16x16 after …" → ({chunk, size}, "9x9x9")): a value's shape is its numbered word with each run of digits read
    as one digit, so "32x32x32" and "16x16x16", "30s" and "45s", "v1.2" and "v1.4" are values of one kind."""
    out = []
    for part in statements(text):
        m = _SET_TO.match(part.strip())
        words = content_terms(tokenize(m.group("subject"))) if m else frozenset()
        if m and len(words) >= 2:
            out.append((words, _DIGITS_RUN.sub("9", m.group("value").rstrip(".,;:").casefold())))
    return out


def _sets_its_value(older: str, set_anew: list[tuple[frozenset, str]]) -> bool:
    """Does `older` state, in its first statement, every subject word of a value set anew and another value of its
    shape ("Chunk size for the voxel world is 32x32x32; …" beside "The chunk size changed to 16x16x16 …")?"""
    words, numbers, _ = _first_statement(older)
    shapes = {_DIGITS_RUN.sub("9", w.casefold()) for w in numbers}
    return any(subject <= words and shape in shapes for subject, shape in set_anew)


def _agrees(older: str, stated: tuple[frozenset, frozenset], replacing: list, named: bool) -> bool:
    """Does `older` (its content and numbered words: `stated`) already state a value the change moves to, all its
    words and numbers, so that the change restates it rather than making it stale? When it names the replaced
    value too (`named`), only if it announces a change to that value itself.

    :param replacing: the change's new values, as `_values` gives them.
    """
    if not any(_states(value, *stated, fully=True) for value in replacing):
        return False
    if not named:
        return True
    own = _values(new for _, new in change_values(older))
    words = frozenset().union(*(w for w, _ in own))
    numbers = frozenset().union(*(n for _, n in own))
    return any(_states(value, words, numbers, fully=True) for value in replacing)


def record_links(ctx: StoreContext, src: int, targets: Sequence[dict], now: float) -> list[str]:
    """Write `src supersedes target` links (inside a write transaction), less those the user removed
    (`link_removals`, recorded by `unlink`); returns the target ids written."""
    removed = {dst for (dst,) in ctx.conn.execute("SELECT dst FROM link_removals WHERE src = ? AND relation = ?",
                                                  (src, RELATION))}
    written = []
    for target in targets:
        if target["id"] in removed:
            continue
        cur = ctx.conn.execute("INSERT OR IGNORE INTO links(src, dst, relation, weight, created_at) "
                               "VALUES (?, ?, ?, 1.0, ?)", (src, target["id"], RELATION, now))
        if cur.rowcount:
            written.append(format_id(target["id"]))
    return written


def successors(ctx: StoreContext, memory_ids: Sequence[int]) -> dict[int, int]:
    """{memory id: the live memory that supersedes it} for those of `memory_ids` a live link targets."""
    if not memory_ids:
        return {}
    marks = ",".join("?" * len(memory_ids))
    out: dict[int, int] = {}
    for dst, src in ctx.q(f"SELECT l.dst, l.src FROM links l JOIN memories m ON m.id = l.src WHERE l.relation = ? "
                          f"AND l.dst IN ({marks}) AND {LIVE} ORDER BY l.src", [RELATION, *memory_ids]):
        out.setdefault(dst, src)
    return out


def superseded_count(ctx: StoreContext, ns_sql: str, ns_params: list) -> int:
    """How many live memories (of the namespaces `ns_sql` selects, read as `m`) a live memory supersedes (`stats`:
    the versions an update replaced are counted apart)."""
    return ctx.q(f"SELECT count(DISTINCT l.dst) FROM links l JOIN memories m ON m.id = l.src JOIN memories d "
                 f"ON d.id = l.dst WHERE l.relation = ? AND {LIVE} AND d.superseded_by IS NULL AND d.deleted_at IS NULL "
                 f"AND {ns_sql}", [RELATION, *ns_params])[0][0]


def revising(ctx: StoreContext, memory_ids: Sequence[int]) -> set[int]:
    """Those of `memory_ids` with a `supersedes` link to a memory: the ones that announce a change."""
    if not memory_ids:
        return set()
    marks = ",".join("?" * len(memory_ids))
    return {src for (src,) in ctx.q(f"SELECT DISTINCT src FROM links WHERE relation = ? AND src IN ({marks})",
                                    [RELATION, *memory_ids])}


def backfill(ctx: StoreContext, *, force: bool = False, deadline: float | None = None) -> int:
    """Links for memories stored before links were written at write time: once per store (stamped in meta), each
    live memory that announces a change against the older ones (`STAMP_KEY`), then, in a pass of its own
    (`VALUES_STAMP_KEY`: stores that ran the first before bare value changes linked get it once too), each one
    without change wording that states a value (`value_subject`) against the older ones it restates but for that
    value, then, in a third (`CJK_STAMP_KEY`), each one with CJK text that announces a change again: the first pass
    of a version before `traits.word_count` read a Chinese sentence of 28 characters as 42 words, over the cap, and
    linked none of them; and in a fourth (`WORDINGS_STAMP_KEY`), every change-announcing one again with the wordings
    read since ("moved CI off Jenkins and onto GitHub Actions", 调整为, a Chinese change of an English fact: fresh-user
    run fu29), and in a fifth (`SUBJECT_STAMP_KEY`) once more with a change of what an older memory is about and a
    retirement under way ("switched the audio backend from kira to …", "Lua support is being removed": fresh-user
    run fu36). A pair the user removed (`unlink`) is never written again (`record_links`). Returns links written.

    Each pass reads the memories oldest first and commits every `BACKFILL_SLICE` memories it looked up with its place
    (its cursor key), and at `deadline`, so a pass cut short (a SessionEnd hook's budget, a killed process) goes on
    from there next time instead of starting over and never finishing on a large store.

    :param deadline: `time.monotonic()` value after which the pass commits what it read and stops (None: to
        the end); one memory's lookup (tens of ms, more on a large store) may run past it.
    """
    if not _settings(ctx)["enabled"]:
        return 0
    written = 0
    for stamp, cursor, wanted, _ in PASSES:
        if force or not dbm.get_meta(ctx.conn, stamp):
            links, finished = _backfill_pass(ctx, stamp, cursor, wanted, force=force, deadline=deadline)
            written += links
            if not finished:
                break
    return written


def _bare_value(text: str) -> bool:
    """Does a text without change wording state a value that may replace an older one's (`restates_value`)?"""
    return revision_marker(text) is None and (bool(value_subject(text)) or quantity_subject(text) is not None)


def _cjk_change(text: str) -> bool:
    """Does a text with CJK characters announce a change (what the first pass of older versions skipped)?"""
    return any(is_cjk(c) for c in text) and has_revision_marker(text)


# The one-time passes in the order they run: (stamp, cursor, which memories they read, the name `health` gives one
# still pending). A store this version creates has every stamp (`lifecycle.stamp_new_store`).
PASSES = ((STAMP_KEY, CURSOR_KEY, has_revision_marker, "supersedes links"),
          (VALUES_STAMP_KEY, VALUES_CURSOR_KEY, _bare_value, "value supersedes links"),
          (CJK_STAMP_KEY, CJK_CURSOR_KEY, _cjk_change, "Chinese supersedes links"),
          (WORDINGS_STAMP_KEY, WORDINGS_CURSOR_KEY, has_revision_marker, "supersedes links of newer change wordings"),
          (SUBJECT_STAMP_KEY, SUBJECT_CURSOR_KEY, has_revision_marker, "supersedes links of changed subjects"))


def _backfill_pass(ctx: StoreContext, stamp: str, cursor_key: str, wanted, *, force: bool,
                   deadline: float | None) -> tuple[int, bool]:
    """One pass of `backfill` over the live memories for which `wanted(text)` holds, from its cursor on; stamps
    `stamp` at the end. Returns (links written, finished)."""
    if deadline is not None and time.monotonic() >= deadline:
        return 0, False
    cursor = (dbm.get_meta(ctx.conn, cursor_key) or "").split()
    after = (float(cursor[0]), int(cursor[1])) if len(cursor) == 2 and not force else (float("-inf"), 0)
    rows = ctx.q(f"SELECT m.id, m.namespace, m.title, m.body, m.created_at FROM memories m WHERE {LIVE} "
                 f"AND m.kind != 'session' AND (m.created_at > ? OR (m.created_at = ? AND m.id > ?)) "
                 f"ORDER BY m.created_at, m.id", (after[0], after[0], after[1]))
    written, plan, read = 0, [], 0
    for index, (mid, namespace, title, body, created) in enumerate(rows):
        text = body if title and body.startswith(title) else f"{title}\n{body}"
        if wanted(text):
            read += 1
            vectors = [vec for _, vec in search_index.chunk_vectors(ctx, [mid])] or None
            targets = superseded(ctx, namespace, text, vectors, newer_than=(created, mid))
            if targets:
                plan.append((mid, targets))
        done = index == len(rows) - 1
        late = deadline is not None and read and time.monotonic() >= deadline
        if done or late or read >= BACKFILL_SLICE:
            with ctx.txn():
                for src, targets in plan:
                    written += len(record_links(ctx, src, targets, ctx.clock()))
                dbm.set_meta(ctx.conn, cursor_key, f"{created!r} {mid}")
            plan, read = [], 0
            if late and not done:
                return written, False
    with ctx.txn():
        dbm.set_meta(ctx.conn, stamp, "1")
        ctx.conn.execute("DELETE FROM meta WHERE key = ?", (cursor_key,))
    return written, True
