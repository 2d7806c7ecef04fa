"""supermemory import-rules: CLAUDE.md / AGENTS.md rules as preferences, in step with their files, in the other agent's briefing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from supermemory import rules
from supermemory.guide import BEGIN_MARK, END_MARK

CLAUDE_MD = f"""# Project rules

Run the tests with `pytest -q` before every commit.

## Style

- Use type hints on every public function.
- Keep functions under 50 lines;
  split them when they grow.
* Prefer pathlib over os.path.

```bash
- this is code, not a rule
```

| table | row |
|---|---|

<!-- a comment, not a rule -->

{BEGIN_MARK}
## supermemory
- Call memory_recall before answering questions about this project.
{END_MARK}

## Tools

1. Install packages with pnpm, never with npm.
@docs/more-rules.md
"""


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    return root


def live_rules(store, ns="shop"):
    items = store.list(namespace=ns, kinds=["preference"], limit=100)["items"]
    return {i["id"]: store.get(i["id"], namespace=ns)["memories"][0] for i in items}


def test_bullets_and_short_paragraphs_under_headings_are_the_rules():
    found, long_ones = rules.parse_rules(CLAUDE_MD)
    assert [(r.heading, r.text) for r in found] == [
        (("Project rules",), "Run the tests with `pytest -q` before every commit."),
        (("Project rules", "Style"), "Use type hints on every public function."),
        (("Project rules", "Style"), "Keep functions under 50 lines; split them when they grow."),
        (("Project rules", "Style"), "Prefer pathlib over os.path."),
        (("Project rules", "Tools"), "Install packages with pnpm, never with npm."),
    ]
    assert long_ones == 0
    assert found[0].line == 3 and found[2].line == 8


def test_the_installers_usage_block_is_never_imported():
    text = "# Mine\n- my rule\n" + BEGIN_MARK + "\n- Call memory_recall first\n" + END_MARK + "\n"
    assert [r.text for r in rules.parse_rules(text)[0]] == ["my rule"]
    install = (Path(rules.__file__).parents[1] / "install.py").read_text(encoding="utf-8")
    assert f'BLOCK_BEGIN = "{BEGIN_MARK}"' in install and f'BLOCK_END = "{END_MARK}"' in install


def test_import_writes_preferences_tagged_with_their_file_and_line(store, project):
    (project / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    result = store.import_rules([str(project)])
    assert (result["rules"], result["created"]) == (5, 5)
    found = live_rules(store)
    assert len(found) == 5
    one = next(r for r in found.values() if "pathlib" in r["body"])
    assert one["kind"] == "preference" and set(one["tags"]) == {"rule", "rules:CLAUDE.md"}
    assert one["source"]["file"] == str((project / "CLAUDE.md").resolve()) and one["source"]["line"] == 10
    assert not any("memory_recall" in r["body"] for r in found.values())


def test_rerun_keeps_unchanged_rules_versions_edited_ones_and_forgets_removed_ones(store, project):
    path = project / "AGENTS.md"
    path.write_text(CLAUDE_MD, encoding="utf-8")
    store.import_rules([str(path)])
    before = live_rules(store)
    edited = ("# Project rules\n\nA new first paragraph pushes every line down.\n\n"
              + CLAUDE_MD.split("\n", 1)[1]).replace("under 50 lines", "under 40 lines").replace(
        "* Prefer pathlib over os.path.\n", "")
    path.write_text(edited, encoding="utf-8")
    result = store.import_rules([str(path)])
    assert (result["created"], result["changed"], result["unchanged"], result["removed"]) == (1, 1, 3, 1)
    after = live_rules(store)
    kept = set(before) & set(after)
    assert len(kept) == 3                                  # inserting a line changed none of them
    changed = next(r for r in after.values() if "40 lines" in r["body"])
    history = store.history(changed["id"], namespace="shop")["versions"]
    assert ["50 lines" in v["body"] for v in history] == [True, False]
    assert not any("pathlib" in r["body"] for r in after.values())
    assert store.import_rules([str(path)])["unchanged"] == 5


def test_a_dry_run_counts_what_a_rerun_would_change_and_writes_nothing(store, project, monkeypatch, capsys):
    from supermemory.cli import main

    path = project / "AGENTS.md"
    path.write_text(CLAUDE_MD, encoding="utf-8")
    plan = store.import_rules([str(path)], dry_run=True)
    assert plan["dry_run"] and (plan["created"], plan["files"][0]["created"]) == (5, 5)
    assert store.stats(namespace="*")["memories"] == 0
    store.import_rules([str(path)])
    before = live_rules(store)
    again = store.import_rules([str(path)], dry_run=True)
    assert (again["created"], again["changed"], again["unchanged"]) == (0, 0, 5)
    path.write_text(CLAUDE_MD.replace("under 50 lines", "under 40 lines").replace("* Prefer pathlib over os.path.\n",
                                                                              "- Log in UTC.\n"), encoding="utf-8")
    plan = store.import_rules([str(path)], dry_run=True)
    assert (plan["created"], plan["changed"], plan["unchanged"], plan["removed"]) == (1, 1, 3, 1)
    assert live_rules(store) == before
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    monkeypatch.chdir(project)
    assert main(["import-rules", "--dry-run", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["created"] == 5     # the CLI's own store: nothing there yet
    assert main(["import-rules", "--dry-run", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["created"] == 5     # and the dry run stored none


def test_a_dry_run_says_so_first_and_words_its_counts_as_what_would_happen(project, monkeypatch, capsys):
    """The text of `import-rules --dry-run` read like a real run's ("5 new"); it now opens as backfill's does."""
    from supermemory.cli import main

    path = project / "AGENTS.md"
    path.write_text(CLAUDE_MD, encoding="utf-8")
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    monkeypatch.chdir(project)
    assert main(["import-rules", "--dry-run", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dry run: would add 5, change 0, remove 0 (0 unchanged); nothing written"), lines
    assert "would add 5" in lines[1] and " new," not in lines[1], lines
    assert main(["import-rules", str(path)]) == 0
    real = capsys.readouterr().out
    assert "dry run" not in real and "would" not in real and "5 new" in real, real


def test_user_level_files_go_to_global(store, tmp_path, monkeypatch):
    claude_home = tmp_path / "claude-home"
    claude_home.mkdir()
    (claude_home / "CLAUDE.md").write_text("# Me\n- Answer in British English.\n", encoding="utf-8")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_home))
    store.import_rules([str(claude_home / "CLAUDE.md")])
    items = store.list(namespace="global", kinds=["preference"])["items"]
    assert [i["namespace"] for i in items] == ["global"]


def test_the_briefing_leaves_out_the_rules_of_the_file_the_agent_loads_itself(store, project):
    (project / "CLAUDE.md").write_text("# Claude\n- Claude rule: run ruff before committing.\n", encoding="utf-8")
    (project / "AGENTS.md").write_text("# Codex\n- Codex rule: keep the changelog in sync.\n", encoding="utf-8")
    store.import_rules([str(project)])

    def prefs(platform):
        brief = store.briefing(namespace="shop", platform=platform)
        return " ".join(i["body"] for i in brief["sections"]["preferences"])

    assert "Codex rule" in prefs("claude-code") and "Claude rule" not in prefs("claude-code")
    assert "Claude rule" in prefs("codex") and "Codex rule" not in prefs("codex")
    assert "Claude rule" in prefs(None) and "Codex rule" in prefs(None)


def test_health_reports_a_new_memory_that_contradicts_an_imported_rule(store, project):
    (project / "CLAUDE.md").write_text("# Tools\n- Install the frontend packages with pnpm in this repo.\n",
                                       encoding="utf-8")
    store.import_rules([str(project)])
    store.remember("Do not install the frontend packages with pnpm in this repo", kind="decision", namespace="shop")
    store.remember("The CI cache key includes the lockfile hash", kind="fact", namespace="shop")
    health = store.health(namespace="shop")
    assert len(health["rule_conflicts"]) == 1, health["rule_conflicts"]
    conflict = health["rule_conflicts"][0]
    assert conflict["file"].endswith("CLAUDE.md") and "Do not install" in conflict["titles"][0]
    assert not health["clean"]


def test_a_missing_path_is_an_error_naming_it(store, tmp_path):
    from supermemory.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="not found"):
        store.import_rules([str(tmp_path / "nope.md")])


def test_the_cli_imports_and_reports_per_file(project, monkeypatch, capsys):
    from supermemory.cli import main

    (project / "AGENTS.md").write_text("# Rules\n- Squash merge only.\n", encoding="utf-8")
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    assert main(["import-rules", str(project)]) == 0
    assert "1 new" in capsys.readouterr().out
    assert main(["import-rules", str(project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unchanged"] == 1


def test_a_file_that_is_not_utf8_is_reported_not_imported_with_replacement_characters(project, monkeypatch, capsys):
    from supermemory.cli import main

    (project / "AGENTS.md").write_bytes(b"# Rules\n- Squash merge only.\n- Caf\xe9 rules.\n")
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    assert main(["import-rules", str(project)]) == 1
    out = capsys.readouterr()
    assert out.err.startswith(f"error: {project / 'AGENTS.md'}:3: not valid UTF-8 (byte 0xe9 at offset 34)"), out.err
    assert main(["import-rules", str(project), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["created"] == 0


def test_a_briefing_with_only_the_agents_own_rules_says_so(store, project):
    """Not "no memories yet" when the rules imported from the file the agent loads itself are all there is."""
    from supermemory.render_briefing import briefing_view

    (project / "CLAUDE.md").write_text("# Claude\n- Run ruff before committing.\n- Keep diffs small.\n",
                                       encoding="utf-8")
    store.import_rules([str(project)])
    text = briefing_view(store.briefing(namespace="shop", platform="claude-code"))["text"]
    assert "no memories yet" not in text
    assert "beyond the 2 rule(s) imported from CLAUDE.md, which you load already" in text
    assert "Run ruff" in briefing_view(store.briefing(namespace="shop", platform="codex"))["text"]


def test_a_dry_run_claims_no_project_name_and_the_import_claims_it_in_its_own_data_dir(tmp_path, project):
    # Found by the namespace-claim fix: the dry run claimed the project's name (a look must not), and in the
    # default data dir instead of the store's own.
    from conftest import FakeEmbedder
    from supermemory.config import Config
    from supermemory.core import MemoryStore

    home = tmp_path / "home"
    home.mkdir()
    (project / "AGENTS.md").write_text(CLAUDE_MD, encoding="utf-8")
    with MemoryStore(home / "memory.db", config=Config(home=home), embedder=FakeEmbedder(), namespace="proj") as s:
        assert s.import_rules([str(project / "AGENTS.md")], dry_run=True)["created"] == 5
        assert not (home / "namespaces" / "shop").exists()
        s.import_rules([str(project / "AGENTS.md")])
    assert (home / "namespaces" / "shop").read_text().strip() == str(project.resolve())
