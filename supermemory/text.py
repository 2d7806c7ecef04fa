"""The one tokenizer (index and query), token estimate, summary and chunking.

FTS5 is fed pre-tokenized, space-separated text and configured so that only white space
separates tokens (`FTS_TOKENIZE`). That keeps forms like `c++`, `e_acces`, `/etc/hosts` and
CJK bigrams intact, and every connection can read the index without registering anything.
"""
from __future__ import annotations

import functools
import math
import re
import unicodedata

# Bump whenever the tokens `index_text` produces change: stores rebuild their FTS index on open.
# 1: first release. 2: stems normalised (make/making → mak, movie/movies → movi).
TOKENIZER_VERSION = 2

# unicode61 with punctuation and symbols as token characters: a pure white-space splitter.
FTS_TOKENIZE = "unicode61 remove_diacritics 2 categories 'L* N* Co M* P* S*'"

_CJK_CLASS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul syllables
)
_SEGMENT = re.compile(rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>[^\s{_CJK_CLASS}]+)")
_CJK_CHAR = re.compile(rf"[{_CJK_CLASS}]")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_]+")
_ALNUM_RUN = re.compile(r"[^\W_]+")
_LEAD_STRIP = "\"'([{<`«“‘*"
_TRAIL_STRIP = "\"'.,;:!?)]}>`»”’*…"

STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing done for from had
    has have having he her here hers him his how i if in into is it its itself just me my
    no nor not of off on once only or our ours out over own same she should so some such
    than that the their theirs them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you
    your yours yourself about above after again against all am any because before below
    between both down during each few further more most other s t don now ever also
    d ll m o re ve y ain""".split()
)


def _with_stems(words: frozenset) -> frozenset:
    return words | {_stem(w) for w in words}


_VOWELS = frozenset("aeiouy")


def _undouble(base: str) -> str:
    if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz":
        return base[:-1]
    return base


# Irregular forms English speakers ask about in the base form ("when did she go" → "I went").
_IRREGULAR = {form: base for base, forms in {
    "go": "went gone", "see": "saw seen", "make": "made", "take": "took taken", "get": "got gotten",
    "give": "gave given", "come": "came", "buy": "bought", "think": "thought", "feel": "felt", "meet": "met",
    "run": "ran", "begin": "began begun", "write": "wrote written", "leave": "left", "keep": "kept",
    "tell": "told", "find": "found", "lose": "lost", "win": "won", "eat": "ate eaten", "draw": "drew drawn",
    "drive": "drove driven", "fly": "flew flown", "grow": "grew grown", "know": "knew known",
    "sing": "sang sung", "swim": "swam swum", "teach": "taught", "bring": "brought", "catch": "caught",
    "choose": "chose chosen", "spend": "spent", "send": "sent", "build": "built", "hold": "held",
    "hear": "heard", "pay": "paid", "say": "said", "sell": "sold", "sit": "sat", "sleep": "slept",
    "speak": "spoke spoken", "stand": "stood", "understand": "understood", "wake": "woke woken",
    "wear": "wore worn", "break": "broke broken", "fall": "fell fallen", "forget": "forgot forgotten",
    "hide": "hid hidden", "ride": "rode ridden", "rise": "rose risen", "shake": "shook shaken",
    "steal": "stole stolen", "throw": "threw thrown", "child": "children", "person": "people",
    "man": "men", "woman": "women", "foot": "feet", "tooth": "teeth", "mouse": "mice"}.items()
    for form in forms.split()}


def _stem(word: str) -> str:
    """Light suffix stemming for plain alphabetic words (applied identically at index and query).

    Plural, then -ing/-ed (only when a vowel is left: "string" stays), then the ending is
    normalised so inflections meet: a final "e" goes and a final "y" becomes "i"
    (make/making/makes → mak, movie/movies → movi, party/parties → parti).
    """
    if word in _IRREGULAR:
        word = _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses") or w.endswith(("ches", "shes", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5 and _VOWELS & set(w[:-3]):
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) > 4 and _VOWELS & set(w[:-2]):
        w = _undouble(w[:-2])
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("y"):
        w = w[:-1] + "i"
    return w


STOPWORDS = _with_stems(STOPWORDS)

# Chinese function words, dropped from queries only. Particles and question words never carry
# the topic, and the bigrams they form with their neighbours ("何配" in 如何配置, "慢怎" in 太慢怎么)
# are cross-word artefacts no memory contains: with the query's highest IDF they would drown the
# real terms' coverage. So a query's CJK run is cut at them before unigrams and bigrams are made.
CJK_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀嘛么什怎哪")
CJK_STOP_BIGRAMS = frozenset(
    "如何 为何 为什 我们 你们 他们 这个 那个 一个 是否 可以 应该 需要 时候 怎样 多少 有没 没有 是不".split())
CJK_STOP_UNIGRAMS = frozenset("是在和与或也都就这那个把被给让我你他她它们有要会能一如何为")


def _split_query_cjk(run: str) -> list[str]:
    """Cut a query's CJK run at function characters and stop bigrams (greedy, left to right)."""
    pieces, current, i = [], [], 0
    while i < len(run):
        if run[i:i + 2] in CJK_STOP_BIGRAMS:
            pieces.append("".join(current))
            current, i = [], i + 2
        elif run[i] in CJK_FUNCTION_CHARS:
            pieces.append("".join(current))
            current, i = [], i + 1
        else:
            current.append(run[i])
            i += 1
    pieces.append("".join(current))
    return [p for p in pieces if p]


