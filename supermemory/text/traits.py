"""What wording says beyond its words: change markers, negations, numbers, whether a text is code.

The names a query spells are in `text.names`; the word lists behind these traits (dates, change markers) live in
`lexicons/`.
"""
from __future__ import annotations

import functools
import re
import unicodedata

from supermemory.text import lexicons
from supermemory.text.sentences import STATEMENT_END as _SENTENCE_END
from supermemory.text.tokenizer import _LEAD_STRIP, _SEGMENT, _TRAIL_STRIP, _with_stems, is_cjk, stopwords, tokenize


def _revision() -> re.Pattern:
    """Wording that says a fact changed: "no longer", "was replaced by", "moved from X to Y", 改用 …"""
    return lexicons.marker_pattern("revision_markers")


def _weak_revision() -> re.Pattern:
    """Change wording that is also everyday talk: a bare "now", "went … to"."""
    return lexicons.marker_pattern("weak_revision_markers")


@functools.cache
def date_words() -> frozenset:
    """Dates say when, not what: not names, and not what makes two notes about the same thing (plus their
    stems, as tokens carry them: "september" → "septemb")."""
    return _with_stems(lexicons.word_set("date_words"))


# Module constants read from lexicons on first access (`from supermemory.text.traits import DATE_WORDS`).
_LAZY = {"DATE_WORDS": date_words}


__getattr__ = lexicons.lazy_constants(__name__, _LAZY)


_CODE_BEFORE, _CODE_AFTER = frozenset(".([{\"'"), frozenset(".(,:)}]\"'=")


def _in_code(text: str, start: int, end: int) -> bool:
    """Is `text[start:end]` an identifier rather than a word of a sentence? Glued to code punctuation on both
    sides it is (`self.deprecated:`, `datetime.now(`, `{deprecated}`); a word in parentheses is still prose."""
    if start == 0 or end >= len(text):
        return False
    before, after = text[start - 1], text[end]
    return before in _CODE_BEFORE and after in _CODE_AFTER and (before, after) != ("(", ")")


def _says(pattern: re.Pattern, text: str) -> bool:
    """Does the text use this wording as words (not only inside code)?"""
    return any(not _in_code(text, m.start(), m.end()) for m in pattern.finditer(text))


def revision_marker(text: str) -> str | None:
    """How this text announces that something changed: "strong" ("no longer", "was replaced by", 改用 …),
    "weak" (only wording everyday talk uses too: a bare "now", "went … to"; such a text revises an older
    memory only if it also restates it, store/supersession.py) or None."""
    if not text:
        return None
    if _says(_revision(), text):
        return "strong"
    return "weak" if _says(_weak_revision(), text) else None


# An older text that says something is all there is ("… used only for X") and a newer one that adds to it
# ("… now also used for Y"): the newer one's "now" announces a change as plainly as "no longer" does.
_ONLY = re.compile(r"(?i)\b(?:only|solely|exclusively)\b")
_ALSO = r"also|as well|too(?= *(?:[.;,!?]|$))"     # one more value, not another one ("too" of degree is not)
_NOW_ALSO = re.compile(rf"(?i)\b(?:now(?: [^\s.;,]+){{0,5}} (?:{_ALSO})|also now)\b")
_ADDS = re.compile(rf"(?i)\b(?:{_ALSO})\b|也(?!许)|还(?!是)")
_CLAUSE_END = re.compile(r"[.;,:!?()]")
_SCOPE_WORDS = 2        # content words after "only" that name what it restricts ("only [admins] can [delete]")


def _scope(text: str) -> list[frozenset]:
    """What each "only" of `text` restricts: the tokens of each of the first `_SCOPE_WORDS` content words after
    it, up to the end of its clause ("Only the payments team can deploy" → payments, team)."""
    stop, dates = stopwords(), date_words()
    scopes = []
    for m in _ONLY.finditer(text):
        if _in_code(text, m.start(), m.end()):
            continue
        clause = _CLAUSE_END.split(text[m.end():], maxsplit=1)[0]
        words = []
        for word in clause.split():
            tokens = frozenset(t for t in tokenize(word) if t not in stop and t not in dates
                               and any(ch.isalpha() for ch in t))
            if tokens:
                words.append(tokens)
            if len(words) == _SCOPE_WORDS:
                break
        scopes.extend(words)
    return scopes


