"""install.py against the files a real user already has (found by fresh-user runs of the installer).

Each test here reproduces one defect seen in such a run: what a user wrote in their config must
survive the install, a file they protected is left alone, two runs at once do not break each other.
"""
from __future__ import annotations

import difflib
import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "install.py"
FAST = ["--python", sys.executable, "--no-pip", "--no-model", "--no-selfcheck", "--no-backfill"]
needs_tomllib = pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11+")

_spec = importlib.util.spec_from_file_location("supermemory_install_fresh_user", INSTALL)
inst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inst)

PY = "/opt/sm/venv/bin/python"

HAND_WRITTEN = (
    "# my servers\r\n"
    "[mcp_servers.github]\r\n"
    'command = "npx"\r\n'
    "\r\n"
    "# hand-written before install.py\r\n"
    "[mcp_servers.supermemory]\r\n"
    'command = "supermemory"\r\n'
    'args = ["mcp"]\r\n'
    "# no forgetting from Codex\r\n"
    'disabled_tools = ["memory_forget"]\r\n'
    "tool_timeout_sec = 120\r\n"
    "\r\n"
    "[mcp_servers.supermemory.env]\r\n"
    'SUPERMEMORY_NAMESPACE = "work"\r\n'
    "\r\n"
    "[mcp_servers.supermemory.tools.memory_remember]\r\n"
    'approval_mode = "approve"\r\n'
    "\r\n"
    "[profiles.fast]\r\n"
    'model = "gpt-5-mini"\r\n'
)


