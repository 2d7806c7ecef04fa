"""Fresh-user run fu34: a file of another shape read as bench cases, and what a recall says of bad UTF-8."""
import json
import logging
import subprocess
import sys

import pytest

from supermemory.errors import InvalidInputError


def test_a_cases_file_whose_lines_have_no_type_is_refused_by_name(tmp_path):
    """`bench CASES.jsonl` over lines without "type" printed "0 queries over 0 docs" and exited 0 (fu34 D5)."""
    from supermemory.bench.runner import load_cases_file

    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"type": "memory", "id": "m1", "text": "a"}) + "\n\n"
                    + json.dumps({"query": "how long are product pages cached", "expected": ["m1"]}) + "\n"
                    + json.dumps({"query": "sourdough recipe", "expected": []}) + "\n")
    with pytest.raises(InvalidInputError, match=r'2 line\(s\) have no "type" of memory, query, include, meta '
                                                r'\(JSON line 2 first\)'):
        load_cases_file(path)


def test_the_bench_command_exits_non_zero_on_such_a_file(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps({"query": "sourdough recipe", "expected": []}) + "\n")
    out = subprocess.run([sys.executable, "-m", "supermemory", "bench", str(path)], capture_output=True, text=True,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SUPERMEMORY_HOME": str(tmp_path / "sm")},
                         timeout=120)
    assert out.returncode != 0 and 'have no "type"' in out.stderr and "0 queries" not in out.stdout


def test_a_query_with_bad_utf8_is_said_to_be_replaced_not_stored(caplog):
    """A recall stores nothing, yet its warning said the bad characters were "stored as U+FFFD" (fu34 D7)."""
    from supermemory.store.records import clean_text

    with caplog.at_level(logging.WARNING):
        assert clean_text("redis \ud83d cache", "query", max_chars=100) == "redis \ufffd cache"
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "replaced by U+FFFD" in said and "stored" not in said