@functools.lru_cache(maxsize=1 << 16)
def adds(text: str) -> bool:
    """Does the text add one more value rather than replace one: "also", "too", "as well", 也, 还 in a text without
    change wording ("CI also runs on Go 1.22"), or as its only change wording ("X now also does Y")? An addition
    leaves what an older memory said standing, unless that memory said it was the only case (`widens`)."""
    marker = revision_marker(text)
    if marker is None:
        return _says(_ADDS, text)
    return marker == "weak" and revision_marker(_NOW_ALSO.sub(" ", text)) is None and _says(_NOW_ALSO, text)


def widens(older: str, newer: str) -> bool:
    """Does `newer` add to what `older` said was the only case ("only X" → "now also Y")? Then a weak
    marker ("now") in `newer` reads as a strong one against `older` (store/supersession.py).

    The addition must be to what "only" restricted: a newer text that keeps every word of it ("only admins can
    delete …" → "admins now also see errors when they delete …") says something else about the same case."""
    if not (older and newer and _says(_NOW_ALSO, newer) and _says(_ONLY, older)):
        return False
    theirs = frozenset(tokenize(newer))
    return any(not (word & theirs) for word in _scope(older))


# A change said of one occurrence ("today's meeting was postponed", 今天的周会改为 …) leaves a recurring schedule
# ("every Thursday", "weekly", 每周) standing; "from today", "starting tomorrow" start a new schedule instead.
_RECURRING = re.compile(r"(?i)\b(?:every|each|weekly|daily|nightly|monthly|fortnightly|biweekly|bi-weekly|"
                        r"(?:mon|tues|wednes|thurs|fri|satur|sun|week)days|mornings|evenings|nights)\b|每[周天日月晚个]")
_ONE_OFF = re.compile(r"(?i)(?<!from )(?<!starting )(?<!as of )(?<!beginning )(?<!effective )(?<!since )"
                      r"\b(?:today|tonight|tomorrow|this (?:week|morning|afternoon|evening|(?:mon|tues|wednes|thurs|"
                      r"fri|satur|sun)day)(?:'s|\u2019s)?)\b|今天|今晚|明天|本周|这周")


def one_off(older: str, newer: str) -> bool:
    """Does `newer` change one occurrence ("today's", "this week's", "tomorrow") of what `older` says recurs
    ("every Thursday", "weekly")? Then it does not revise the schedule itself."""
    return bool(older and newer) and _says(_RECURRING, older) and not _says(_RECURRING, newer) \
        and _says(_ONE_OFF, newer)