def run_install(home: Path, data: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), SUPERMEMORY_HOME=str(data),
               PYTHONPATH=str(ROOT))
    env.pop("CODEX_HOME", None)
    res = subprocess.run([sys.executable, str(INSTALL), "--home", str(home), *FAST, *args], env=env,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    res.output = res.stdout + res.stderr
    return res


# ---------------------------------------------------------------------------
# a [mcp_servers.supermemory] the user wrote by hand


@needs_tomllib
def test_settings_a_user_gave_our_codex_server_by_hand_survive_the_install():
    new = inst.CodexTomlEditor(PY, {}).apply(HAND_WRITTEN)
    server = tomllib.loads(new)["mcp_servers"]["supermemory"]
    assert server["command"] == PY and server["args"] == ["-m", "supermemory", "mcp"]
    assert server["disabled_tools"] == ["memory_forget"] and server["tool_timeout_sec"] == 120
    assert server["tools"] == {"memory_remember": {"approval_mode": "approve"}}
    assert server["env"] == {"SUPERMEMORY_NAMESPACE": "work"}
    assert "# no forgetting from Codex\r\n" in new and "\n" not in new.replace("\r\n", "")
    assert tomllib.loads(new)["profiles"] == {"fast": {"model": "gpt-5-mini"}}


def test_a_reinstall_over_a_hand_written_codex_entry_is_a_no_op():
    editor = inst.CodexTomlEditor(PY, {})
    once = editor.apply(HAND_WRITTEN)
    assert editor.apply(once) == once


@needs_tomllib
def test_a_hand_written_codex_entry_made_only_of_subtables_gets_our_table_beside_them():
    text = '[mcp_servers.supermemory.env]\nSUPERMEMORY_NAMESPACE = "work"\n\n[mcp_servers.supermemory.tools.memory_forget]\nenabled = false\n'
    new = inst.CodexTomlEditor(PY, {}).apply(text)
    server = tomllib.loads(new)["mcp_servers"]["supermemory"]
    assert server["command"] == PY and server["env"] == {"SUPERMEMORY_NAMESPACE": "work"}
    assert server["tools"] == {"memory_forget": {"enabled": False}}
    assert inst.CodexTomlEditor(PY, {}).apply(new) == new


# ---------------------------------------------------------------------------
# a file the user made read-only


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_read_only_claude_json_is_left_untouched_and_named(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    target = home / ".claude.json"
    original = b'{"numStartups": 3, "mcpServers": {"github": {"command": "npx"}}}'
    target.write_bytes(original)
    target.chmod(0o444)
    res = run_install(home, data, "--claude-only")
    assert res.returncode == 2, res.output
    assert target.read_bytes() == original
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert "read-only" in res.output and "Traceback" not in res.output
    assert (home / ".claude" / "settings.json").is_file()   # the other files are still registered


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_uninstall_leaves_a_claude_json_made_read_only_since_alone_and_says_so(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    assert run_install(home, data, "--claude-only").returncode == 0
    target = home / ".claude.json"
    before = target.read_bytes()
    target.chmod(0o400)
    res = run_install(home, data, "--uninstall", "--claude-only")
    assert res.returncode == 2 and "read-only" in res.output and "Traceback" not in res.output
    assert target.read_bytes() == before


# ---------------------------------------------------------------------------
# two installs at once


FAKE_PYTHON = """#!/bin/sh
# stands in for the venv's python: records what pip was asked to build, and what that folder held
[ "$1 $2 $3" = "-m pip install" ] || exit 9
for src; do :; done
{ echo "src=$src"; ls -a "$src"; ls "$src/supermemory"; } > "$FAKE_PIP_LOG"
"""


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for python")
def test_pip_builds_from_a_private_copy_of_the_checkout_not_in_it(tmp_path):
    """Found by running install.py for two users at once from one clone: pip builds a local folder in place
    (setuptools' build/ and *.egg-info/ in the checkout) and the second build failed ('File exists:
    build/bdist.linux-x86_64/wheel/...'), so nothing was registered."""
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    env = dict(os.environ, HOME=str(home), SUPERMEMORY_HOME=str(data), FAKE_PIP_LOG=str(tmp_path / "pip.log"))
    res = subprocess.run([sys.executable, str(INSTALL), "--home", str(home), "--python", str(fake), "--no-model",
                          "--no-selfcheck", "--no-backfill", "--no-launcher", "--no-instructions", "--claude-only"],
                         env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stdout + res.stderr
    log = (tmp_path / "pip.log").read_text(encoding="utf-8").split("\n")
    src = Path(log[0].removeprefix("src="))
    assert src.resolve() != ROOT.resolve() and ROOT.resolve() not in src.resolve().parents
    assert {"pyproject.toml", "README.md", "supermemory"} <= set(log) and "__init__.py" in log
    assert not {".git", ".venv", "build", "tests"} & set(log)
    assert not src.exists()   # the copy is removed afterwards


@pytest.mark.skipif(os.name == "nt", reason="the lock is fcntl's")
def test_a_second_install_while_one_runs_for_the_same_data_dir_stops_with_a_clear_message(tmp_path):
    import fcntl

    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    data.mkdir()
    with open(data / "install.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        res = run_install(home, data)
        again = run_install(home, data, "--uninstall")
    assert res.returncode == 2 and again.returncode == 2, res.output + again.output
    assert "another install.py" in res.output and "Traceback" not in res.output + again.output
    assert not (home / ".claude.json").exists() and not (home / ".codex").exists()
    assert run_install(home, data).returncode == 0   # the lock goes with the process that held it


# ---------------------------------------------------------------------------
# the layout of a JSON file the user keeps by hand


USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi >&2"}]}],
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "~/bin/notes.sh", "timeout": 30}]}],
    },
    "model": "opus",
}


@pytest.mark.parametrize("indent, newline, end", [(4, "\n", "\n"), ("\t", "\r\n", ""), (2, "\n", "")])
def test_a_json_file_keeps_its_indentation_line_ends_and_last_newline(indent, newline, end):
    """Found by a fresh-user run: a ~/.claude/settings.json indented with 4 spaces came back indented with 2, so
    the install's diff (and the user's dotfiles repo) showed every line changed, not just our hooks."""
    original = json.dumps(USER_SETTINGS, indent=indent, ensure_ascii=False).replace("\n", newline) + end
    editor = inst.build_editor("claude_hooks", PY, {}, None)
    new = editor.apply(original)
    removed = [ln for ln in difflib.unified_diff(original.split(newline), new.split(newline), lineterm="", n=0)
               if ln.startswith("-") and not ln.startswith("---")]
    assert len(removed) <= 2 and all(ln.rstrip().endswith(("}", "]")) for ln in removed), removed  # a comma added
    assert new.endswith("}" + end) and new.count("\r\n") == (new.count("\n") if newline == "\r\n" else 0)
    assert editor.apply(new) == new
    assert editor.strip(new) == original


