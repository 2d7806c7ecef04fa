"""The one tokenizer, summaries, token estimates and chunking."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supermemory.text import chunk, estimate_tokens, fts_match, query_terms, summarize, tokenize
from supermemory.text.summary import SUMMARY_CHARS, SUMMARY_TOKENS


@pytest.mark.parametrize("text, expected", [
    ("检索层", ["检", "索", "层", "检索", "索层"]),
    ("MemoryStore", ["memorystore", "memori", "store"]),
    ("E_ACCES", ["e_acces"]),
    ("--dry-run", ["--dry-run", "dri", "run"]),
    ("/etc/hosts", ["/etc/hosts", "etc"]),
    ("v1.2.3", ["v1.2.3"]),
    ("c++", ["c++"]),
    ("ERR_CONNECTION_REFUSED", ["err_connection_refused", "connect", "refus"]),
    ("parseJSON", ["parsejson", "pars", "json"]),
    ("ＡＢＣ", ["abc"]),
])
def test_tokenize_keeps_whole_forms_and_parts(text, expected):
    tokens = tokenize(text)
    for token in expected:
        assert token in tokens, (text, token, tokens)


def test_mixed_cjk_and_latin_split_into_runs():
    tokens = tokenize("检索层使用BM25和向量")
    assert "bm25" in tokens and "检索" in tokens and "向量" in tokens


def test_trailing_punctuation_does_not_stick_to_tokens():
    assert "hosts" not in tokenize("edit /etc/hosts.") and "/etc/hosts" in tokenize("edit /etc/hosts.")
    assert "(c++)" not in tokenize("(c++)")


def test_query_terms_drop_stop_words_unless_nothing_else_remains():
    assert query_terms("how does the retrieval work") == ["retriev", "work"]
    assert query_terms("what is it") != []


@pytest.mark.parametrize("query, expr", [
    ('"unbalanced', '"unbalanc"'), ("AND OR NOT", '"and" OR "or" OR "not"'), ("NEAR(", '"near"'),
    ("col:val", '"col:val" OR "colval" OR "col" OR "val"'), ("*", ""), ('a"b', '"a""b" OR "ab"'),
])
def test_fts_match_quotes_every_term(query, expr):
    assert fts_match(query_terms(query)) == expr


def test_summary_is_first_sentence_and_capped():
    text = "We pinned PostgreSQL 16 for the main database. It has better JSON support."
    assert summarize(text) == "We pinned PostgreSQL 16 for the main database."
    assert summarize("数据库固定使用 PostgreSQL 16 版本。它的 JSON 支持更好。") == "数据库固定使用 PostgreSQL 16 版本。"
    assert len(summarize("x" * 500, max_chars=100)) == 100
    assert len(summarize("x" * 500)) == SUMMARY_CHARS


@pytest.mark.parametrize("text, expected", [
    # a label: the fact is the next sentence (a fresh user saw only "Celery gotcha.")
    ("Celery gotcha. Tasks must be idempotent because the broker redelivers on worker restart. Use acks_late.",
     "Celery gotcha. Tasks must be idempotent because the broker redelivers on worker restart."),
    # a question: alone it said the opposite of the fact
    ("User prefers tabs over spaces? No — the team standard is 2 spaces, enforced by prettier. Since 2023.",
     "User prefers tabs over spaces? No — the team standard is 2 spaces, enforced by prettier."),
    ("Deploy steps:\nbuild the image and push it to the registry\nthen run helm upgrade",
     "Deploy steps: build the image and push it to the registry"),
    ("Celery 注意事项。任务必须幂等，因为 broker 会在 worker 重启时重新投递。另外记得设置 acks_late。",
     "Celery 注意事项。任务必须幂等，因为 broker 会在 worker 重启时重新投递。"),
    ("用户喜欢用制表符吗？不是，团队标准是两个空格，由 prettier 强制执行。从 2023 年开始。",
     "用户喜欢用制表符吗？不是，团队标准是两个空格，由 prettier 强制执行。"),
    ("部署步骤：\n先构建镜像并推送到仓库\n然后运行 helm upgrade", "部署步骤： 先构建镜像并推送到仓库"),
])
def test_a_lead_that_says_little_is_extended_until_a_sentence_says_something(text, expected):
    assert summarize(text) == expected


@pytest.mark.parametrize("text", [
    "Celery gotcha. Tasks must be idempotent because " + "the broker redelivers on worker restart, " * 40,
    "注意事项。任务必须幂等，" + "因为消息代理会在工作进程重启时重新投递，" * 40,
    "Gotcha? " + "Yes. " * 300,   # whole short sentences up to the budget, none cut
])
def test_an_extended_summary_stays_within_its_budget(text):
    summary = summarize(text)
    assert len(summary) <= SUMMARY_CHARS and estimate_tokens(summary) <= SUMMARY_TOKENS
    assert summary.endswith("…") != summary.endswith("Yes.")
    assert len(summary) > len(summarize(text, max_chars=80)) + 20   # it carries content past the label


def test_code_keeps_its_first_line_as_summary():
    code = ("def check(version: str) -> None:\n    parts = version.split('.')\n"
            "    if len(parts) < 2:\n        raise ValueError(version)\n")
    assert summarize(code) == "def check(version: str) -> None:"


def test_a_title_is_the_first_sentence_alone_even_when_a_label():
    assert summarize("Celery gotcha. Tasks must be idempotent.", max_chars=80) == "Celery gotcha."
    assert summarize("用户喜欢用制表符吗？不是，团队标准是两个空格。", max_chars=80) == "用户喜欢用制表符吗？"


def test_token_estimate_counts_cjk_per_character():
    assert estimate_tokens("检索层") == 3
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("") == 0


@pytest.mark.parametrize("overlap_tokens, spans", [
    (30, [(0, 10), (7, 17), (14, 24), (21, 30)]),   # 3 lines of 10 tokens carried over
    (25, [(0, 10), (8, 18), (16, 26), (24, 30)]),   # a third line would make 30 > 25
    (0, [(0, 10), (10, 20), (20, 30)]),
])
def test_chunking_respects_budget_and_overlaps(overlap_tokens, spans):
    lines = [f"line {i:02d} " + "x" * 32 for i in range(30)]   # 40 chars = 10 tokens each
    chunks = chunk("\n".join(lines), max_tokens=100, overlap_tokens=overlap_tokens)
    assert chunks == ["\n".join(lines[a:b]) for a, b in spans]
    for before, after in zip(chunks, chunks[1:]):
        carried = overlap_tokens // 10
        assert after.split("\n")[:carried] == before.split("\n")[len(before.split("\n")) - carried:]
        assert after.split("\n")[carried] not in before
    # The budget counts the lines; the newlines joining them are not charged.
    assert all(sum(estimate_tokens(line) for line in c.split("\n")) <= 100 for c in chunks)
    assert chunk("short text") == ["short text"]


def test_chunking_hard_splits_one_giant_line():
    chunks = chunk("x" * 20000, max_tokens=100, overlap_tokens=0)
    assert len(chunks) > 10 and all(estimate_tokens(c) <= 105 for c in chunks)


def test_chinese_function_words_leave_the_query_and_take_their_artefact_bigrams_with_them():
    terms = query_terms("alembic 迁移什么时候跑")
    assert "alemb" in terms and "迁移" in terms and "跑" in terms
    assert not {"什么", "么时", "时候", "候跑", "什", "么"} & set(terms)
    assert query_terms("如何配置 Kubernetes 的 HPA") == ["配", "置", "配置", "kubernet", "hpa"]
    assert "慢怎" not in query_terms("cargo 编译太慢怎么加速")
    assert query_terms("什么") != []              # only function words: keep them rather than nothing
    # Indexing is untouched: memories keep every unigram and bigram.
    assert {"什么", "时候"} <= set(tokenize("什么时候跑"))


@pytest.mark.parametrize("text", [
    "We no longer sign JWTs with HS256.", "nginx was replaced by Caddy for local dev.",
    "ledgerly moved from Poetry to uv; do not run poetry install anymore.",
    "Default --chunk-size was lowered from 64 MiB to 16 MiB.", "The SSH bastion has been shut down.",
    "Tests now run against a real Postgres.", "前端不再使用 moment.js，改用 date-fns。"])
def test_revision_wording_is_recognised(text):
    from supermemory.text import has_revision_marker
    assert has_revision_marker(text)


@pytest.mark.parametrize("text", [
    "JWT access tokens are signed with HS256.", "The local dev reverse proxy is nginx.",
    "Run poetry install after pulling.", "", "待办：发票导出需要做成异步。"])
def test_plain_statements_are_not_revisions(text):
    from supermemory.text import has_revision_marker
    assert not has_revision_marker(text)


@pytest.mark.parametrize("text, says", [
    ("def label(deprecated: bool) -> str:\n    return f\" {deprecated}\" if isinstance(deprecated, str) else \"\"", False),
    ("if self.deprecated:\n    warn()", False), ("row = {\"applied_at\": datetime.now(timezone.utc)}", False),
    ("The /v1/users endpoint (deprecated) is kept for old clients.", True),
    ("The --legacy flag is deprecated: pass --fast.", True), ("Builds now use uv.", True)])
def test_change_words_inside_code_are_identifiers_not_an_announcement(text, says):
    from supermemory.text import has_revision_marker
    assert has_revision_marker(text) is says


@pytest.mark.parametrize("text, weak", [
    ("Tests now run against a real Postgres.", True), ("We went to the beach with the kids.", True),
    ("The API now listens on 9000; port 8080 was removed.", False), ("We no longer sign JWTs with HS256.", False),
    ("JWT access tokens are signed with HS256.", False), ("", False)])
def test_change_words_of_everyday_talk_are_told_apart(text, weak):
    from supermemory.text import has_revision_marker, revision_marker
    assert (revision_marker(text) == "weak") is weak
    assert has_revision_marker(text) is (weak or "no longer" in text or "removed" in text)


@pytest.mark.parametrize("forms", [
    ("make", "making", "makes"), ("movie", "movies"), ("party", "parties"), ("inspire", "inspired", "inspiring"),
    ("game", "games", "gaming"), ("write", "writes", "writing"), ("plan", "planned", "plans"), ("use", "uses"),
    ("string", "strings"), ("database", "databases"), ("cache", "caches", "cached"),
    ("connect", "connection", "connected"), ("validate", "validation", "validating"), ("deploy", "deployed"),
    ("generous", "generously"), ("happy", "happiness")])
def test_inflections_of_a_word_share_one_index_token(forms):
    assert len({tokenize(word)[0] for word in forms}) == 1, [tokenize(w) for w in forms]


def test_irregular_forms_meet_their_base_before_snowball_stems_it():
    assert tokenize("went") == tokenize("go") and tokenize("ran") == tokenize("running") == ["run"]
    assert tokenize("children") == tokenize("child") and tokenize("made") == tokenize("making")


def test_the_stemmer_is_imported_on_the_first_word_stemmed_not_with_the_modules():
    script = ("import json, sys\n"
              "import supermemory.text, supermemory.retrieval.ranking, supermemory.embed.hashing, supermemory.briefing\n"
              "before = 'Stemmer' in sys.modules\n"
              "supermemory.text.tokenize('running late')\n"
              "print(json.dumps([before, 'Stemmer' in sys.modules]))")
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(repo) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [False, True]


def test_named_terms_are_the_words_spelled_as_names():
    from supermemory.text import named_terms
    assert named_terms("how do we deploy to Azure Functions") == [(("azur", "azure"), ("function", "functions"))]
    assert named_terms("如何配置 Kubernetes 的 HPA") == [(("kubernet", "kubernetes"),), (("hpa",),)]
    assert named_terms("GraphQL resolver batching") == [(("graphql",),)]        # inner capitals: a name
    assert named_terms("Celery beat schedule") == []                             # just a sentence start
    assert named_terms("Was it good? Answer yes or no.") == []                   # …of the second sentence too
    assert named_terms("what should I do before I've finished, on Aug 15th") == []
    assert named_terms("Would Caroline like Dr. Seuss, or Vivaldi") == [
        (("carolin", "caroline"),), (("dr",),), (("vivaldi",),)]   # "Seuss" follows a full stop
    assert "eacces" in named_terms("E_ACCES when running pnpm")[0][0]   # matches a memory that wrote EACCES




def test_leading_word_is_a_capitalised_first_word_named_terms_leaves_out():
    from supermemory.text import leading_word, name_forms
    assert leading_word("Kotlin coroutine scope convention") == ("kotlin", ("kotlin",))
    assert leading_word("  Celery beat schedule")[0] == "celery"
    assert leading_word("celery beat schedule") is None          # lower case: not a name by its spelling
    assert leading_word("GraphQL resolvers") is None              # inner capitals: named_terms has it already
    assert leading_word("What does Kotlin do") is None            # a stop word
    assert leading_word("部署 Kotlin") is None and leading_word("") is None
    assert "kotlin" in name_forms("Kotlin coroutine scope convention")


def test_importing_the_text_package_and_reading_its_word_lists_loads_no_native_runtime():
    script = ("import json, sys\n"
              "import supermemory.text as text\n"
              "from supermemory.text import STOPWORDS, DATE_WORDS, cross_terms\n"
              "text.query_terms('Wie deployen wir 部署 staging?'); cross_terms('部署 staging')\n"
              "text.named_terms('the Project'); text.chunk('x ' * 2000)\n"
              "print(json.dumps([m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules]))")
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(repo) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_word_list_constants_load_on_first_access():
    import supermemory.text as text
    from supermemory.text import lexicons

    assert "the" in text.STOPWORDS and "今天" not in text.DATE_WORDS
    assert text.STOPWORDS is text.stopwords()
    with pytest.raises(AttributeError):
        text.NO_SUCH_LIST    # noqa: B018
    assert "STOPWORDS" in dir(text) and lexicons.word_set("stopwords") <= text.STOPWORDS


@pytest.mark.parametrize("text", [
    "def retry(request, attempts=3):\n    for _ in range(attempts):\n        resp = request.send()\n"
    "        if resp.ok:\n            return resp\n    raise TimeoutError(request.url)",
    "const cfg = {port: 8080, hosts: ['a', 'b']};\nserver.listen(cfg.port);",
    "fn main() {\n    let args: Vec<String> = env::args().collect();\n    run(&args[1..]);\n}",
])
def test_source_code_reads_as_code(text):
    from supermemory.text import code_share

    assert code_share(text) > 0.75


@pytest.mark.parametrize("text", [
    "We moved CI from Jenkins to GitHub Actions last spring because the runners were flaky.",
    "[1:56 pm on 8 May, 2023] Caroline: Hey Mel! Good to see you!",   # a bracket or two in a short line
    "Use snake_case for module names (see PEP 8).",
    "用 pytest 跑测试，不要用 unittest。",
    "",
])
def test_prose_with_a_stray_mark_reads_as_prose(text):
    from supermemory.text import code_share

    assert code_share(text) < 0.2


@pytest.mark.parametrize("short", [
    "def close(self) -> None:\n    raise NotImplementedError",
    "with open(path) as fh:\n    data = json.load(fh)",
])
def test_a_short_function_reads_as_code_by_its_indented_body(short):
    """Two lines carry few brackets; the body indented under the line that opens it is what says code."""
    from supermemory.text import code_share

    assert code_share(short) > 0.35
    assert code_share(short.replace("\n    ", " ").replace("\n\t", " ")) < code_share(short) - 0.2


@pytest.mark.parametrize("text", [
    "Release steps:\n  1. bump the version\n  2. tag it\n  3. push the tag",
    "Gotchas for the importer:\n    - dates arrive as local time\n    - the CSV has a BOM",
])
def test_an_indented_list_under_a_heading_stays_prose(text):
    from supermemory.text import code_share

    assert code_share(text) < 0.2


def test_code_share_grows_with_the_marks_and_reads_a_bounded_sample():
    from supermemory.text import code_share

    prose = "the deploy job builds every night and pushes the image to the registry. " * 3
    assert code_share(prose) < code_share(prose + "x = f(a[0]); y = g(b_c);") < code_share("x = f(a[0]); y = g(b_c);")
    assert code_share("prose words only " * 2000 + "f(x); " * 5000) == 0.0    # only the head is read