# What a change wording names as replaced ("old") and as its replacement ("new"): "from A to B", "A was replaced by B",
# "replaced A with B", "dropped A in favour of B", "B instead of A", "moved off A", "moved CI off A and onto B",
# 从A迁移到B; and A retired, no new side
# ("A is no longer used", 不再使用A: A itself, not one use of it, "for jobs", 不再用于…, is gone; a clause that says
# what was before, 之前是A / 因为以前存在A, names A as the old side too). A side is one to four words (a name with its
# version: "OpenSearch 2.11", ".env", "flags.yaml"), cut at clause punctuation, at brackets (an aside: "改用 CDC
# （Debezium）", "不再用 updated_at 水位线（旧方案）"; full-width ones too) and at the connective words below, which end a
# name ("from npm to pnpm for the web app" → "pnpm"). A Chinese side may mix an identifier and Chinese words
# ("updated_at 水位线", "Redis 做任务队列").
_SIDE_WORD = r"(?:[^\s,;:!?()（）\"]|(?<=\d):(?=\d))*[^\s.,;:!?()（）\"]"   # a time keeps its colon: "03:00"
_SIDE = rf"{_SIDE_WORD}(?: {_SIDE_WORD}){{0,3}}"
_SIDE_CJK = r"(?:[^，。；、,;.从()（）]|\.(?=[A-Za-z0-9])){1,16}"   # a dot inside a name ("Fly.io") ends nothing
_CHANGES = tuple(re.compile(p, re.IGNORECASE) for p in (
    rf"\bfrom (?P<old>{_SIDE}?) (?:to|onto|into|over to) (?P<new>{_SIDE})",
    rf"(?<!\S)(?P<old>{_SIDE}) (?:is|are|was|were|has been|have been|got|gets|will be) (?:replaced|superseded) "
    rf"(?:by|with) (?P<new>{_SIDE})",
    rf"(?<!\S)(?P<old>{_SIDE}) (?:is|are|was|were|has been|have been|got) (?:dropped|retired|removed|deprecated|"
    rf"abandoned|ditched) in favou?r of (?P<new>{_SIDE})",
    rf"\b(?:replaced|swapped) (?!by |with )(?P<old>{_SIDE}?) (?:with|by|for) (?P<new>{_SIDE})",
    rf"\b(?:dropped|ditched|abandoned|retired|removed|deprecated) (?P<old>{_SIDE}?) in favou?r of (?P<new>{_SIDE})",
    rf"(?<!\S)(?P<new>{_SIDE}) (?:is|are) (?:now )?(?:used|in use|run|chosen|preferred)\b[^.;:!?]{{0,60}}? "
    rf"instead of (?P<old>{_SIDE})",
    rf"(?<!\S)(?P<new>{_SIDE})(?: \([^()\n]{{1,40}}\))? instead of (?P<old>{_SIDE})",   # "protobuf (nanopb) instead of"
    rf"(?<!\S)(?P<new>{_SIDE}),? (?:which|that) (?:has |have )?(?:replaced|superseded|took over from) (?P<old>{_SIDE})",
    rf"(?<!\S)(?P<new>{_SIDE}) (?:is|are) (?:now )?[^.;:!?]{{0,60}}?[;,] (?:and )?(?P<old>{_SIDE}) (?:is|are|was|were|"
    rf"has been|have been|got) (?:dropped|retired|removed|deprecated|abandoned|ditched|gone)\b",
    rf"\b(?:moved|migrated|switched|ported)(?: [^\s.,;:!?]+){{0,3}}? (?:off|away from) (?P<old>{_SIDE_WORD}"
    rf"(?: {_SIDE_WORD}){{0,3}}?),? (?:and )?(?:onto|to|over to|into) (?P<new>{_SIDE})",
    rf"\b(?:moved|migrated|switched|went) (?:off|away from) (?P<old>{_SIDE})",
    rf"\b(?:moved|migrated|switched|ported)(?: [^\s.,;:!?]+){{1,3}}? (?:off|away from) (?P<old>{_SIDE})",
    rf"从(?P<old>{_SIDE_CJK}?)(?:迁移到|迁到|换成了?|换为|改为|改成|改用|切换到|升级到|调整为|调整到|提高到|提升到|降低到|降到|增加到|减少到|延长到|缩短到)(?P<new>{_SIDE_CJK})",
    rf"(?:^|(?<=[，。；,;\s])|(?<=因为)|(?<=由于))(?:之前|以前|原来|原先)(?:是|用|使用|存在|存|放在|在)(?P<old>{_SIDE_CJK})",
    rf"(?<!\S)(?P<old>{_SIDE}) (?:(?:is|are|was|were|has been|have been) no longer (?:used|needed|in use|installed|a "
    rf"dependency)|(?:is|are) being (?:removed|dropped|retired|phased out|deprecated|ripped out))(?= *(?:[.;,:!?]|$))",
    rf"\b(?:no longer us(?:e|es|ing)|stop(?:ped)? using) (?P<old>{_SIDE})(?= *(?:[.;,!?]|$))",
    rf"不再(?:使用|用)(?!于)(?P<old>{_SIDE_CJK})(?=[，。；,;（(]|\.(?![A-Za-z0-9])|$)",
    rf"(?P<old>{_SIDE_CJK}?)已?经?不再(?:使用|需要)(?=[，。；,;（(]|\.(?![A-Za-z0-9])|$)",
    rf"不再(?:使用|用)(?!于)(?P<old>{_SIDE_CJK}?)(?:来|去)?(?:做|跑|进行|处理|执行)",
))
_CONNECTIVES = frozenset("to onto into over after because since so for in on at with when last this next starting "
                         "per as and but which that now by due until from via across everywhere is are was were"
                         .split())


def _side(words: str, *, leading: bool) -> str:
    """One side of a change, cut at a connective: the words after the last one when the side comes before the
    change wording ("the proxy nginx was replaced" → "the proxy nginx"), up to the first one when it comes after
    ("to pnpm for the web app" → "pnpm")."""
    if not words or not words.isascii():
        return (words or "").strip()
    split = words.split()
    cuts = [i for i, w in enumerate(split) if w.casefold() in _CONNECTIVES]
    if leading:
        return " ".join(split[cuts[-1] + 1:] if cuts else split)
    return " ".join(split[:cuts[0]] if cuts else split)


def statements(text: str) -> list[str]:
    """The text's statements: its sentences and clauses split at `. ; ! ?` (and 。；！？) and line ends, those
    without a content word left out."""
    return [part for part in _SENTENCE_END.split(text or "") if content_terms(tokenize(part))]