def test_our_entry_in_a_compact_one_line_claude_json_is_still_written_readably():
    new = inst.build_editor("claude_mcp", PY, {}, None).apply('{"numStartups":3}')
    assert json.loads(new)["mcpServers"]["supermemory"]["command"] == PY
    assert new.startswith('{\n  "numStartups": 3,')


@pytest.mark.skipif(os.name == "nt", reason="symlinks")
def test_a_dangling_symlinked_claude_json_is_named_as_such_and_left_alone(tmp_path):
    """Found by a fresh-user run with a dotfiles manager whose link pointed at a file not checked out: the
    message was 'cannot write it ([Errno 2] No such file or directory: '/…/.claude.json.9pnqvxlt.tmp')'."""
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    (home / ".claude.json").symlink_to(tmp_path / "dotfiles" / "claude.json")
    res = run_install(home, data, "--claude-only")
    assert res.returncode == 2
    assert f"a symlink to {tmp_path / 'dotfiles' / 'claude.json'}, which does not exist" in res.output
    assert ".tmp" not in res.output and "Traceback" not in res.output
    assert (home / ".claude.json").is_symlink() and not (tmp_path / "dotfiles").exists()
    res = run_install(home, data, "--uninstall")   # nothing of ours behind it: nothing to report
    assert res.returncode == 0 and "which does not exist" not in res.output, res.output


# ---------------------------------------------------------------------------
# a setting of the user's that keeps our hooks from ever running


def _install_over(tmp_path, relative: str, text: str, flag: str):
    """Install into a home whose agent config file (`relative` to it) the user wrote as `text`; (home, result)."""
    home, data = tmp_path / "home", tmp_path / "data"
    (home / relative).parent.mkdir(parents=True)
    (home / relative).write_text(text, encoding="utf-8")
    res = run_install(home, data, flag)
    assert res.returncode == 0, res.output
    return home, res


def test_a_claude_settings_with_all_hooks_disabled_is_named_at_the_end(tmp_path):
    """Found by a fresh-user run: with "disableAllHooks": true in ~/.claude/settings.json the installer said
    everything was registered, yet Claude Code would never run the briefing or the capture hooks."""
    home, res = _install_over(tmp_path, ".claude/settings.json", '{\n  "disableAllHooks": true\n}\n', "--claude-only")
    assert '"disableAllHooks": true' in res.output and "no hooks" in res.output
    assert json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))["disableAllHooks"] is True
    (tmp_path / "home2").mkdir()
    assert "disableAllHooks" not in run_install(tmp_path / "home2", tmp_path / "data2", "--claude-only").output


@needs_tomllib
def test_a_codex_config_that_turns_hooks_off_is_named_at_the_end(tmp_path):
    _, res = _install_over(tmp_path, ".codex/config.toml", "[features]\ncodex_hooks = false\n", "--codex-only")
    assert "codex_hooks = false" in res.output and "no hooks" in res.output


# ---------------------------------------------------------------------------
# uninstall after install.py took over a registration the user wrote by hand


def test_uninstall_gives_back_a_supermemory_registration_the_user_had_written_by_hand(tmp_path):
    """Found by a fresh-user run: a config.toml that registered supermemory by hand (a pipx install's
    `supermemory mcp`) came back from --uninstall without that table, not byte-identical as the README says."""
    home, data = tmp_path / "home", tmp_path / "data"
    (home / ".codex").mkdir(parents=True)
    toml_bytes = HAND_WRITTEN.encode("utf-8")
    json_bytes = b'{"mcpServers": {"supermemory": {"command": "supermemory", "args": ["mcp"]}}, "theme": "dark"}'
    (home / ".codex" / "config.toml").write_bytes(toml_bytes)
    (home / ".claude.json").write_bytes(json_bytes)
    assert run_install(home, data, "--no-hooks", "--no-instructions").returncode == 0
    assert b'command = "supermemory"' not in (home / ".codex" / "config.toml").read_bytes()   # taken over
    res = run_install(home, data, "--uninstall")
    assert res.returncode == 0, res.output
    assert (home / ".codex" / "config.toml").read_bytes() == toml_bytes
    assert (home / ".claude.json").read_bytes() == json_bytes


