"""What a query asks for besides its topic: memory kinds, a task status and a period, read from its words (pure).

The words live in `text/lexicons/intent_words.txt` (phrase, facets, scope). `parse` finds them
(longest phrase first, whole words for ASCII, anywhere for CJK) and says whether anything else is
left once they, the stop words and the Chinese function characters are taken out: a query that is
only intent ("any open tasks?", "最近的决定") is answered by listing, one with a topic as
well ("decisions on the cache layer") by a filtered recall. A light verb (`light:K` rows: make, take,
reach, add, write, hit, 加了 …) counts only as the verb of a kind word it names ("what decisions did we
make", "add tasks"): asking for that kind, not a topic (`_governed`). `now` is passed in; nothing here
reads a clock or the store.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field

from supermemory.text import lexicons

RECENT_DAYS = 14.0   # "recently" / 最近: memories of the last two weeks first (a soft window: widened when empty)
TIME_FACETS = ("recent", "today", "yesterday", "this_week", "last_week", "this_month", "last_month")
SCOPES = ("any", "alone", "verb", "text")


@dataclass(frozen=True)
class Entry:
    """One row of the lexicon."""

    phrase: str
    kinds: tuple[str, ...] = ()
    status: str | None = None
    time: str | None = None
    alone: bool = True          # True: counts only in a query made of intent words alone
    light: tuple[str, ...] = () # a light verb of these kinds: names no facet, counts where it governs their word
    verb: bool = False          # scope `verb`: a light verb that is plain text wherever it governs no kind word
    text: bool = False          # scope `text`: plain text holding a shorter phrase ("on call" holds "call")


@dataclass(frozen=True)
class Intent:
    """The kind / status / time facets of a query.

    `kinds`, `status`, `since` and `until` are what applies; `only` is True when the query holds
    nothing but intent words (list, newest first); `soft_since` marks a window from "recently"
    that may be widened when nothing falls in it; `words` are the phrases found, in query order;
    `topic` is the query without the phrases whose facets apply (what a filtered recall ranks by: the
    filter stands for the rest).
    """

    kinds: tuple[str, ...] = ()
    status: str | None = None
    since: float | None = None
    until: float | None = None
    soft_since: bool = False
    only: bool = False
    words: tuple[str, ...] = field(default_factory=tuple)
    topic: str = ""
    rest: str = ""              # the query without any intent phrase (none words included): what it names besides them
    by_meaning: bool = False    # read from the question's vector near the prototypes (`from_meaning`), not its words

    @property
    def active(self) -> bool:
        """Whether any facet applies."""
        return bool(self.kinds or self.status or self.since is not None or self.until is not None)

    def describe(self) -> str:
        """The facets as `kind=task status=open since=2026-05-11`, for notes and explain output."""
        from supermemory.timeparse import iso

        parts = []
        if self.kinds:
            parts.append("kind=" + ",".join(self.kinds))
        if self.status:
            parts.append("status=" + self.status)
        if self.since is not None:
            parts.append(("recent since=" if self.soft_since else "since=") + str(iso(self.since)))
        if self.until is not None:
            parts.append("until=" + str(iso(self.until)))
        return " ".join(parts)

    def as_dict(self) -> dict:
        """The intent for `--explain`."""
        from supermemory.timeparse import iso

        return {"kinds": list(self.kinds), "status": self.status, "since": iso(self.since),
                "until": iso(self.until), "soft_since": self.soft_since, "only": self.only,
                "words": list(self.words), "by_meaning": self.by_meaning}


@functools.cache
def entries() -> tuple[Entry, ...]:
    """The lexicon's rows, longest phrase first.

    Raises:
        ValueError: a row with an unknown facet or scope, a light verb that names a facet itself, or scope `verb`
            without `light:K` (a broken data file).
    """
    out = []
    for row in lexicons.table("intent_words"):
        phrase, scope, where = row[0].lower(), row[2], f"intent_words ({row[0]!r})"
        light = tuple(f.removeprefix("light:") for f in row[1].split() if f.startswith("light:"))
        kinds, status, time = facets_of(" ".join(f for f in row[1].split() if not f.startswith("light:")), where,
                                        also=("none",))
        if scope not in SCOPES:
            raise ValueError(f"{where}: scope must be one of {', '.join(SCOPES)}, not {scope!r}")
        if "" in light:
            raise ValueError(f"{where}: light: needs a kind")
        if light and (kinds or status or time):
            raise ValueError(f"{where}: a light verb names no facet of its own")
        if scope == "verb" and not light:
            raise ValueError(f"{where}: scope verb needs light:K facets")
        if scope == "text" and (kinds or status or time or light):
            raise ValueError(f"{where}: scope text names no facet (facets: none)")
        out.append(Entry(phrase, kinds, status, time, scope == "alone", light, scope == "verb", scope == "text"))
    return tuple(sorted(out, key=lambda e: -len(e.phrase)))


def facets_of(spec: str, where: str, *, also: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str | None, str | None]:
    """(kinds, status, time) of a lexicon row's facets (`kind:K` repeatable, `status:S`, `time:T`); words in `also`
    are allowed and name nothing.

    Raises:
        ValueError: an unknown facet (a broken data file), named with `where`.
    """
    kinds, status, time = [], None, None
    for facet in spec.split():
        name, _, value = facet.partition(":")
        if name == "kind" and value:
            kinds.append(value)
        elif name == "status" and value in ("open", "done", "dropped"):
            status = value
        elif name == "time" and value in TIME_FACETS:
            time = value
        elif facet not in also:
            raise ValueError(f"{where}: unknown facet {facet!r}")
    return tuple(kinds), status, time


@functools.cache
def _pattern() -> re.Pattern:
    """One alternation of every phrase, longest first: ASCII ones as whole words (a possessive 's included: "last
    week's notes"), CJK ones anywhere."""
    words, cjk = [], []
    for entry in entries():
        escaped = r"\s+".join(re.escape(w) for w in entry.phrase.split())
        (words if entry.phrase[0].isascii() else cjk).append(escaped)
    # The word boundaries stand once around the ASCII alternation, not in each of its hundreds of phrases: the
    # engine tests them once per position (every recall parses its query).
    return re.compile(rf"(?<![\w'-])(?:{'|'.join(words)})(?:['’]s)?(?![\w'-])|{'|'.join(cjk)}", re.IGNORECASE)


@functools.cache
def _by_phrase() -> dict[str, Entry]:
    return {e.phrase: e for e in entries()}


_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def _has_content(rest: str) -> bool:
    """Whether text left after the intent phrases still names something (a non-stop word or CJK character)."""
    stop = lexicons.word_set("stopwords")
    function = lexicons.word_set("cjk_function_chars") | lexicons.word_set("cjk_stop_unigrams")
    for word in _WORD.findall(rest.lower().replace("’", "'")):
        if word.isascii():
            if word not in stop and word.split("'")[0] not in stop:
                return True
        elif any(not ch.isascii() and ch not in function for ch in word) or any(
                ch.isascii() and ch.isalnum() for ch in word):
            return True
    return False


def _object_follows(after: str) -> bool:
    """Whether the text right after a verb (up to the next intent phrase) starts with an object of its own: a content
    word, after any determiners, before the clause ends ("make the docker image smaller"; not "made about the cache",
    "made?", nor "make" right before "decisions")."""
    clause = re.split(r"[,.;:!?，。；：！？]", after, maxsplit=1)[0]
    words = _WORD.findall(clause.lower().replace("’", "'"))
    determiners = lexicons.word_set("determiners")   # "make the image smaller": the object comes after them
    while words and words[0] in determiners:
        words.pop(0)
    return bool(words) and _has_content(words[0])


def _governed(text: str, matches: list[tuple[Entry, tuple[int, int]]], i: int) -> Entry | None:
    """The kind word the light verb `matches[i]` is the verb of, or None.

    It governs a word naming one of its `light` kinds when nothing but stop words and intent phrases stand between
    them ("what decisions did we make", "did we make any decisions", "come to a decision", "加了哪些任务") and it has
    no object of its own ("decisions about how we make releases": releases is what is made, a topic).
    """
    verb, (_, end) = matches[i]
    after = text[end:matches[i + 1][1][0] if i + 1 < len(matches) else len(text)]
    if _object_follows(after):
        return None
    for j, (word, _) in enumerate(matches):
        if j == i or not set(word.kinds) & set(verb.light):
            continue
        lo, hi = sorted((i, j))
        if not any(_has_content(text[matches[k][1][1]:matches[k + 1][1][0]]) for k in range(lo, hi)):
            return word
    return None


def _midnight(now: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)


def period(name: str, now: float) -> tuple[float | None, float | None]:
    """(since, until) in epoch seconds of a time facet, in local time as `timeparse` reads `today`."""
    today = _midnight(now)
    if name == "recent":
        return now - RECENT_DAYS * 86400, None
    if name == "today":
        return today.timestamp(), None
    if name == "yesterday":
        return (today - dt.timedelta(days=1)).timestamp(), today.timestamp()
    monday = today - dt.timedelta(days=today.weekday())
    if name == "this_week":
        return monday.timestamp(), None
    if name == "last_week":
        return (monday - dt.timedelta(days=7)).timestamp(), monday.timestamp()
    first = today.replace(day=1)
    if name == "this_month":
        return first.timestamp(), None
    previous = (first - dt.timedelta(days=1)).replace(day=1)
    return previous.timestamp(), first.timestamp()   # last_month


def parse(text: str, now: float) -> Intent:
    """The intent of a query at time `now` (epoch seconds).

    Facets of `alone` words count only when the query is nothing but intent words; a status
    without a kind means tasks (only tasks have one). Several kinds add up, except that a phrase naming several
    gives way to a narrower one among them (有哪些坑需要注意: gotchas, not also decisions); the last status and the
    last time word win. A light verb that governs a kind word goes with it (its scope), one that governs
    none is plain text (scope `verb`) or a filler of intent-only queries (scope `alone`). A phrase of scope `text`
    is plain text that holds an intent phrase ("on call" holds "call"): it is matched as the longer phrase, and kept.
    """
    matches = []
    for match in _pattern().finditer(text):
        phrase = re.sub(r"\s+", " ", match.group(0).lower().replace("’", "'"))
        matches.append((_by_phrase().get(phrase) or _by_phrase()[phrase.removesuffix("'s")], match.span()))
    found: list[Entry] = []
    spans: list[tuple[int, int]] = []
    pieces: list[str] = []
    last = 0
    for i, (entry, span) in enumerate(matches):
        if entry.text:      # matched as the longest phrase so the shorter one inside it is not: it stays text
            continue
        if entry.light:
            word = _governed(text, matches, i)
            if word is not None:
                entry = Entry(entry.phrase, alone=word.alone)
            elif entry.verb:
                continue
        found.append(entry)
        spans.append(span)
        pieces.append(text[last:span[0]])
        last = span[1]
    pieces.append(text[last:])
    if not found:
        return Intent()
    only = not _has_content(" ".join(pieces))
    used = [e for e in found if only or not e.alone]
    kept, last = [], 0
    for entry, (start, end) in zip(found, spans):
        if only or not entry.alone:
            kept.append(text[last:start])
            last = end
    topic = " ".join(" ".join(kept + [text[last:]]).split())
    kinds: list[str] = []
    status = time = None
    named = [set(e.kinds) for e in used if e.kinds]
    for entry in used:      # a phrase of several kinds ("需要注意") gives way to a narrower one it holds ("坑")
        if not any(other < set(entry.kinds) for other in named):
            kinds.extend(k for k in entry.kinds if k not in kinds)
        status = entry.status or status
        time = entry.time or time
    if status and not kinds:
        kinds = ["task"]
    if status and "task" not in kinds:
        status = None   # "decisions still open": no other kind has a status
    since, until = period(time, now) if time else (None, None)
    if not (kinds or status or time):
        return Intent(words=tuple(e.phrase for e in found))
    return Intent(kinds=tuple(kinds), status=status, since=since, until=until, soft_since=time == "recent",
                  only=only, words=tuple(e.phrase for e in found), topic=topic, rest=" ".join(" ".join(pieces).split()))


# A question the words above miss can still be read by its meaning (`retrieval.broad.by_meaning` embeds it): these
# bounds are on bge-small cosines (the calibrated embedder; another one reads no meaning here), chosen on the dev sets
# of bench/broad_wordings.jsonl against every other kind of question in the benches (bench/RESULTS.md, "Broad
# questions read by meaning"): near enough to one facet's questions, and clearly nearer than to any other's.
MEANING_THRESHOLD = 0.74
MEANING_MARGIN = 0.04


@functools.cache
def prototypes() -> tuple[tuple[str, str], ...]:
    """(facets, question) rows of `lexicons/intent_prototypes.txt`; facets as in intent_words or `overview`.

    Raises:
        ValueError: a row with an unknown facet (a broken data file).
    """
    rows = tuple((row[0], row[1]) for row in lexicons.table("intent_prototypes"))
    for facets, _ in rows:
        if facets_of(facets, "intent_prototypes", also=("overview",))[2] is not None:
            raise ValueError(f"intent_prototypes: a time facet is read from words only ({facets!r})")
    return rows


def from_meaning(nearest: dict[str, float]) -> Intent | None:
    """The listing a question asks for, from its best cosine to each facet's prototype questions (`nearest`: facets →
    cosine), or None: when the nearest facet is an overview, or not near enough, or not clearly nearer than the next."""
    ranked = sorted(nearest.items(), key=lambda item: -item[1])
    if not ranked or ranked[0][0] == "overview" or ranked[0][1] < MEANING_THRESHOLD:
        return None
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < MEANING_MARGIN:
        return None
    kinds, status, _ = facets_of(ranked[0][0], "intent_prototypes")
    return Intent(kinds=kinds, status=status, only=True, by_meaning=True)