def change_values(text: str) -> list[tuple[str, str]]:
    """What the text's change wording names as replaced and as its replacement: [(old, new)], in text order, ''
    for a side the wording does not name ("moved off Mailgun" → ("Mailgun", "")). Only as words of a sentence,
    never inside code. Used with `revision_marker`: these forms name the values, the markers say it is a change."""
    out, starts, ends = [], set(), set()
    for pattern in _CHANGES:
        for m in pattern.finditer(text or ""):
            if _in_code(text, m.start(), m.end()):
                continue
            if "old" in m.groupdict() and (m.start("old") in starts or m.end("old") in ends):   # read by an earlier form
                continue
            old, new = (_side(m.group(name) or "", leading=m.start(name) == m.start()) if name in m.groupdict()
                        else "" for name in ("old", "new"))
            if old or new:
                out.append((m.start(), old, new))
                if "old" in m.groupdict():
                    starts.add(m.start("old"))
                    ends.add(m.end("old"))
    return [(old, new) for _, old, new in sorted(out)]


def has_revision_marker(text: str) -> bool:
    """Does this text announce that something changed (so an older, similar memory is stale)?"""
    return revision_marker(text) is not None


_NEGATION = re.compile(r"(?i)\b(?:not|never|no|nor|don't|dont|doesn't|do not|does not|cannot|can't|won't|"
                       r"shouldn't|mustn't|avoid|stop|instead of|rather than|no longer|without)\b|不要|别|禁止|不再")


def negates(text: str) -> bool:
    """Does the text say not to (or no longer) do something? "Never use npm" vs "Use npm"."""
    return bool(text) and _NEGATION.search(text) is not None


_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")   # a word with its contraction: "don't", "can't"
_DIGITS = re.compile(r"\d+")


@functools.cache
def _negators() -> tuple[frozenset, tuple[str, ...]]:
    """The negation lexicon split: whole English words, and CJK characters matched anywhere."""
    words = lexicons.entries("negation_words")
    return frozenset(w for w in words if w.isascii()), tuple(w for w in words if not w.isascii())


def negations(text: str) -> frozenset:
    """The negation words a text uses ("don't", "cannot" count as "not"): two close texts whose negations
    differ may say opposite things ("Use X" / "Do not use X"), so neither is a copy of the other."""
    folded = unicodedata.normalize("NFKC", text or "").casefold().replace("\u2019", "'")
    english, cjk = _negators()
    found = {"not" if w.endswith("n't") or w == "cannot" else w for w in _WORD.findall(folded) if w in english}
    return frozenset(found.union(c for c in cjk if c in folded))


# A CJK negator with the modal it is said with ("不要", "不再", "没有", "别再"): the whole phrase is the "not".
_CJK_NOT = re.compile(r"(?:[不没別别勿未无](?:要|再|会|能|可以|可|应该|应|该|必|是|有|用|得)?)")
_NT_BASE = {"wo": "will", "ca": "can", "ai": "is", "sha": "shall"}   # "won't" → "will", "can't" → "can"


# Texts a negation can move below the near-duplicate bound: in a sentence or two one "not" weighs (0.82 for "The API
# uses REST." / "… does not use REST."); in a longer text it is one word among many and the pair stays above it.
# Longer texts are not read for negated twins (`store.writes`, `store.lifecycle.negated_pairs`).
NEGATED_TWIN_CHARS = 500


def negation_count(text: str) -> int:
    """How many negation words a text says ("don't", "never", 不 …, each time it says one)."""
    folded = unicodedata.normalize("NFKC", text or "").casefold().replace("\u2019", "'")
    english, cjk = _negators()
    return sum(w in english for w in _WORD.findall(folded)) + sum(folded.count(c) for c in cjk)


@functools.lru_cache(maxsize=4096)
def said_words(text: str) -> frozenset:
    """The content words (index tokens less stop words) a text says with its negations taken out: "The API does
    not use REST." and "The API uses REST." say the same words, one negated. A negator said as a contraction
    leaves its verb ("mustn't" → "must"), a Chinese one its modal (不要使用 → 使用). `health` reads one text in
    many pairs."""
    folded = unicodedata.normalize("NFKC", text or "").casefold().replace("\u2019", "'")
    english, _ = _negators()

    def plain(match: re.Match) -> str:
        word = match.group()
        if word not in english:
            return word
        if word.endswith("n't"):
            return _NT_BASE.get(word[:-3], word[:-3])
        return "can" if word == "cannot" else " "

    folded = _CJK_NOT.sub(" ", _WORD.sub(plain, folded))
    return frozenset(t for t in tokenize(folded) if t not in stopwords())


