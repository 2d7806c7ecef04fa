"""The names a query spells ("Azure Functions", "GraphQL", "HPA"), their index forms, and a name asked about alone.

A question such as "who is Lena?" or 李雷是谁 asks about its name and nothing else (`asked_name`). They are what
the name check of recall looks up (`retrieval.query`)."""
from __future__ import annotations

import functools
import re
import unicodedata

from supermemory.text.tokenizer import _ALNUM_RUN, _LEAD_STRIP, _SEGMENT, _TRAIL_STRIP, _stem, stopwords
from supermemory.text.traits import date_words


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
    stop = stopwords()
    if re.split(r"['’]", folded)[0] in stop or folded in date_words():
        return None
    joined = "".join(_ALNUM_RUN.findall(folded))
    forms = {folded, joined, _stem(folded), _stem(joined)} - {""}
    return None if forms & stop else tuple(sorted(forms))


# A question about a name and nothing else: who someone is, what they do, what the store knows of them.
_ABOUT_NAME = (
    re.compile(r"(?i)^\s*(?:who\s*(?:is|was|are|'s|’s)|tell\s+me\s+about|what\s+do\s+(?:we|you|i)\s+know\s+about|"
               r"(?:anything|everything)\s+(?:on|about))\s+(?P<name>.+?)\s*[?？.!]*\s*$"),
    re.compile(r"(?i)^\s*what\s+(?:does|did)\s+(?P<name>.+?)\s+do\s*[?？.!]*\s*$"),
    re.compile(r"^\s*(?:谁是|关于)(?P<name>[\u4e00-\u9fff]{2,4})[？?。！!]*\s*$"),
    re.compile(r"^\s*(?P<name>[\u4e00-\u9fff]{2,4}?)(?:是谁|是做什么的|负责什么)[？?。！!]*\s*$"),
)


def asked_name(query: str) -> str | None:
    """The name a query asks about and nothing else ("who is Lena?", "what does Dana do?", "tell me about Priya",
    李雷是谁), or None. An English name is capitalised words only ("who is the DBA?" asks about no name); a Chinese
    one is a run of two to four characters. Such a question's one content word is what it is about, so it is no short
    query of little evidence (`retrieval.query` counts it as full)."""
    text = unicodedata.normalize("NFKC", query or "")
    for pattern in _ABOUT_NAME:
        m = pattern.match(text)
        if not m:
            continue
        name = m.group("name").strip()
        if not name.isascii():
            return name if all("\u4e00" <= c <= "\u9fff" for c in name) else None
        words = name.split()
        found = [word for phrase in named_terms(f"about {name}") for word in phrase]
        return name if words and len(found) == len(words) else None
    return None

