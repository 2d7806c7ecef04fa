"""A Chinese–English glossary of software terms, so a query in one language reaches memories in the other.

Developers write memories in both languages ("部署前要先跑 alembic upgrade head", "Staging deploys
on every merge") and ask in either, often mixed (an English tool name inside a Chinese question). BM25 cannot bridge the
two, and bge-small reads no Chinese. Query-side only, so no index change: a query's glossed words
also match their translations (`cross_terms`), and the embedder is given the query with its known
Chinese words in English (`english_gloss`). A translation stands in for the word it translates, it
never adds weight of its own to the query.

The table is `lexicons/glossary.txt`: per line one Chinese word, then English words, tab-separated
(the first is what the embedder sees). Single Chinese characters only translate into English (as
index tokens they would match inside unrelated words); words of two or more characters go both ways.

English spelled two ways is bridged the same way (`abbreviations`, `lexicons/abbreviations.txt`): "e2e" also matches
"end-to-end", "k8s" "Kubernetes", "db" "database", and back.
"""
from __future__ import annotations

import functools
import os
import re
import unicodedata
from typing import NamedTuple

from supermemory.text import lexicons
from supermemory.text.tokenizer import _SEGMENT, _split_query_cjk, stopwords, tokenize

_LETTERS = re.compile(r"[^\W\d_]+")   # the words of an English segment (`product_pages`: product, pages)


class _Tables(NamedTuple):
    zh_to_en: dict[str, tuple[str, ...]]   # Chinese word → English index tokens
    en_to_zh: dict[str, tuple[tuple[str, str | None], ...]]   # English index token → (Chinese word of two
    #                                        characters or more, the English word it must be an inflection of or None)
    gloss: dict[str, str]                  # Chinese word → the English word the embedder reads
    longest: int                           # characters in the longest Chinese word


@functools.lru_cache(maxsize=1)
def _tables() -> _Tables:
    """The glossary parsed once per process."""
    zh_to_en: dict[str, tuple[str, ...]] = {}
    en_to_zh: dict[str, list[tuple[str, str | None]]] = {}
    gloss: dict[str, str] = {}
    stop = stopwords()
    for word, *written in lexicons.table("glossary"):
        english = [e.lstrip("=") for e in written]
        tokens = tuple(dict.fromkeys(t for e in english for t in tokenize(e) if t not in stop))
        zh_to_en[word] = tokens
        gloss[word] = english[0]
        if len(word) >= 2:
            for mark, spelled in zip(written, english):
                for token in tokenize(spelled):
                    if token not in stop and (word, None) not in en_to_zh.get(token, ()):
                        en_to_zh.setdefault(token, []).append((word, spelled.casefold() if mark[0] == "=" else None))
    longest = max(len(w) for w in zh_to_en)
    return _Tables(zh_to_en, {k: tuple(v) for k, v in en_to_zh.items()}, gloss, longest)


_INFLECTIONS = frozenset({"", "e", "s", "es", "ed", "d", "ing", "ings", "y", "ies", "ied"})


def _inflects(word: str, base: str) -> bool:
    """Is `word` `base` or an inflection of it (production, productions), not another word of its stem (product)?"""
    shared = len(os.path.commonprefix([word, base]))
    return word[shared:] in _INFLECTIONS and base[shared:] in _INFLECTIONS


def _chinese_words(run: str) -> list[tuple[int, str]]:
    """Glossary words in a CJK run, longest match first, left to right: (offset, word)."""
    tables = _tables()
    found, i = [], 0
    while i < len(run):
        for size in range(min(tables.longest, len(run) - i), 0, -1):
            if run[i:i + size] in tables.zh_to_en:
                found.append((i, run[i:i + size]))
                i += size
                break
        else:
            i += 1
    return found


@functools.lru_cache(maxsize=1)
def abbreviations() -> dict[str, tuple[tuple[str, ...], ...]]:
    """Index token → the other spellings of its word (`lexicons/abbreviations.txt`: "e2e" ↔ "end-to-end", "k8s" ↔
    "kubernetes"), each as the index tokens that must all be present: an abbreviation gives each expansion, a one-word
    expansion gives the abbreviation."""
    stop = stopwords()
    out: dict[str, set] = {}
    for short, *long in lexicons.table("abbreviations"):
        abbreviation = tokenize(short)[0]
        for written in long:
            one_way, expansion = written.startswith(">"), written.lstrip(">")
            tokens = tokenize(expansion)
            whole = "-" in expansion and " " not in expansion
            form = (tokens[0],) if whole else tuple(dict.fromkeys(t for t in tokens if t not in stop))
            out.setdefault(abbreviation, set()).add(form)
            if len(form) == 1 and not one_way:
                out.setdefault(form[0], set()).add((abbreviation,))
    return {token: tuple(sorted(forms)) for token, forms in out.items()}


def _index_form(word: str) -> tuple[str, ...]:
    """How a Chinese word appears among a memory's index tokens: one token, or its adjacent bigrams."""
    return (word,) if len(word) <= 2 else tuple(word[i:i + 2] for i in range(len(word) - 1))


@functools.lru_cache(maxsize=256)
def cross_terms(query: str) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Query token → its translations, each as the index tokens that must all be present.

    Chinese words give English tokens (`编译` → build, compile) for each of their own tokens; English
    tokens give the Chinese words that translate them (`deploy` → 部署).
    """
    tables = _tables()
    out: dict[str, set] = {}
    text = unicodedata.normalize("NFKC", query or "").casefold()
    for match in _SEGMENT.finditer(text):
        cjk, word = match.group("cjk"), match.group("word")
        if cjk:
            for _, zh in _chinese_words(cjk):
                own = tokenize(zh, query=True) or [zh]
                for token in own:
                    out.setdefault(token, set()).update((en,) for en in tables.zh_to_en[zh])
        elif word:
            spelled = abbreviations()
            parts = _LETTERS.findall(word)
            for token in tokenize(word):
                for zh, only in tables.en_to_zh.get(token, ()):
                    if only is None or any(_inflects(part, only) for part in parts):
                        out.setdefault(token, set()).add(_index_form(zh))
                for form in spelled.get(token, ()):
                    out.setdefault(token, set()).add(form)
    return {k: tuple(sorted(v)) for k, v in out.items() if v}


@functools.lru_cache(maxsize=256)   # asked twice per recall: the embedder's text, then the CJK share
def english_gloss(query: str) -> str:
    """The query with every glossary word of its Chinese runs replaced by English, for the embedder;
    the Chinese function words around them go (they only add noise to an English reading)."""
    gloss = _tables().gloss
    text = unicodedata.normalize("NFKC", query or "")

    def replace(match: re.Match) -> str:
        run = match.group("cjk")
        if not run:
            return match.group(0)
        words = _chinese_words(run.casefold())
        if not words:
            return run
        pieces, last = [], 0
        for offset, zh in words:
            pieces.extend(_split_query_cjk(run[last:offset]))
            pieces.append(gloss[zh])
            last = offset + len(zh)
        pieces.extend(_split_query_cjk(run[last:]))
        return " " + " ".join(pieces) + " "

    return re.sub(r"\s+", " ", _SEGMENT.sub(replace, text)).strip()