def negated_twin(first: str, second: str) -> bool:
    """Does one text say what the other says, but negated ("The API uses REST." / "The API does not use REST.",
    "Use tabs." / "Don't use tabs.")? The same content words (`said_words`), a different number of negations.
    An embedder reads a short pair as far apart as a paraphrase (bge-small: 0.81 for that pair) because "not" is
    one word in four; the words say it is "X" against "not X", whatever the length. A pair that says no words
    besides its negations, or the same words with as many negations ("Use pnpm, never npm" / "Don't use npm, use
    pnpm": one each), is not."""
    words = said_words(first)
    return bool(words) and words == said_words(second) and negation_count(first) != negation_count(second)


def numbers(text: str) -> tuple[str, ...]:
    """The digit runs of a text, in order: "widget 14" and "widget 15" name different things however
    close their vectors are (NFKC, so full-width digits read as ASCII ones)."""
    return tuple(_DIGITS.findall(unicodedata.normalize("NFKC", text or "")))


def numbered_words(text: str) -> frozenset:
    """The words of a text that carry a digit, folded and stripped of punctuation: the values and numbered names
    it states ("5432", "db1", "02:00", "v1.4.2"; CJK runs cut off, so 从5分钟 gives "5")."""
    out = set()
    for match in _SEGMENT.finditer(unicodedata.normalize("NFKC", text or "")):
        word = (match.group("word") or "").strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP).casefold()
        if any(ch.isdigit() for ch in word):
            out.add(word)
    return frozenset(out)


def replaced_numbers(older: str, newer: str) -> int:
    """How many numbered words of `older` the `newer` text replaces with others of its own. A revision of one
    fact changes one value ("port 8080" → "port 9000", "02:00" → "04:30"), often naming the old one too; two
    replaced at once ("5432 on db1" → "5433 on db2") make another fact of the same shape, not a revision."""
    old, new = numbered_words(older), numbered_words(newer)
    return min(len(old - new), len(new - old))


# A restatement with one value replaced (`restates_value`): besides its numbered words (`numbered_words`), a text's
# values are its short quoted spans ("info", `main`, 「…」: a longer quote is a title or a saying, its words are text)
# and its code-like words (flags.yaml, LOG_LEVEL=debug, src/app.py: word characters joined by . _ / = :).
_QUOTED = re.compile(r"`([^`\n]{1,60})`|\"([^\"\n]{1,60})\"|“([^”\n]{1,60})”|「([^」\n]{1,60})」"
                     r"|(?<!\w)'([^'\n]{1,60})'(?!\w)")
_QUOTED_WORDS = 3
_VALUE_CHARS = r"a-zA-Z0-9_.\-/=:@#%+~"
_CODE_WORD = re.compile(rf"(?<![{_VALUE_CHARS}])[a-zA-Z0-9_\-@#%+~]*[a-zA-Z0-9][._/=:]+[a-zA-Z0-9][{_VALUE_CHARS}]*")
_NUMBER_RUN = re.compile(rf"(?<![{_VALUE_CHARS}])[{_VALUE_CHARS}]*\d(?:[{_VALUE_CHARS},]*[{_VALUE_CHARS}])?")
_EDGES = re.compile(rf"^[^{_VALUE_CHARS}]+|[^{_VALUE_CHARS}]+$")
_HEADING = re.compile(r"[ \t]*[:：]")                # "Step 3:", "Ticket 412:": a value that heads what follows
_COUNT_MARK = re.compile(r"(?i)(?:#|no\.|nr\.|n°)\d")    # "#42", "no.1": a number of an item
_WORD_BEFORE = re.compile(r"([a-zA-Z]+)[ \t]*$")
_WORD_AFTER = re.compile(r"[ \t]+([a-zA-Z]+)")
_AUXILIARIES = frozenset("is are was were be been has have had do does did will would can could should must may "
                         "might shall".split())
CODE_TEXT = 0.5         # `code_share` from which a text is code: two snippets one token apart are two pieces of code


def content_terms(tokens) -> frozenset:
    """The topical tokens: no stop words, no date words, no bare numbers."""
    stop, dates = stopwords(), date_words()
    return frozenset(t for t in tokens if t not in stop and t not in dates and any(ch.isalpha() for ch in t))


def word_count(text: str) -> int:
    """How many distinct content words a text says, in any script: its content terms, where CJK text, which the
    tokenizer gives as each character plus the bigrams it forms (no word boundaries: one word is counted two or three
    times), counts its distinct content bigrams at one word per two (a Chinese word is about two characters) and each
    character no bigram holds (a one-character run: 用 in "用 Redis 做") as one. "增量同步改用 CDC（Debezium），不再用
    updated_at 水位线，因为删除的行同步不到。" says 42 content terms and about 16 words, as many as the same sentence in
    English says (14): what `supersession.max_terms` caps, a text short enough to restate one fact."""
    tokens = tokenize(text or "")
    own = content_terms(tokens)
    bigrams = {t for t in own if len(t) == 2 and is_cjk(t[0]) and is_cjk(t[1])}
    paired = {ch for t in tokens if len(t) == 2 and is_cjk(t[0]) and is_cjk(t[1]) for ch in t}
    lone = {t for t in own if len(t) == 1 and is_cjk(t)}
    rest = {t for t in own if not any(is_cjk(ch) for ch in t)}
    return len(rest) + (len(bigrams) + 1) // 2 + len(lone - paired)


