"""The word lists in supermemory/text/lexicons: each says where it comes from and loads to something."""
from __future__ import annotations

import re

import pytest

from supermemory.text import lexicons

NAMES = lexicons.names()
TABLES = ("glossary", "irregular_forms")
PATTERNS = ("revision_markers", "weak_revision_markers")


def test_the_package_ships_every_lexicon_the_code_reads():
    assert set(NAMES) >= {"stopwords", "cjk_function_chars", "cjk_stop_bigrams", "cjk_stop_unigrams", "date_words",
                          "glossary", "negation_words", *TABLES, *PATTERNS}


@pytest.mark.parametrize("name", NAMES)
def test_every_lexicon_opens_with_its_provenance_and_loads_non_empty(name):
    assert lexicons.provenance(name), f"{name}.txt lacks a '# provenance: …' line"
    first = lexicons._read(name).splitlines()[0]
    assert first.startswith("# provenance:"), f"{name}.txt does not start with its provenance"
    entries = lexicons.entries(name)
    assert entries and all(e and not e.startswith("#") for e in entries)
    assert lexicons.word_set(name)


@pytest.mark.parametrize("name", NAMES)
def test_no_lexicon_lists_an_entry_twice(name):
    keys = [row[0] for row in lexicons.table(name)] if name in TABLES else list(lexicons.entries(name))
    assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})


@pytest.mark.parametrize("name", TABLES)
def test_a_table_row_has_a_key_and_at_least_one_value(name):
    assert all(len(row) >= 2 and all(row) for row in lexicons.table(name))


@pytest.mark.parametrize("name", PATTERNS)
def test_a_marker_lexicon_compiles_to_one_case_insensitive_pattern(name):
    pattern = lexicons.marker_pattern(name)
    assert isinstance(pattern, re.Pattern) and pattern.flags & re.IGNORECASE
    for entry in lexicons.entries(name):
        re.compile(entry)   # each line is a valid alternative on its own


def test_english_markers_match_whole_words_and_chinese_ones_anywhere():
    pattern = lexicons.marker_pattern("revision_markers")
    assert pattern.search("We NO LONGER sign with HS256")
    assert not pattern.search("the replacedment")          # inside a longer word: no
    assert pattern.search("我们已经改用 argon2")             # CJK needs no word boundary


def test_irregular_forms_map_each_form_to_its_base():
    forms = lexicons.irregular_forms()
    assert forms["went"] == "go" and forms["gone"] == "go" and forms["children"] == "child"
    with pytest.raises(TypeError):
        forms["went"] = "walk"   # shared and cached: read-only


def test_loaders_cache_what_they_read():
    assert lexicons.word_set("stopwords") is lexicons.word_set("stopwords")