def normalize(text: str) -> str:
    """NFKC + case folding, the normal form for matching."""
    return unicodedata.normalize("NFKC", text).casefold()


def _word_tokens(raw: str, out: list[str]) -> None:
    word = raw.strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP)
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if not word:
        return
    folded = word.casefold()
    alnum_only = word.isalnum()
    parts = _CAMEL_PARTS.findall(word) if any(c.isalnum() for c in word) else []
    if alnum_only and len(parts) <= 1:
        out.append(_stem(folded) if folded.isalpha() else folded)
        return
    # A compound: keep the whole form, the joined alphanumerics, and each meaningful part.
    out.append(folded)
    joined = "".join(_ALNUM_RUN.findall(folded))
    if joined and joined != folded:
        out.append(joined)
    if joined.isalpha() and _stem(joined) not in (joined, folded):
        out.append(_stem(joined))   # so the identifier typed as one plain word ("memorystore") finds it
    for part in parts:
        part = part.casefold()
        if len(part) >= 2 or part.isdigit():
            out.append(_stem(part) if part.isalpha() else part)


def _cjk_tokens(run: str, out: list[str]) -> None:
    out.extend(run)
    out.extend(run[i:i + 2] for i in range(len(run) - 1))


def tokenize(text: str, *, query: bool = False) -> list[str]:
    """Tokens of `text` for indexing and querying alike (order kept, repeats kept).

    CJK runs give unigrams plus adjacent bigrams; identifiers give their whole form plus their
    camelCase / snake_case / kebab-case / dotted parts; plain words are lightly stemmed.
    With `query`, CJK runs are first cut at Chinese function words (see CJK_FUNCTION_CHARS).
    """
    if not text:
        return []
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for match in _SEGMENT.finditer(text):
        cjk = match.group("cjk")
        if cjk:
            for piece in (_split_query_cjk(cjk.casefold()) if query else [cjk.casefold()]):
                _cjk_tokens(piece, out)
        else:
            _word_tokens(match.group("word"), out)
    return out


def index_text(*parts: str) -> str:
    """Space-joined tokens of all parts: what the FTS5 column stores."""
    tokens: list[str] = []
    for part in parts:
        if part:
            tokens.extend(tokenize(part))
    return " ".join(tokens)


def query_terms(query: str, *, max_terms: int = 64) -> list[str]:
    """Distinct query tokens without stop words (all of them if only stop words remain)."""
    tokens = tokenize(query, query=True)
    seen: dict[str, None] = {}
    for tok in tokens:
        if tok not in STOPWORDS and tok not in CJK_STOP_UNIGRAMS:
            seen.setdefault(tok, None)
    if not seen:
        for tok in tokenize(query):
            seen.setdefault(tok, None)
    return list(seen)[:max_terms]


# Wording that says a fact changed: "no longer", "was replaced by", "moved from X to Y", 改用 …
_REVISION = re.compile(
    r"\b(?:no longer|not any ?more|anymore|replaced|instead|superseded|deprecated|is dead|"
    r"(?:moved|switched|migrated) (?:from|to|off|away|over)|"
    r"(?:was|were|has been|have been|got|is|are) (?:lowered|raised|changed|removed|dropped|deleted|deprecated|"
    r"replaced|shut down|retired|disabled|renamed|turned off|reverted)|"
    r"now (?:use|uses|run|runs|is|are|goes|go|lives|live))\b"
    r"|不再|已经改|已改|改用|换成|废弃|弃用|取代|已经不|不要再", re.IGNORECASE)


def has_revision_marker(text: str) -> bool:
    """Does this text announce that something changed (so an older, similar memory is stale)?"""
    return bool(text) and _REVISION.search(text) is not None


def revision_terms(text: str, *, reach: int = 40) -> frozenset:
    """The words around each change marker: what the text says changed ("HS256" in "no longer
    sign JWTs with HS256"). Empty when the text announces no change.
    """
    out: set[str] = set()
    for match in _REVISION.finditer(text or ""):
        window = text[max(0, match.start() - reach): match.end() + reach]
        out.update(t for t in tokenize(window) if t not in STOPWORDS)
    return frozenset(out)