def _states_value(value: str, before: str, after: str) -> bool:
    """Is `value`, found between `before` and `after` (its text, NFKC, other values blanked), one the text states of
    its subject, rather than part of the name of what it is about? A value that heads its sentence (a timestamp, a
    list number, a speaker's line) or what follows it ("Step 3:", 第3步, 3号) names it, as does a count mark ("#42",
    "no.1"). After a word, so does a value followed by an auxiliary or another word ("widget 14 is …", "Issue 42
    blocks …", "service number 3 talks …"; a quantity read so too, "allows 100 requests", where nothing tells a verb
    from a noun), and a bare number after a lowercase word (an item of a series: "step 1", "fixed issue 42 in …",
    "port 8080"), not after a capitalised name (that name's version: "Postgres 13"). Stated are values after a stop
    word or a sign ("is 30 seconds", "after 24 hours", "timeout: 30", "to `trunk`"), versions and values with a unit
    glued on ("Python 3.12", "60s", "02:00"). Two texts that differ in a value that names are two entries of a list,
    two chat turns of one template, two things."""
    if (not content_terms(tokenize(_SENTENCE_END.split(before)[-1])) or _HEADING.match(after)
            or _COUNT_MARK.match(value) or before.endswith("第") or after.startswith(("号", "號"))):
        return False
    name, verb = _WORD_BEFORE.search(before), _WORD_AFTER.match(after)
    if not (name and content_terms(tokenize(name.group(1)))):
        return True
    if verb and (verb.group(1).casefold() in _AUXILIARIES or content_terms(tokenize(verb.group(1)))):
        return False
    return not (value.isdigit() and name.group(1).islower())


@functools.lru_cache(maxsize=1 << 16)   # `health` reads each of 10k memories in many pairs (fu32 D6)
def value_reading(text: str) -> tuple[frozenset, tuple[tuple[str, bool], ...]]:
    """(the subject words, ((value, stated), …) in text order) of a text: its values are its numbered words (`numbered_words`: "30",
    "02:00", "v3.11", "db1"), short quoted spans and code-like words (casefolded), each `stated` unless it names
    what the text is about (`_states_value`); the subject words are the content words of the rest."""
    normal = unicodedata.normalize("NFKC", text or "")
    spans = [(m.start(), m.end(), quote.strip().casefold()) for m in _QUOTED.finditer(normal)
             for quote in [next(g for g in m.groups() if g)] if len(quote.split()) <= _QUOTED_WORDS]
    rest = _blank(normal, spans)
    spans += [(m.start(), m.end(), m.group().rstrip(".:/-").casefold()) for m in _CODE_WORD.finditer(rest)]
    numbered = {_EDGES.sub("", word) for word in numbered_words(rest)}     # "5432。" → "5432"
    for m in _NUMBER_RUN.finditer(rest):
        word = m.group().rstrip(".:/-")
        if word.casefold() in numbered:
            spans.append((m.start(), m.start() + len(word), word.casefold()))
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda sp: (sp[0], sp[0] - sp[1])):
        if span[2] and not (kept and span[0] < kept[-1][1]):
            kept.append(span)
    rest = _blank(normal, kept)
    return content_terms(tokenize(rest)), tuple(
        (value, _states_value(value, rest[max(0, start - _CONTEXT):start], rest[end:end + _CONTEXT]))
        for start, end, value in kept)


_CONTEXT = 200   # characters on each side of a value `_states_value` reads: its sentence's words, not the whole text


def _blank(text: str, spans) -> str:
    """`text` with each (start, end, …) span replaced by as many spaces (in one pass: a pasted log holds thousands)."""
    out, at = [], 0
    for start, end, *_ in sorted(spans, key=lambda span: span[0]):
        start = max(start, at)
        if end <= start:
            continue
        out += [text[at:start], " " * (end - start)]
        at = end
    out.append(text[at:])
    return "".join(out)


def _untitled(text: str) -> str:
    """"title\nbody" less a title cut from the body itself (an untitled memory's first sentence, cut short: "The
    API request timeout for … is 3…"), whose last word would read as another word or value."""
    first, _, rest = text.partition("\n")
    cut = first.rstrip("…").rstrip()
    return rest if cut and rest.startswith(cut) else text


