"""A recall query analysed once: terms, translations, what the embedder reads, language share, names, intent."""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from supermemory.retrieval.relevance import FEW_TERMS
from supermemory.text import (answer_types, asked_name, cjk_share, cross_terms, english_gloss, is_cjk, leading_word,
                              name_forms, named_terms, query_terms, tokenize)

CJK_CHARACTER_WEIGHT = 0.3   # a lone Chinese character's share of its IDF in coverage (`Query.cjk_fallbacks`)

# A word only code or a log spells, besides the compounds the tokenizer finds (`is_open`, `MemoryStore`,
# `store.recall`, `self-care`): backticks, a call's `()`, an all-caps token of four or more characters with at
# least two capitals (`EADDRNOTAVAIL`, `HTTP2`), a token of four or more mixing letters and digits (`e11000`).
_CODE_WORD = re.compile(r"`|\(\)|\b(?=[A-Za-z0-9]*[A-Z]{2})[A-Z0-9]{4,}\b"
                        r"|\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{4,}\b")


@dataclass(frozen=True)
class Query:
    """What every later stage needs to know about the query text, computed once.

    :param glossary: `ranking.glossary`: Chinese ↔ English software terms bridge the two languages.
    """

    text: str
    terms: list[str]
    cross: dict                      # query term → translations (tuples of index tokens)
    forms: list[tuple]               # the translations, each a tuple of index tokens, in order
    embedded: str                    # what the embedder reads (translated Chinese words in English)
    names: list                      # capitalised names, as word forms
    lead: tuple | None               # a capitalised first word: (word, forms)
    name_lookup: list[str] = field(default_factory=list)   # index tokens whose document frequency names need
    compounds: dict = field(default_factory=dict)   # a compound word's whole forms → its parts (see `coverage`)

    @classmethod
    def analyse(cls, text: str, *, glossary: bool = True) -> "Query":
        compounds: dict = {}
        terms = query_terms(text, compounds=compounds)
        cross = cross_terms(text) if glossary else {}
        return cls(text=text, terms=terms, cross=cross, forms=_forms(terms, cross),
                   embedded=english_gloss(text) if cross else text,
                   names=named_terms(text), lead=leading_word(text), name_lookup=name_forms(text),
                   compounds=compounds)

    @functools.cached_property
    def agent_noun_bases(self) -> dict:
        """An English term that may name a doer (`linter`, `formatt` of formatter, `logger`) → the index token of the
        verb or noun it is made from (`lint`, `format`, `log`): the stemmer keeps `-er` (linter ≠ linting), so a
        question about "the linter" would miss a note that says "use ruff for linting" (`with_agent_noun_bases`)."""
        out = {}
        for t in self.terms:
            if not (t.isascii() and t.isalpha() and len(t) >= 5):
                continue
            base = t[:-2] if t.endswith("er") else t
            if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeiouls":
                base = base[:-1]                  # runn → run, formatt → format, logg → log
            if base != t and len(base) >= 3:
                out[t] = base
        return out

    def unseen_agent_noun_bases(self, doc_freq: dict[str, int]) -> dict:
        """The `agent_noun_bases` of the doer nouns no memory read holds (`doc_freq`: the query's own terms')."""
        return {t: base for t, base in self.agent_noun_bases.items() if not doc_freq.get(t)}

    def with_agent_noun_bases(self, doc_freq: dict[str, int]) -> "Query":
        """This query with each unseen doer noun (no memory read holds it) read as its base where one holds that:
        the base joins the term's spellings, like a translation (`cross`), so it is matched and counts for coverage.

        :param doc_freq: document frequencies of the terms and of their `unseen_agent_noun_bases`."""
        extra = {t: ((base,),) for t, base in self.unseen_agent_noun_bases(doc_freq).items() if doc_freq.get(base)}
        if not extra:
            return self
        cross = {**self.cross, **{t: self.cross.get(t, ()) + forms for t, forms in extra.items()}}
        return dataclasses.replace(self, cross=cross, forms=_forms(self.terms, cross))

    @property
    def translated_tokens(self) -> set:
        return {tok for form in self.forms for tok in form}

    @functools.cached_property
    def spells_code(self) -> bool:
        """Does the query spell an identifier, a call or a code-like token? Only then do its words say much about a
        memory that is source code: a question in plain words reaches a function's identifiers and boilerplate
        by chance (bench/RESULTS.md, "Plain words do not rank code"), so the ranker reads such memories by meaning."""
        return bool(self.compounds) or bool(_CODE_WORD.search(self.text))

    @functools.cached_property
    def answer_types(self) -> frozenset:
        """The kinds of answer the query asks for: a number, a time, a person (`text.answer_types`)."""
        return answer_types.asked(self.text)

    @property
    def content_terms(self) -> int:
        """How many content words the query has: a Chinese run counts by its two-character terms (its single
        characters are fallbacks for matching, not words of their own)."""
        return sum(1 for t in self.terms if len(t) > 1 or t.isascii())

    def idf(self, doc_freq: dict[str, int], total: int) -> dict[str, float]:
        """IDF of each query term over `total` live chunks."""
        total = total or 1
        weak = self.cjk_fallbacks
        return {t: math.log(1 + (total - doc_freq.get(t, 0) + 0.5) / (doc_freq.get(t, 0) + 0.5))
                * (CJK_CHARACTER_WEIGHT if t in weak else 1.0) for t in self.terms}

    @functools.cached_property
    def cjk_fallbacks(self) -> frozenset:
        """The single Chinese characters of a query that also has two-character terms. They are there so a
        memory can still be matched when the words do not line up, but one shared character (天 of 天气 in
        每天) is no evidence that a memory is about the question: in coverage they weigh `CJK_CHARACTER_WEIGHT`
        of their IDF, so an off-topic Chinese question no longer covers a third of itself through scattered
        characters (bench/RESULTS.md, "Chinese questions calibrated")."""
        if not any(len(t) == 2 and is_cjk(t[0]) for t in self.terms):
            return frozenset()
        return frozenset(t for t in self.terms if len(t) == 1 and is_cjk(t))

    def coverage(self, idf: dict, tokens: set) -> float:
        """Share of the query's IDF mass found in these index tokens, a translation standing in for its word.

        A compound word (`store.recall`) weighs its parts plus, once, its rarest whole form: a memory that
        holds the parts apart has most of the word, one that holds it whole has all of it (its whole forms
        are spellings of one word, not three more words a memory must hold)."""
        found = {t for t, crossed in self._crossed
                 if t in tokens or (crossed and any(all(x in tokens for x in form) for form in crossed))}
        mass = got = 0.0
        for forms, parts in self.compound_spellings:
            weight = max(idf[t] for t in forms)
            mass += weight
            if found.intersection(forms):
                got += weight
                found.update(parts)
        for t in self._single_terms:
            mass += idf[t]
            got += idf[t] if t in found else 0.0
        return got / mass if mass else 0.0

    @functools.cached_property
    def _crossed(self) -> tuple:
        """(term, its translations and other spellings) of each term, read once per query (`coverage` runs per
        candidate)."""
        return tuple((t, self.cross.get(t, ())) for t in self.terms)

    @functools.cached_property
    def _single_terms(self) -> tuple:
        """The terms that are no whole form of a compound word (`compound_spellings` weighs those), in order."""
        spellings = {t for forms, _ in self.compound_spellings for t in forms}
        return tuple(t for t in self.terms if t not in spellings)

    @functools.cached_property
    def compound_spellings(self) -> list[tuple[list[str], tuple[str, ...]]]:
        """(the whole forms among the terms, the parts) of each compound word that has a part among the terms."""
        terms = set(self.terms)
        grouped: dict[tuple, list[str]] = {}
        for whole, parts in self.compounds.items():
            if whole in terms and terms.intersection(parts):
                grouped.setdefault(parts, []).append(whole)
        return [(forms, parts) for parts, forms in grouped.items()]

    def asks_about(self, known: set) -> bool:
        """Does the query ask about a name alone (`text.asked_name`) that some memory holds (`known`: the index
        tokens with a document frequency): every word of an English name in one of its forms, every term of a
        Chinese one?"""
        name = asked_name(self.text)
        if name is None:
            return False
        if not name.isascii():
            return all(t in known for t in tokenize(name, query=True) if len(t) > 1)
        words = [word for phrase in named_terms(f"about {name}") for word in phrase]
        return bool(words) and all(known.intersection(word) for word in words)

    def ranker_context(self, doc_freq: dict[str, int], vocabulary: "callable") -> dict:
        """Per-query ranker inputs: the CJK share, how many content words it has, whether it spells code, the
        kinds of answer it asks for, and its names when no memory mentions any of them.

        :param doc_freq: document frequencies of the name forms (and any other tokens).
        :param vocabulary: `() -> set` of the model's everyday words, read only when needed.
        """
        known = {term for term, n in doc_freq.items() if n}
        # A question about a name alone ("who is Lena?") is about that name: a memory that mentions it is evidence,
        # however few words the question has (fresh-user run fu24 D16: the short-query input buried such memories).
        terms = max(self.content_terms, FEW_TERMS) if self.asks_about(known) else self.content_terms
        context: dict = {"cjk_share": cjk_share(self.embedded), "content_terms": terms,
                         "query_code": self.spells_code, "answer_types": self.answer_types}
        names, lead = self.names, self.lead
        if not names and not lead:
            return context
        # A capitalised first word outside the model's everyday vocabulary is a name too ("Kotlin").
        # It only matters when no memory has it, or when it could anchor other names: only then is
        # the vocabulary read (once per process).
        if lead and (names or not known & set(lead[1])):
            if lead[0] not in vocabulary():
                names = [(lead[1],), *names]
        # A name is known when every word of it is; one known name anchors the query.
        if names and not any(all(known & set(word) for word in name) for name in names):
            context["unknown_names"] = tuple(" ".join(max(word, key=len) for word in name) for name in names)
        return context


def match_terms(query: Query, doc_freq: dict[str, int], total: int, max_df: float) -> list[str]:
    """The terms (and translation phrases) worth an FTS MATCH: terms found in most chunks cost a scan
    of most postings and barely move bm25, so they are left out (they still count for coverage),
    unless nothing else would be left; a translation no chunk contains cannot match."""
    common = max(50, int(max_df * total))
    terms = [t for t in query.terms if doc_freq.get(t, 0) <= common] or sorted(
        query.terms, key=lambda t: doc_freq.get(t, 0))[:3]
    translated = [" ".join(form) for form in query.forms
                  if all(0 < doc_freq.get(tok, 0) <= common for tok in form)]
    return list(dict.fromkeys(terms + translated))


def lookup_tokens(query: Query) -> Sequence[str]:
    """Every index token whose document frequency a recall needs: terms, name forms, translations."""
    return list(dict.fromkeys([*query.terms, *query.name_lookup, *query.translated_tokens]))


def _forms(terms: Sequence[str], cross: dict) -> list[tuple]:
    """The translations of the terms, each a tuple of index tokens, in term order, once each."""
    return list(dict.fromkeys(form for t in terms for form in cross.get(t, ())))
