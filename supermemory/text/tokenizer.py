"""The one tokenizer, for the index and for queries alike, and the FTS5 MATCH expression built from it.

FTS5 is fed pre-tokenized, space-separated text and configured so that only white space
separates tokens (`FTS_TOKENIZE`). That keeps forms like `c++`, `e_acces`, `/etc/hosts` and
CJK bigrams intact, and every connection can read the index without registering anything.
Word lists (stop words, Chinese function words, irregular forms) live in `lexicons/`; English words get
Snowball stems (PyStemmer).
"""
from __future__ import annotations

import functools
import re
import unicodedata

from supermemory.text import lexicons

# Bump whenever the tokens `index_text` produces change: stores rebuild their FTS index on open.
# 1: first release. 2: stems normalised (make/making → mak, movie/movies → movi).
# 3: Snowball English stems (PyStemmer) replace the hand-written suffix rules.
TOKENIZER_VERSION = 3

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

# Snowball's English stemmer (PyStemmer, the C build of snowballstem.org's algorithms), imported on the
# first word stemmed: never on the `initialize` / SessionStart path, which tokenizes nothing.
_STEM_CACHE = 1 << 16


@functools.cache
def _snowball():
    import Stemmer   # PyStemmer

    return Stemmer.Stemmer("english").stemWord


def _with_stems(words: frozenset) -> frozenset:
    return words | {_stem(w) for w in words}


@functools.cache
def stopwords() -> frozenset:
    """English stop words plus their stems (`lexicons/stopwords.txt`): dropped from queries, never a name."""
    return _with_stems(lexicons.word_set("stopwords"))


# Module constants read from lexicons on first access (`from supermemory.text.tokenizer import STOPWORDS`).
_LAZY = {
    "STOPWORDS": stopwords,
    # Chinese function words, dropped from queries only. Particles and question words never carry
    # the topic, and the bigrams they form with their neighbours ("何配" in 如何配置, "慢怎" in 太慢怎么)
    # are cross-word artefacts no memory contains: with the query's highest IDF they would drown the
    # real terms' coverage. So a query's CJK run is cut at them before unigrams and bigrams are made.
    "CJK_FUNCTION_CHARS": lambda: lexicons.word_set("cjk_function_chars"),
    "CJK_STOP_BIGRAMS": lambda: lexicons.word_set("cjk_stop_bigrams"),
    "CJK_STOP_UNIGRAMS": lambda: lexicons.word_set("cjk_stop_unigrams"),
}


__getattr__ = lexicons.lazy_constants(__name__, _LAZY)


@functools.lru_cache(maxsize=_STEM_CACHE)
def _stem(word: str) -> str:
    """The Snowball English stem of a plain alphabetic word (applied identically at index and query).

    Other forms (digits, symbols, identifiers with punctuation) are returned as they are. Snowball
    meets inflections (make/making/makes → make, movie/movies → movi, party/parties → parti) but not
    irregular forms, so those first become their base ("went" → "go", `lexicons/irregular_forms.txt`:
    on LoCoMo's chat turns that is worth about a point of R@5, bench/RESULTS.md).
    """
    if not word.isalpha():
        return word
    return _snowball()(lexicons.irregular_forms().get(word, word))


def _split_query_cjk(run: str) -> list[str]:
    """Cut a query's CJK run at function characters and stop bigrams (greedy, left to right)."""
    stop_bigrams = lexicons.word_set("cjk_stop_bigrams")
    function_chars = lexicons.word_set("cjk_function_chars")
    pieces, current, i = [], [], 0
    while i < len(run):
        if run[i:i + 2] in stop_bigrams:
            pieces.append("".join(current))
            current, i = [], i + 2
        elif run[i] in function_chars:
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


def _word_units(raw: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One white-space word's tokens as (whole forms, parts). A plain word is one whole form and no parts; a
    compound (`store.recall`, `is_open`, `MemoryStore`, `self-care`) keeps its whole form, its joined
    alphanumerics and their stem as whole forms, and each meaningful camelCase / snake_case / dotted part."""
    word = raw.strip(_LEAD_STRIP).rstrip(_TRAIL_STRIP)
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if not word:
        return (), ()
    folded = word.casefold()
    alnum_only = word.isalnum()
    parts = _CAMEL_PARTS.findall(word) if any(c.isalnum() for c in word) else []
    if alnum_only and len(parts) <= 1:
        return (_stem(folded) if folded.isalpha() else folded,), ()
    wholes = [folded]
    joined = "".join(_ALNUM_RUN.findall(folded))
    if joined and joined != folded:
        wholes.append(joined)
    if joined.isalpha() and _stem(joined) not in (joined, folded):
        wholes.append(_stem(joined))   # so the identifier typed as one plain word ("memorystore") finds it
    kept = tuple((_stem(p) if p.isalpha() else p) for p in (part.casefold() for part in parts)
                 if len(p) >= 2 or p.isdigit())
    return tuple(wholes), kept


def _word_tokens(raw: str, out: list[str], compounds: dict | None = None) -> None:
    wholes, parts = _word_units(raw)
    out.extend(wholes)
    out.extend(parts)
    if compounds is not None and parts:
        for whole in wholes:
            compounds.setdefault(whole, parts)


def _cjk_tokens(run: str, out: list[str]) -> None:
    out.extend(run)
    out.extend(run[i:i + 2] for i in range(len(run) - 1))


def tokenize(text: str, *, query: bool = False, compounds: dict | None = None) -> list[str]:
    """Tokens of `text` for indexing and querying alike (order kept, repeats kept).

    CJK runs give unigrams plus adjacent bigrams; identifiers give their whole form plus their
    camelCase / snake_case / kebab-case / dotted parts; plain words get their Snowball stem.
    With `query`, CJK runs are first cut at Chinese function words (see CJK_FUNCTION_CHARS).
    With `compounds`, each whole form of a compound word is recorded there → that word's parts.
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
            _word_tokens(match.group("word"), out, compounds)
    return out


def index_text(*parts: str) -> str:
    """Space-joined tokens of all parts: what the FTS5 column stores."""
    tokens: list[str] = []
    for part in parts:
        if part:
            tokens.extend(tokenize(part))
    return " ".join(tokens)


def query_terms(query: str, *, max_terms: int = 64, compounds: dict | None = None) -> list[str]:
    """Distinct query tokens without stop words (all of them if only stop words remain).

    :param compounds: filled, in the same pass, with each compound word's whole forms → its parts, so that
        coverage can read a compound's spellings as one word (`Query.coverage`).
    """
    stop, cjk_stop = stopwords(), lexicons.word_set("cjk_stop_unigrams")
    tokens = tokenize(query, query=True, compounds=compounds)
    seen: dict[str, None] = {}
    for tok in tokens:
        if tok not in stop and tok not in cjk_stop:
            seen.setdefault(tok, None)
    if not seen:
        for tok in tokenize(query):
            seen.setdefault(tok, None)
    return list(seen)[:max_terms]


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