def test_uninstall_still_removes_an_entry_an_earlier_run_of_this_install_had_written(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    ours = json.dumps({"mcpServers": {"supermemory": {"command": sys.executable, "args": ["-m", "supermemory", "mcp"]}},
                       "theme": "dark"}).encode("utf-8")
    (home / ".claude.json").write_bytes(ours)
    assert run_install(home, data, "--claude-only", "--no-hooks", "--no-instructions").returncode == 0
    assert run_install(home, data, "--uninstall").returncode == 0
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8")) == {"theme": "dark"}


def _readme_manual_registration(python: str) -> tuple[bytes, bytes]:
    """README's "Manual registration" blocks (config.toml, ~/.claude.json) with `python` as the venv's Python."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("Manual registration", 1)[1]
    toml_block, json_block = re.findall(r"```(?:toml|json)\n(.*?)```", readme, re.S)[:2]
    venv = "/home/you/.supermemory/venv/bin/python"
    assert venv in toml_block and venv in json_block
    return (toml_block.replace(venv, python).encode("utf-8"), json_block.replace(venv, python).encode("utf-8"))


def test_uninstall_keeps_a_hand_written_entry_identical_to_ours(tmp_path):
    """Found by a fresh-user run: README's "Manual registration" blocks, written by hand with the real venv path
    (exactly what install writes), were taken for ours: --uninstall left `{}` and a config.toml of one comment."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    toml_bytes, json_bytes = _readme_manual_registration(sys.executable)
    (home / ".codex" / "config.toml").write_bytes(toml_bytes)
    (home / ".claude.json").write_bytes(json_bytes)
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), PYTHONPATH=str(ROOT))
    for name in ("CODEX_HOME", "SUPERMEMORY_HOME"):   # the default data dir: no env in our entries
        env.pop(name, None)

    def run(*args):
        res = subprocess.run([sys.executable, str(INSTALL), "--home", str(home), *FAST, *args], env=env,
                             capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert res.returncode == 0, res.stdout + res.stderr
        return res.stdout

    first = run()
    assert "--uninstall keeps it" in first and "updated" not in first   # nothing of the user's rewritten
    state = (home / ".supermemory" / "install-state.json").read_bytes()
    again = run()
    assert "updated" not in again and (home / ".supermemory" / "install-state.json").read_bytes() == state
    assert (home / ".codex" / "config.toml").read_bytes() == toml_bytes
    assert (home / ".claude.json").read_bytes() == json_bytes
    out = run("--uninstall")
    assert (home / ".codex" / "config.toml").read_bytes() == toml_bytes, out
    assert (home / ".claude.json").read_bytes() == json_bytes, out
    assert sorted(p.name for p in home.iterdir()) == [".claude.json", ".codex", ".supermemory"]
    run()   # the user edits the file elsewhere after install: their entry still stays
    (home / ".codex" / "config.toml").write_bytes(toml_bytes + b'\n[mcp_servers.other]\ncommand = "x"\n')
    assert "its supermemory entry was there before install" in run("--uninstall")
    assert (home / ".codex" / "config.toml").read_bytes() == toml_bytes + b'\n[mcp_servers.other]\ncommand = "x"\n'


# ---------------------------------------------------------------------------
# the form of a hand-written [mcp_servers.supermemory]: edited in place, or named and left alone


COMMENTED = (
    "[mcp_servers.supermemory]   # by hand\n"
    "# my note\n"
    'command = "supermemory" # old\n'
    "args = [\n"
    '  "mcp",  # the subcommand\n'
    "]\n"
    "\n"
    "[mcp_servers.supermemory.env]\n"
    'A = "b"\n'
)


@needs_tomllib
@pytest.mark.parametrize("ours", [{}, {"SUPERMEMORY_HOME": "/d"}])
def test_a_hand_written_codex_table_keeps_its_comments_and_its_env_subtable(ours):
    """Found by a fresh-user run: the install dropped `# my note` and `# old` and turned the
    [mcp_servers.supermemory.env] subtable into an inline `env = { A = "b" }`."""
    new = inst.CodexTomlEditor(PY, ours).apply(COMMENTED)
    for comment in ("# by hand", "# my note\n", "# old\n", "# the subcommand\n"):
        assert comment in new, new
    assert f'command = "{PY}" # old\n' in new and "[mcp_servers.supermemory.env]\nA = \"b\"\n" in new
    assert "env = {" not in new
    server = tomllib.loads(new)["mcp_servers"]["supermemory"]
    assert server == {"command": PY, "args": ["-m", "supermemory", "mcp"], "startup_timeout_sec": 20,
                      "env": {"A": "b", **ours}}
    assert inst.CodexTomlEditor(PY, ours).apply(new) == new


@needs_tomllib
@pytest.mark.parametrize("env_form", ['env.A = "b"\n', 'env = { A = "b" }  # mine\n'])
def test_a_dotted_or_inline_env_keeps_its_form(env_form):
    text = '[mcp_servers.supermemory]\ncommand = "x"\n' + env_form
    new = inst.CodexTomlEditor(PY, {"SUPERMEMORY_HOME": "/d"}).apply(text)
    assert tomllib.loads(new)["mcp_servers"]["supermemory"]["env"] == {"A": "b", "SUPERMEMORY_HOME": "/d"}
    assert ("env.SUPERMEMORY_HOME" in new) == env_form.startswith("env.") and new.count("[") == 2
    assert ("# mine" in new) == ("# mine" in env_form)


@pytest.mark.parametrize("text, form", [
    ('[mcp_servers]\nsupermemory = { command = "supermemory", args = ["mcp"] }\n', "as an inline table"),
    ('[mcp_servers]\nsupermemory.command = "supermemory"\n', "with dotted keys"),
])
def test_an_inline_or_dotted_supermemory_entry_is_named_as_such_and_left_alone(text, form):
    """Found by a fresh-user run: `supermemory = { … }` under [mcp_servers] was called 'dotted keys', and the
    self-check then advised re-running install.py, which leaves that file as it is."""
    with pytest.raises(inst.ConfigError) as err:
        inst.CodexTomlEditor(PY, {}).apply(text)
    msg = str(err.value)
    assert f"[mcp_servers] defines supermemory {form}" in msg and "does not rewrite" in msg
    assert f'command = "{PY}", args = ["-m", "supermemory", "mcp"], startup_timeout_sec = 20' in msg
    ours = text.split("\n")[0] + f'\nsupermemory = {{ command = "{PY}", args = ["-m", "supermemory", "mcp"], ' \
        'startup_timeout_sec = 20 }\n'
    if tomllib is not None and "inline" in form:   # once it says what we would write, there is nothing to do
        assert inst.CodexTomlEditor(PY, {}).apply(ours) == ours


@pytest.mark.skipif(os.name == "nt", reason="the self-check spawns the user's command")
def test_the_self_check_of_a_file_left_alone_says_to_change_it_not_to_re_run(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    (home / ".codex").mkdir(parents=True)
    original = b'[mcp_servers]\nsupermemory = { command = "no-such-supermemory", args = ["mcp"] }\n'
    (home / ".codex" / "config.toml").write_bytes(original)
    res = run_install(home, data, "--codex-only", "--no-hooks", "--no-instructions", "--no-launcher")
    res = subprocess.run([a for a in res.args if a != "--no-selfcheck"], env=dict(
        os.environ, HOME=str(home), SUPERMEMORY_HOME=str(data), PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    out = res.stdout + res.stderr
    assert res.returncode == 2 and (home / ".codex" / "config.toml").read_bytes() == original, out
    assert "as an inline table" in out and "dotted" not in out
    assert "was left untouched (see above)" in out and "repair the venv" not in out, out


@needs_tomllib
def test_install_then_uninstall_of_a_commented_codex_table_gives_it_back_byte_identical(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(COMMENTED, encoding="utf-8")
    assert run_install(home, data, "--codex-only", "--no-hooks", "--no-instructions").returncode == 0
    installed = (home / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert "# my note" in installed and "[mcp_servers.supermemory.env]" in installed
    assert tomllib.loads(installed)["mcp_servers"]["supermemory"]["env"] == {"A": "b", "SUPERMEMORY_HOME": str(data)}
    assert run_install(home, data, "--uninstall").returncode == 0
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == COMMENTED