# A query that asks what is current expects that something may have changed since it was written down.
_ASKS_CHANGE = re.compile(r"\b(?:still|any ?more|any longer|nowadays|these days|currently|current|now|latest|"
                          r"replaced|replacement)\b|还在|还是|仍然|现在|目前|最新", re.IGNORECASE)


def asks_about_change(query: str) -> bool:
    """Does the query ask whether something still holds ("do we still…", "what replaced…", 现在…)?"""
    return _ASKS_CHANGE.search(query or "") is not None


# Dates say when, not what: not names, and not what makes two notes about the same thing.
DATE_WORDS = frozenset("""am pm jan feb mar apr jun jul aug sep sept oct nov dec january february march april may
    june july august september october november december monday tuesday wednesday thursday friday saturday
    sunday today yesterday tomorrow""".split())


def named_terms(query: str) -> list[tuple[tuple[str, ...], ...]]:
    """The names a query spells: capitalised ("Azure"), mixed case ("GraphQL") or all caps ("HPA")
    words, adjacent ones grouped into one name ("Azure Functions", "Google Play"). Each word comes as
    the index tokens that would spell it in a memory (whole, joined and stemmed forms, not parts).
    A sentence's first word counts only with inner capitals ("Celery beat…" is a sentence start);
    "I've", "I'm" and dates are not names.
    """
    return list(_named_terms(query))


@functools.lru_cache(maxsize=256)   # recall asks twice per query (candidates, then the gate)
def _named_terms(query: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
    phrases: list[list[tuple[str, ...]]] = []
    text = unicodedata.normalize("NFKC", query or "")
    sentence_start, adjacent = True, False
    for match in _SEGMENT.finditer(text):
        raw = match.group("word") or ""
        core = raw.strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP)
        starts, sentence_start = sentence_start, raw.endswith((".", "?", "!", ":"))
        forms = _word_name_forms(core, starts)
        if forms is None:
            adjacent = False
            continue
        if adjacent:
            phrases[-1].append(forms)
        else:
            phrases.append([forms])
        adjacent = not raw.endswith((",", ";", ".", "?", "!", ":", ")"))
    return tuple(tuple(p) for p in phrases)


def leading_word(query: str) -> tuple[str, tuple[str, ...]] | None:
    """A query's capitalised first word, when `named_terms` leaves it out as a sentence start
    ("Kotlin coroutine scope"): (the word folded, its index forms), or None. Whether it is a name
    takes a vocabulary (`embed.vocabulary_words`): an everyday word starts sentences.
    """
    match = _SEGMENT.match(unicodedata.normalize("NFKC", query or "").lstrip())
    core = (match.group("word") or "").strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP) if match else ""
    if not core.isalpha() or not core[0].isupper() or any(c.isupper() for c in core[1:]):
        return None
    forms = _word_name_forms(core, sentence_start=False)
    return (core.casefold(), forms) if forms else None


def name_forms(query: str) -> list[str]:
    """Every index form of every name in the query (and of a capitalised first word), for one
    document-frequency lookup."""
    lead = leading_word(query)
    return sorted({form for name in named_terms(query) for word in name for form in word}
                  | set(lead[1] if lead else ()))


def _word_name_forms(core: str, sentence_start: bool) -> tuple[str, ...] | None:
    if not core or not any(c.isupper() for c in core):
        return None
    if sentence_start and not any(c.isupper() for c in core[1:]):
        return None
    folded = core.casefold()
    if re.split(r"['’]", folded)[0] in STOPWORDS or folded in DATE_WORDS:
        return None
    joined = "".join(_ALNUM_RUN.findall(folded))
    forms = {folded, joined, _stem(folded), _stem(joined)} - {""}
    return None if forms & STOPWORDS else tuple(sorted(forms))


# Words that, in a question put to a project's own memory, name no subject: the project itself,
# "the file", "the thing", the verbs of doing anything at all. A query made only of these, stop
# words and pronouns ("any notes on the project", "which file should I change") matches whatever
# memories happen to share its commonest words; there is nothing in it to be relevant to.
GENERIC_WORDS = _with_stems(frozenset("""project projects repo repository codebase code thing things stuff
    something anything everything file files use using used change changes changed make do work way
    ways approach new old current good better best nice right wrong decide decided decision decisions
    note notes info information detail details idea ideas tip tips help need needs want know tell show
    give get put go remember say think look question questions problem problems one ones kind sort part
    like ok okay fine whatever etc again lately recently latest last next still""".split()))
