"""retrieval/query: a question about a doer ("the linter", "the formatter", "the logger") reaches a note that names
what it does ("linting", "formatting", "logging") when no memory names the doer itself (fresh-user run fu24, D5)."""
import pytest

from supermemory.core import MemoryStore
from supermemory.retrieval.query import Query
from tests.conftest import FakeEmbedder


@pytest.mark.parametrize("query, bases", [
    ("what linter do we use", {"linter": "lint"}),
    ("which formatter", {"formatt": "format"}),
    ("logger config", {"logger": "log"}),
    ("the test runner", {"runner": "run"}),
    ("user settings", {}),               # too short to be a doer noun
    ("which container", {}),             # the stemmer already reads it as its verb
    ("数据库 linter", {"linter": "lint"}),
])
def test_the_bases_of_doer_nouns(query, bases):
    assert Query.analyse(query).agent_noun_bases == bases


def test_an_unseen_doer_noun_is_read_as_its_base(db_path, config):
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    ruff = s.remember("Use ruff for linting and formatting; black and isort were removed")["id"]
    s.remember("We use the staging cluster first for every deploy")
    hits = s.recall("what linter do we use?", touch=False)["results"]
    assert hits and hits[0]["id"] == ruff


def test_a_doer_noun_the_store_holds_is_not_widened(db_path, config):
    """Where a memory names the linter itself, the question matches that word only: `linting` notes get no say."""
    s = MemoryStore(db_path, config=config, embedder=FakeEmbedder())
    s.remember("Our linter is ruff, configured in pyproject.toml")
    s.remember("Linting runs in CI before the tests")
    query = Query.analyse("what linter do we use")
    from supermemory.store import search_index
    from supermemory.retrieval.query import lookup_tokens
    from supermemory.store import namespaces as nsm
    looked_up = [*lookup_tokens(query), *query.agent_noun_bases.values()]
    df = search_index.doc_frequencies(s.context, looked_up, nsm.for_read(s.context, None))
    assert df["linter"] == 1 and df["lint"] == 1
    assert query.with_agent_noun_bases(df) is query
    widened = query.with_agent_noun_bases({"lint": 1})
    assert ("lint",) in widened.cross["linter"] and ("lint",) in widened.forms