def _statement(text: str) -> bool:
    """Can the text state a value at all? A question asks one, and code is code (`CODE_TEXT`)."""
    return not asks(text) and code_share(text) < CODE_TEXT


def restates_value(older: str, newer: str) -> bool:
    """Does `newer` say what `older` says word for word but for one value ("The API request timeout is 30 seconds."
    → "… 60 seconds.")? The same subject words, two at least (a staging timeout is not a production one; "More
    detail on 1." / "… on 3." say nothing of what 1 and 3 are), as many negations, every value the same but one of
    `older`'s, replaced by one of `newer`'s in its place (values compared in order: "Worker 1 … replica 2 … 5s" /
    "Worker 2 … replica 1 … 3s" swaps two names besides), each stated of the subject (`_states_value`). A question
    states no value, nor does code, nor a text that adds one more ("also", 也: `adds`)."""
    older, newer = _untitled(older), _untitled(newer)
    if not (_statement(older) and _statement(newer)) or adds(older) or adds(newer):
        return False
    (words, theirs), (own, mine) = value_reading(older), value_reading(newer)
    if len(own) < 2 or own != words or negation_count(older) != negation_count(newer) or len(theirs) != len(mine):
        return False
    changed = [(old, new) for old, new in zip(theirs, mine) if old[0] != new[0]]
    return len(changed) == 1 and changed[0][0][1] and changed[0][1][1]


def value_subject(text: str) -> frozenset:
    """The subject words of a text that states a value of them (two at least, a stated value, not a question nor
    code): what an older memory must say word for word for `restates_value`; empty when the text states none."""
    own, values = value_reading(_untitled(text))
    return own if len(own) >= 2 and any(stated for _, stated in values) and _statement(text) else frozenset()


def swapped_value(first: str, second: str) -> bool:
    """Do two texts say the same thing but for one value: one word in place of another ("Deploys happen on
    Tuesdays" / "… Thursdays"), or one stated value (`restates_value`: "Python 3.11" / "3.12", "is 30s" / "is 60s")?
    Close vectors, yet not copies: either the same setting stated twice with two values (a contradiction, or a revision
    nobody linked), never two memories to merge. A counted name ("widget 14" / "widget 15") is two things, not this; nor
    are two texts one of which announces a change ("switched the proxy from nginx to Caddy" / "the proxy is Caddy,
    which replaced nginx": they differ in the change verb, and `store.supersession` reads their values)."""
    (marked_a, a, old), (marked_b, b, new) = _swap_reading(first), _swap_reading(second)
    if marked_a or marked_b or len(a & b) < 2:
        return False
    if a == b:      # one value for another ("3.11" / "3.12", "30s" / "60s", "is 20." / "is 50."), nothing else
        return restates_value(first, second)
    if not (old == new and len(a - b) == 1 and len(b - a) == 1):
        return False
    # The two words stand in one place: a word beside one is beside the other ("happen on Tuesdays" / "happen on
    # Thursdays"). A paraphrase that drops a word here and adds one there ("ask her before changing any module" /
    # "so ask Dana first") says the same thing in other words (fresh-user run fu24, D13: read as a contradiction).
    return bool(_beside(first, next(iter(a - b))) & _beside(second, next(iter(b - a))))


def _beside(text: str, word: str) -> set:
    """The words right before and right after `word` in the text (words as `_swap_reading` reads them), tagged by side."""
    words = _swap_words(text)
    out = set()
    for i, w in enumerate(words):
        if w == word:
            if i:
                out.add(("before", words[i - 1]))
            if i + 1 < len(words):
                out.add(("after", words[i + 1]))
    return out


@functools.lru_cache(maxsize=1 << 16)   # `health` reads each of 10k memories in many pairs (fu32 D6)
def _swap_words(text: str) -> tuple:
    return tuple(t for t in tokenize(text) if t.isalpha() and t not in stopwords())


@functools.lru_cache(maxsize=1 << 16)
def _swap_reading(text: str) -> tuple[bool, frozenset, frozenset]:
    """(announces a change, its words without numbers and stop words, its numbered words): `health` reads one
    text in many pairs."""
    return revision_marker(text) == "strong", frozenset(_swap_words(text)), numbered_words(text)


def cjk_words(text: str) -> frozenset:
    """The CJK tokens of a text (unigrams and bigrams, runs cut at Chinese function words, stop characters out):
    what an English embedder reads as unknown tokens, so two texts that differ only there have near-equal vectors."""
    stop = lexicons.word_set("cjk_stop_unigrams")
    return frozenset(t for t in tokenize(text or "", query=True) if t not in stop and any(is_cjk(ch) for ch in t))