GENERIC_CJK = ("项目", "代码", "文件", "东西", "事情", "问题", "方法", "办法", "使用", "比较", "更好", "最好",
               "决定", "笔记", "记录", "情况", "一下", "建议", "推荐", "注意", "现在", "目前", "最近",
               "用", "好", "新", "旧", "里", "上", "下", "中", "些", "它", "其", "呢", "该", "做", "弄", "搞")
_GENERIC_CJK_LONGEST_FIRST = sorted(GENERIC_CJK, key=len, reverse=True)
# A pronoun as the last word points at something the query never names ("how do I test it").
_DANGLING = frozenset("it that this these those them".split())


def vague_query(query: str) -> tuple[str, ...] | None:
    """The query's words when it names nothing specific, else None.

    Specific means a word that is neither a stop word nor in GENERIC_WORDS (for Chinese: characters
    left after function and generic words are cut away). A query with no specific word is vague, and
    so is one with a single specific word whose object is a dangling pronoun ("how do we run it").
    """
    text = unicodedata.normalize("NFKC", query or "")
    specific, words, last = set(), [], ""
    for match in _SEGMENT.finditer(text):
        cjk = match.group("cjk")
        if cjk:
            for piece in _split_query_cjk(cjk):
                words.append(piece)
                for generic in _GENERIC_CJK_LONGEST_FIRST:
                    piece = piece.replace(generic, " ")
                if any(c.strip() and c not in CJK_STOP_UNIGRAMS for c in piece):
                    specific.update(piece.split())
            last = ""
            continue
        tokens: list[str] = []
        _word_tokens(match.group("word"), tokens)
        if not tokens:
            continue
        words.append(match.group("word").strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP))
        last = tokens[0]
        if any(t not in STOPWORDS and t not in GENERIC_WORDS for t in tokens):
            specific.add(tokens[0])
    if not words:
        return None
    if not specific or (len(specific) == 1 and last in _DANGLING):
        return tuple(words)
    return None


def fts_match(terms: list[str]) -> str:
    """An FTS5 MATCH expression that searches every term as literal text (never a syntax error)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def is_cjk(char: str) -> bool:
    """Is this one character CJK (kana, ideograph, hangul)?"""
    return _CJK_CHAR.match(char) is not None


def cjk_share(text: str) -> float:
    """Share of CJK characters among the non-space characters of `text` (0..1)."""
    letters = sum(1 for c in text if not c.isspace())
    return len(_CJK_CHAR.findall(text)) / letters if letters else 0.0


def estimate_tokens(text: str) -> int:
    """Rough LLM token count: one per CJK character, one per ~4 other characters."""
    if not text:
        return 0
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")


def summarize(text: str, *, max_chars: int = 200) -> str:
    """The first sentence (no model involved), capped at `max_chars`."""
    text = (text or "").strip()
    if not text:
        return ""
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip() or text
    if len(first) > max_chars:
        first = first[: max_chars - 1].rstrip() + "…"
    return first


def _split_to_fit(piece: str, max_tokens: int, level: int = 0) -> list[str]:
    """Split a piece by blank line → line → sentence → hard cut until each part fits."""
    if estimate_tokens(piece) <= max_tokens:
        return [piece]
    splitters = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?。！？])\s*"))
    for index in range(level, len(splitters)):
        parts = [p for p in splitters[index].split(piece) if p.strip()]
        if len(parts) > 1:
            out: list[str] = []
            for part in parts:
                out.extend(_split_to_fit(part, max_tokens, index + 1))
            return out
    # Hard split: by characters, sized so each slice fits the token budget.
    ratio = max(1, len(piece) // max(1, estimate_tokens(piece)))
    step = max(1, max_tokens * ratio)
    return [piece[i:i + step] for i in range(0, len(piece), step)]


def chunk(text: str, *, max_tokens: int = 260, overlap_tokens: int = 48) -> list[str]:
    """Split long text into retrievable chunks of at most ~`max_tokens`, overlapping a little.

    Short text comes back as one chunk, unchanged.
    """
    text = text or ""
    if estimate_tokens(text) <= max_tokens:
        return [text]
    atoms = [a.strip() for a in _split_to_fit(text, max_tokens) if a.strip()]
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for atom in atoms:
        cost = estimate_tokens(atom)
        if current and size + cost > max_tokens:
            chunks.append("\n".join(current))
            tail: list[str] = []
            tail_size = 0
            for prev in reversed(current):
                prev_cost = estimate_tokens(prev)
                if tail_size + prev_cost > overlap_tokens or tail_size + prev_cost + cost > max_tokens:
                    break
                tail.insert(0, prev)
                tail_size += prev_cost
            current, size = tail, tail_size
        current.append(atom)
        size += cost
    if current:
        chunks.append("\n".join(current))
    return chunks