_ANY_WORD = re.compile(r"\w+")


def around_secrets(text: str) -> str:
    """A text that holds redacted secrets as its words (folded) with each `[REDACTED:<type>]` marker in place; ""
    for a text without one. A marker hides what told two secrets apart and puts the same words in both vectors,
    so "staging: AWS_SECRET_ACCESS_KEY=[REDACTED:…]" and "prod: AWS_SECRET_ACCESS_KEY=[REDACTED:…]" read as one
    text: two texts with secrets are copies only when all of this agrees, and never a text with secrets and one
    without."""
    from supermemory.redact import MARKER   # where `redact` took a secret out (the module loads only when needed)

    text = text or ""
    markers = list(MARKER.finditer(text)) if "[REDACTED:" in text else []
    if not markers:
        return ""
    out, start = [], 0
    for marker in markers:
        out += _ANY_WORD.findall(unicodedata.normalize("NFKC", text[start:marker.start()]).casefold())
        out.append(marker.group())
        start = marker.end()
    return " ".join(out + _ANY_WORD.findall(unicodedata.normalize("NFKC", text[start:]).casefold()))


def blind_spots(text: str) -> tuple[frozenset, tuple[str, ...], frozenset, str]:
    """What the embedder barely sees in a text, as (negation words, numbers, CJK words, the words around its
    redacted secrets): two texts whose vectors are close but which differ in any of these say different things
    ("Use X" / "Do not use X", "widget 14" / "widget 15", a sentence with other Chinese words, the staging and
    the prod key of one name), so neither is a copy of the other (the `remember` hint, `health`'s merge list)."""
    return negations(text), numbers(text), cjk_words(text), around_secrets(text)


def asks(text: str) -> bool:
    """Does the text ask something (a question mark, ASCII or full-width)?"""
    return "?" in text or "？" in text


# Marks of source code: brackets, braces, `=`, `;`, `_`, and a dot that does not end a sentence (`a.b`, `.get`).
_CODE_CHARS = str.maketrans("", "", "(){}[]<>=;_")
_PROSE_LEVEL, _CODE_LEVEL = 0.03, 0.10   # marks per visible character: prose sits below, code above
_CODE_SAMPLE = 2000                       # characters read: enough to tell, cheap for every candidate of a recall
_CODE_PSEUDO = 40                         # unmarked characters assumed besides: a few marks in a short line are not code
_BLOCK_OPENERS = (":", "{", "(", ",", "[")  # a line ending so and an indented line after it: a block or a call goes on
_BLOCK_MARKS = 2                          # marks such a pair counts for


def code_share(text: str) -> float:
    """How much the text reads as source code: 0 for prose, 1 for code, linear between.

    Code memories match a question's words through identifiers and boilerplate shared by many functions,
    so lexical evidence means less there than in prose; the relevance model reads this to weigh its channels
    per memory (`retrieval/relevance.py`). Measured as code marks per visible character (plus a pseudo-count,
    so a bracket or two in a short line stays prose): prose and chat turns sit under 0.03, functions at
    0.08–0.2. Layout counts too (`_indented_blocks`): a short function has few brackets but its body is
    indented under a line that opens it, and without that it read as prose. String methods only (no regex):
    it runs for every candidate of every recall.
    """
    sample = text[:_CODE_SAMPLE]
    blanks = sample.count(" ") + sample.count("\n") + sample.count("\t")
    visible = len(sample) - blanks
    if visible <= 0:
        return 0.0
    dots = sample.count(".") - sample.count(". ") - sample.count(".\n") - sample.endswith(".")
    marks = len(sample) - len(sample.translate(_CODE_CHARS)) + max(0, dots) + _BLOCK_MARKS * _indented_blocks(sample)
    density = marks / (visible + _CODE_PSEUDO)
    return max(0.0, min(1.0, (density - _PROSE_LEVEL) / (_CODE_LEVEL - _PROSE_LEVEL)))


def _indented_blocks(sample: str) -> int:
    """How many lines end opening a block or a call (`_BLOCK_OPENERS`) with an indented line right after them:
    the layout of code in any curly or indented language; prose indents only lists, under a heading line."""
    if "\n " not in sample and "\n\t" not in sample:
        return 0
    lines = sample.split("\n")
    return sum(1 for line, after in zip(lines, lines[1:])
               if after[:1] in (" ", "\t") and after.strip() and line.rstrip().endswith(_BLOCK_OPENERS))
