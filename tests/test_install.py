"""Tests for the top-level install.py (stdlib-only installer).

install.py runs in a subprocess against a throw-away home (tmp_path), with
SUPERMEMORY_HOME pointing at a throw-away data dir and CODEX_HOME unset, so
nothing here ever touches the real ~/.claude.json or ~/.codex.
"""
from __future__ import annotations

import importlib.util
import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import time
import threading
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "install.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "install"
FAST = ["--python", sys.executable, "--no-pip", "--no-model", "--no-selfcheck"]
MARKER = "-m supermemory hook"
needs_tomllib = pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11+")

_spec = importlib.util.spec_from_file_location("supermemory_install_under_test", INSTALL)
inst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inst)


# ---------------------------------------------------------------------------
# helpers


class Env:
    def __init__(self, tmp_path: Path):
        self.root = tmp_path
        self.home = tmp_path / "home"
        self.data = tmp_path / "data"
        self.home.mkdir()

    @property
    def claude_json(self):
        return self.home / ".claude.json"

    @property
    def settings(self):
        return self.home / ".claude" / "settings.json"

    @property
    def claude_md(self):
        return self.home / ".claude" / "CLAUDE.md"

    @property
    def codex(self):
        return self.home / ".codex"

    @property
    def config_toml(self):
        return self.codex / "config.toml"

    @property
    def hooks_json(self):
        return self.codex / "hooks.json"

    @property
    def agents_md(self):
        return self.codex / "AGENTS.md"

    @property
    def launcher(self):
        return self.home / ".local" / "bin" / "supermemory"

    def environ(self, pythonpath=None, **extra):
        env = dict(os.environ)
        env["HOME"] = str(self.home)
        env["USERPROFILE"] = str(self.home)
        env["SUPERMEMORY_HOME"] = str(self.data)
        env.pop("CODEX_HOME", None)
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (pythonpath or [ROOT]))
        env.update(extra)
        return env

    def run(self, *args, fast=True, pythonpath=None, extra_env=None):
        cmd = [sys.executable, str(INSTALL), "--home", str(self.home), *(FAST if fast else []), *args]
        res = subprocess.run(
            cmd, cwd=str(self.root), env=self.environ(pythonpath, **(extra_env or {})),
            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )
        res.output = res.stdout + res.stderr
        return res

    def with_fixtures(self):
        self.codex.mkdir()
        (self.home / ".claude").mkdir()
        shutil.copyfile(FIXTURES / "claude.json", self.claude_json)
        shutil.copyfile(FIXTURES / "settings.json", self.settings)
        shutil.copyfile(FIXTURES / "CLAUDE.md", self.claude_md)
        shutil.copyfile(FIXTURES / "config.toml", self.config_toml)
        shutil.copyfile(FIXTURES / "hooks.json", self.hooks_json)
        return self


def snapshot(root: Path) -> dict:
    """Every file (bytes) and directory under root."""
    snap = {}
    if not root.exists():
        return snap
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        snap[rel] = p.read_bytes() if p.is_file() else "<dir>"
    return snap


def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def our_hook_commands(obj: dict) -> dict:
    out = {}
    for event, groups in obj.get("hooks", {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if MARKER in h.get("command", ""):
                    out.setdefault(event, []).append(h["command"])
    return out


def real_guide_block(env: Env) -> str:
    """The block install.py should write: `supermemory guide` run as it runs it (same env, data dir as cwd)."""
    res = subprocess.run([sys.executable, "-m", "supermemory", "guide"], env=env.environ(), cwd=str(env.data),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return inst.make_block(res.stdout)


FAKE_PACKAGE = r'''
import json, os, sys

mode = os.environ.get("FAKE_SM_MODE", "ok")
args = sys.argv[1:]
if args[:1] == ["guide"]:
    if mode == "guide-fail":
        sys.exit(5)
    print("## Fake supermemory guide")
    print("Use memory_recall first; memory_remember for durable facts.")
    print("data dir: " + os.environ.get("SUPERMEMORY_HOME", "?"))
elif args[:2] == ["model", "install"]:
    print("fake model install")
    sys.exit(3 if mode == "model-fail" else 0)
elif args[:1] == ["doctor"]:
    warnings = ["embedding model missing in /fake/models: lexical-only"] if mode == "doctor-warn" else []
    print(json.dumps({"ok": True, "warnings": warnings}) if "--json" in args else "ok")
elif args[:1] == ["mcp"]:
    if mode == "mcp-dead":
        print("boom: cannot open database", file=sys.stderr)
        sys.exit(4)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {},
                "serverInfo": {"name": "fake-supermemory", "version": "9.9"}}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
else:
    sys.exit(2)
'''


@pytest.fixture
def env(tmp_path):
    return Env(tmp_path)


@pytest.fixture
def fakepkg(tmp_path):
    pkg = tmp_path / "fakepkg" / "supermemory"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__main__.py").write_text(FAKE_PACKAGE, encoding="utf-8")
    return pkg.parent


def handshake(command: str, args: list, extra_env: dict, base_env: dict, cwd: Path, timeout=20.0):
    """Spawn exactly command+args(+env), send initialize, return the first id=1 answer."""
    full = dict(base_env)
    full.update(extra_env)
    proc = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=full, cwd=str(cwd))
    lines: queue.Queue = queue.Queue()

    def reader():
        for raw in proc.stdout:
            lines.put(raw)
        lines.put(None)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        proc.stdin.write(inst.INITIALIZE_REQUEST.encode())
        proc.stdin.flush()
        while True:
            raw = lines.get(timeout=timeout)
            if raw is None:
                return None
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("id") == 1:
                return msg
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        t.join(timeout=10)
        proc.stdout.close()


# ---------------------------------------------------------------------------
# CLI surface


def test_help_lists_every_flag():
    res = subprocess.run([sys.executable, str(INSTALL), "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    for flag in ["--dry-run", "--dev", "--uninstall", "--purge", "--no-hooks", "--claude-only", "--codex-only",
                 "--project", "--no-instructions", "--no-launcher", "--no-model", "--no-selfcheck", "--python",
                 "--no-pip", "--home", "--yes"]:
        assert flag in res.stdout


def test_claude_only_and_codex_only_are_exclusive(env):
    res = env.run("--claude-only", "--codex-only")
    assert res.returncode == 2
    assert "argument --codex-only: not allowed with argument --claude-only" in res.stderr
    assert snapshot(env.home) == {}


# ---------------------------------------------------------------------------
# dry run


@pytest.mark.parametrize("with_fixtures", [False, True])
def test_dry_run_writes_nothing(env, with_fixtures):
    if with_fixtures:
        env.with_fixtures()
    before = snapshot(env.root)
    res = env.run("--dry-run")
    assert res.returncode == 0, res.output
    assert snapshot(env.root) == before
    assert not env.data.exists()
    for path in [env.claude_json, env.settings, env.claude_md, env.config_toml, env.hooks_json, env.agents_md,
                 env.launcher]:
        assert f"+++ {path}" in res.stdout
    assert "+[mcp_servers.supermemory]" in res.stdout
    assert f'+exec {shlex.quote(sys.executable)} -m supermemory "$@"' in res.stdout.splitlines()


def test_dry_run_uninstall_writes_nothing(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    before = snapshot(env.root)
    res = env.run("--uninstall", "--dry-run")
    assert res.returncode == 0, res.output
    assert snapshot(env.root) == before
    assert "-[mcp_servers.supermemory]" in res.stdout


# ---------------------------------------------------------------------------
# a real run


def test_fresh_install_writes_every_file(env):
    res = env.run()
    assert res.returncode == 0, res.output
    entry = load_json(env.claude_json)["mcpServers"]["supermemory"]
    assert entry == {"type": "stdio", "command": sys.executable, "args": ["-m", "supermemory", "mcp"],
                     "env": {"SUPERMEMORY_HOME": str(env.data)}}
    claude_hooks = our_hook_commands(load_json(env.settings))
    assert set(claude_hooks) == {"SessionStart", "PreCompact", "SessionEnd"}
    groups = load_json(env.settings)["hooks"]
    assert groups["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert groups["PreCompact"][0].get("matcher", "") == ""
    for event, sub in [("SessionStart", "session-start"), ("PreCompact", "pre-compact"), ("SessionEnd", "session-end")]:
        (cmd,) = claude_hooks[event]
        assert cmd.endswith(f'"{sys.executable}" -m supermemory hook {sub} --platform claude-code')
        assert groups[event][0]["hooks"][0]["timeout"] == 10
    assert "[mcp_servers.supermemory]" in env.config_toml.read_text(encoding="utf-8")
    assert set(our_hook_commands(load_json(env.hooks_json))) == {"SessionStart", "PreCompact", "Stop"}
    block = real_guide_block(env)
    assert "## Long-term memory (supermemory)" in block  # the real guide, not the fallback
    assert env.claude_md.read_text(encoding="utf-8") == block
    assert env.agents_md.read_text(encoding="utf-8") == block
    state = load_json(env.data / "install-state.json")
    assert all(rec["created"] for rec in state["files"].values())
    assert len(state["files"]) == 7
    assert state["files"][str(env.launcher)] == {"kind": "launcher", "created": True}
    assert "trust" in res.stdout and "/hooks" in res.stdout
    assert env.data.stat().st_mode & 0o777 == 0o700


def test_hooks_json_shape_is_what_codex_accepts(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    for path in [env.hooks_json, env.settings]:
        obj = load_json(path)
        if path == env.hooks_json:
            assert set(obj) <= {"description", "hooks"}
        for event, groups in obj["hooks"].items():
            assert isinstance(groups, list)
            for group in groups:
                assert isinstance(group["hooks"], list) and group["hooks"]
                if "matcher" in group:
                    assert isinstance(group["matcher"], str)
                for hook in group["hooks"]:
                    assert hook["type"] == "command" and isinstance(hook["command"], str)
                    if MARKER in hook["command"]:
                        assert set(hook) == {"type", "command", "timeout"} and hook["timeout"] == 10
    codex = load_json(env.hooks_json)
    assert codex["description"] == "my own codex hooks"
    start = codex["hooks"]["SessionStart"]
    assert start[0]["hooks"][0]["command"] == "python3 ~/.codex/hooks/ctx.py"  # the user's group stays first
    assert start[1]["matcher"] == "startup|resume|clear|compact"
    assert our_hook_commands(codex)["Stop"][0].endswith("-m supermemory hook stop --platform codex")
    assert codex["hooks"]["PreToolUse"] == [{"matcher": "Bash", "hooks": [{"type": "command",
                                                                           "command": "~/.codex/hooks/guard.sh"}]}]


@needs_tomllib
def test_config_toml_parses_and_has_our_table(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    cfg = tomllib.loads(env.config_toml.read_text(encoding="utf-8"))
    ours = cfg["mcp_servers"]["supermemory"]
    assert ours == {"command": sys.executable, "args": ["-m", "supermemory", "mcp"],
                    "env": {"SUPERMEMORY_HOME": str(env.data)}, "startup_timeout_sec": 20}
    original = tomllib.loads((FIXTURES / "config.toml").read_text(encoding="utf-8"))
    del cfg["mcp_servers"]["supermemory"]
    assert cfg == original


def test_install_keeps_everything_else(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    claude = load_json(env.claude_json)
    orig = load_json(FIXTURES / "claude.json")
    assert list(claude["mcpServers"]) == ["github", "café", "supermemory"]
    del claude["mcpServers"]["supermemory"]
    assert claude == orig
    settings = load_json(env.settings)
    assert settings["hooks"]["SessionStart"][0] == {"matcher": "startup", "hooks": [
        {"type": "command", "command": "echo hello from the user"}]}
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    assert settings["permissions"] == {"allow": ["Bash(git status)"]} and settings["model"] == "opus"
    # config.toml: everything outside our table is byte-identical
    text = env.config_toml.read_text(encoding="utf-8")
    table = inst.render_codex_table(sys.executable, ["-m", "supermemory", "mcp"], {"SUPERMEMORY_HOME": str(env.data)})
    assert text.count(table) == 1
    assert text.replace("\n" + table, "", 1) == (FIXTURES / "config.toml").read_text(encoding="utf-8")
    # placed right after the last [mcp_servers.*] table (and its trailing comment), before [features]
    assert text.index('ZETA = "1"') < text.index("# trailing comment right") < text.index(table) < text.index("[features]")
    md = env.claude_md.read_text(encoding="utf-8")
    assert md.startswith((FIXTURES / "CLAUDE.md").read_text(encoding="utf-8") + "\n\n" + inst.BLOCK_BEGIN)


def test_install_twice_is_byte_identical(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    first = snapshot(env.home)
    backups = snapshot(env.data / "backups")
    state = (env.data / "install-state.json").read_bytes()
    res = env.run()
    assert res.returncode == 0, res.output
    assert snapshot(env.home) == first
    assert snapshot(env.data / "backups") == backups  # nothing modified, so nothing backed up
    assert (env.data / "install-state.json").read_bytes() == state
    assert res.stdout.count("[--] unchanged") == 7  # six config files and the launcher


def test_reinstall_replaces_our_entries_in_place(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    other = env.root / "other-data"
    res = env.run(extra_env={"SUPERMEMORY_HOME": str(other)})
    assert res.returncode == 0, res.output
    settings = load_json(env.settings)
    assert [len(v) for v in our_hook_commands(settings).values()] == [1, 1, 1]
    assert all(str(other) in c for cmds in our_hook_commands(settings).values() for c in cmds)
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup"  # user's group still first
    text = env.config_toml.read_text(encoding="utf-8")
    assert text.count("[mcp_servers.supermemory]") == 2  # ours + the one inside the fixture's ''' string
    assert str(other) in text and str(env.data) not in text
    assert load_json(env.claude_json)["mcpServers"]["supermemory"]["env"] == {"SUPERMEMORY_HOME": str(other)}


# ---------------------------------------------------------------------------
# uninstall


def test_uninstall_restores_user_files_byte_identical(env):
    env.with_fixtures()
    before = snapshot(env.home)
    assert env.run().returncode == 0
    assert env.agents_md.exists()  # created by us
    assert snapshot(env.home) != before
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert snapshot(env.home) == before  # includes: AGENTS.md (ours) is gone
    assert env.data.is_dir()  # data dir kept
    state = load_json(env.data / "install-state.json")   # kept: it says these files are the user's again
    assert state["files"] == {} and str(env.claude_json) in state["uninstalled"]


def test_uninstall_of_fresh_install_removes_what_we_created(env):
    assert env.run().returncode == 0
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert snapshot(env.home) == {}  # files and the .claude / .codex dirs we made
    assert env.data.is_dir()


def test_uninstall_keeps_later_user_edits(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    settings = load_json(env.settings)
    settings["hooks"]["UserPromptSubmit"] = [{"hooks": [{"type": "command", "command": "echo later"}]}]
    env.settings.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    extra = '\n[mcp_servers.later]\ncommand = "later"\n'
    with env.config_toml.open("a", encoding="utf-8") as fh:
        fh.write(extra)
    codex_hooks = load_json(env.hooks_json)
    codex_hooks["hooks"]["SessionStart"][1]["hooks"].append({"type": "command", "command": "echo mine", "timeout": 3})
    env.hooks_json.write_text(json.dumps(codex_hooks), encoding="utf-8")

    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    after = load_json(env.settings)
    assert our_hook_commands(after) == {}
    assert after["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == "echo later"
    expected = load_json(FIXTURES / "settings.json")
    expected["hooks"]["UserPromptSubmit"] = after["hooks"]["UserPromptSubmit"]
    assert after == expected
    # text edit: our table removed exactly, the user's new table after it survives
    assert env.config_toml.read_text(encoding="utf-8") == (FIXTURES / "config.toml").read_text(encoding="utf-8") + extra
    # a user hook added into our matcher group is kept, ours removed
    left = load_json(env.hooks_json)
    assert our_hook_commands(left) == {}
    assert left["hooks"]["SessionStart"][1] == {"matcher": "startup|resume|clear|compact",
                                                "hooks": [{"type": "command", "command": "echo mine", "timeout": 3}]}
    # untouched by the user since install: back to the original bytes
    assert env.claude_json.read_bytes() == (FIXTURES / "claude.json").read_bytes()
    assert env.claude_md.read_bytes() == (FIXTURES / "CLAUDE.md").read_bytes()


def test_uninstall_without_state_still_removes_our_entries(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    (env.data / "install-state.json").unlink()
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert "supermemory" not in load_json(env.claude_json)["mcpServers"]
    assert load_json(env.claude_json) == load_json(FIXTURES / "claude.json")
    assert load_json(env.settings) == load_json(FIXTURES / "settings.json")
    assert env.config_toml.read_bytes() == (FIXTURES / "config.toml").read_bytes()
    assert inst.BLOCK_BEGIN not in env.claude_md.read_text(encoding="utf-8")
    assert env.agents_md.exists() and not env.agents_md.read_text(encoding="utf-8").strip()  # never deleted blind
    assert not env.launcher.exists()  # its marker line says it is ours


def _readme_manual_registration(python: str) -> tuple[bytes, bytes]:
    """README's "Manual registration" blocks (config.toml, ~/.claude.json) with `python` as the venv's Python."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("Manual registration", 1)[1]
    toml_block, json_block = re.findall(r"```(?:toml|json)\n(.*?)```", readme, re.S)[:2]
    venv = "/home/you/.supermemory/venv/bin/python"
    assert venv in toml_block and venv in json_block
    return toml_block.replace(venv, python).encode("utf-8"), json_block.replace(venv, python).encode("utf-8")


class DefaultDataDirHome(Env):
    """A home whose data dir is the default ~/.supermemory (no SUPERMEMORY_HOME): our entries carry no env, so
    README's "Manual registration" written by hand with the real Python is exactly what install writes."""

    def __init__(self, tmp_path: Path, hand_written: bool):
        super().__init__(tmp_path)
        self.data = self.home / ".supermemory"
        self.codex.mkdir()
        self.toml_bytes, self.json_bytes = _readme_manual_registration(sys.executable)
        if hand_written:
            self.config_toml.write_bytes(self.toml_bytes)
            self.claude_json.write_bytes(self.json_bytes)

    def environ(self, pythonpath=None, **extra):
        env = super().environ(pythonpath, **extra)
        env.pop("SUPERMEMORY_HOME")
        return env

    def ok(self, *args) -> str:
        res = self.run("--no-backfill", *args)
        assert res.returncode == 0, res.output
        return res.output

    def hand_written_intact(self) -> bool:
        return self.config_toml.read_bytes() == self.toml_bytes and self.claude_json.read_bytes() == self.json_bytes


@pytest.mark.parametrize("again", ["--uninstall", "--purge"])
def test_an_uninstall_after_an_uninstall_leaves_a_hand_written_entry_alone(tmp_path, again):
    """Found by a fresh-user run: the first --uninstall kept README's "Manual registration" written by hand (install
    had recorded it as the user's), but it dropped that record with the rest, so a second --uninstall, or --purge
    after it, took the entries for ours: ~/.claude.json became {} and the config.toml table was gone."""
    home = DefaultDataDirHome(tmp_path, hand_written=True)
    home.ok()
    assert "(yours)" in home.ok("--uninstall") and home.hand_written_intact()
    out = home.ok(again)
    assert home.hand_written_intact(), out
    assert "[ok] removed our entries" not in out
    if again == "--uninstall":
        assert "nothing is installed" in out and "uninstalled." not in out
        assert home.ok("--uninstall") == out and home.hand_written_intact()   # and again: still nothing
    else:
        assert not home.data.exists()   # the data dir goes, the user's files stay
    assert sorted(p.name for p in home.home.iterdir()) == [".claude.json", ".codex"] + (
        [".supermemory"] if again == "--uninstall" else [])


def test_reinstalling_after_an_uninstall_keeps_a_hand_written_entry_through_every_uninstall(tmp_path):
    home = DefaultDataDirHome(tmp_path, hand_written=True)
    for _ in range(2):
        assert "--uninstall keeps it" in home.ok() and home.hand_written_intact()
        assert "(yours)" in home.ok("--uninstall") and home.hand_written_intact()
        assert not home.settings.exists() and not home.agents_md.exists()   # what install wrote is gone
    assert "nothing is installed" in home.ok("--uninstall") and home.hand_written_intact()


def test_a_narrow_uninstall_run_twice_leaves_the_hand_written_entry_it_kept(tmp_path):
    home = DefaultDataDirHome(tmp_path, hand_written=True)
    home.ok()
    home.ok("--uninstall", "--claude-only")
    out = home.ok("--uninstall", "--claude-only")   # Codex is still installed: only ~/.claude.json was given back
    assert "already removed our entries" in out and home.hand_written_intact(), out
    assert home.hooks_json.exists()
    home.ok("--uninstall")
    assert home.hand_written_intact() and not home.hooks_json.exists()


def test_purge_names_the_entries_uninstall_kept_that_run_the_deleted_data_dir(env):
    """fu30 D5: after an uninstall kept an edited hook, --purge deleted the venv and said "nothing to remove"; the hook
    then failed (exit 127) at every session start."""
    assert env.run("--codex-only", "--no-backfill").returncode == 0
    _edit_json(env.hooks_json, lambda o: o["hooks"]["Stop"][0]["hooks"][0].update(
        command=o["hooks"]["Stop"][0]["hooks"][0]["command"] + " --quiet"))
    assert f"kept the supermemory hook(s) in {env.hooks_json}" in env.run("--uninstall", "--no-backfill").stdout
    res = env.run("--purge", "--no-backfill")
    assert res.returncode == 0, res.output
    assert not env.data.exists()
    assert f"{env.hooks_json} still holds a supermemory entry that runs a Python under" in res.stdout
    assert f"{env.config_toml} still holds" not in res.stdout     # the table uninstall took back names nothing


def test_an_uninstall_after_an_uninstall_changes_nothing_without_a_hand_written_entry(tmp_path):
    home = DefaultDataDirHome(tmp_path, hand_written=False)
    home.codex.rmdir()
    for _ in range(2):   # a real install is removed by each uninstall after it
        home.ok()
        assert home.claude_json.exists() and home.config_toml.exists()
        assert "uninstalled." in home.ok("--uninstall")
        assert sorted(p.name for p in home.home.iterdir()) == [".supermemory"]
    # registered by hand only after the uninstall: the user's, so neither --uninstall nor --purge removes it
    home.codex.mkdir()
    home.config_toml.write_bytes(home.toml_bytes)
    home.claude_json.write_bytes(home.json_bytes)
    assert "nothing is installed" in home.ok("--uninstall") and home.hand_written_intact()
    home.ok("--purge")
    assert home.hand_written_intact() and not home.data.exists()


def test_uninstall_ends_by_saying_what_it_kept_where_how_big_and_that_purge_deletes_it(env):
    assert env.run().returncode == 0
    (env.data / "memory.db").write_bytes(b"\0" * (3 * 1024 * 1024))
    (env.data / "venv" / "lib").mkdir(parents=True)
    (env.data / "venv" / "lib" / "big.so").write_bytes(b"\0" * (2 * 1024 * 1024))
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    last = res.stdout.splitlines()[-3:]
    assert last[0] == "[ok] uninstalled."
    assert last[1].startswith(f"[--] kept the data dir {env.data} (5.0 MB): your memories (memory.db), ")
    assert "the Python environment the CLI runs in (venv/)" in last[1]
    assert "`python3 install.py --purge` deletes it" in last[2]
    assert (env.data / "memory.db").exists() and (env.data / "venv").is_dir()
    dry = env.run("--uninstall", "--dry-run")
    assert "uninstalled" not in dry.stdout and f"[--] would keep the data dir {env.data}" in dry.stdout


def test_purge_removes_registrations_and_data_dir(env):
    env.with_fixtures()
    before = snapshot(env.home)
    assert env.run().returncode == 0
    res = env.run("--purge")
    assert res.returncode == 0, res.output
    assert snapshot(env.home) == before
    assert not env.data.exists()


def test_purge_refuses_to_delete_home(env):
    assert env.run().returncode == 0
    res = env.run("--purge", extra_env={"SUPERMEMORY_HOME": str(env.home)})
    assert res.returncode == 2
    assert "refusing" in res.stdout
    assert env.home.is_dir()


# ---------------------------------------------------------------------------
# uninstall removes only what install wrote: an entry close to ours is the user's


def _edit_json(path: Path, edit) -> None:
    obj = load_json(path)
    edit(obj)
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def test_uninstall_leaves_our_entries_the_user_edited_since_and_says_so(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    _edit_json(env.claude_json, lambda o: o["mcpServers"]["supermemory"]["args"].append("--verbose"))
    edited = load_json(env.claude_json)["mcpServers"]["supermemory"]

    def edit_hook(o):
        hook = o["hooks"]["SessionStart"][1]["hooks"][0]
        hook["command"] = hook["command"].replace("session-start", "session-start --quiet")
    _edit_json(env.settings, edit_hook)
    mine = load_json(env.settings)["hooks"]["SessionStart"][1]
    _edit_json(env.hooks_json, lambda o: o["hooks"]["Stop"][0]["hooks"][0].update(timeout=30))
    stop = load_json(env.hooks_json)["hooks"]["Stop"]

    dry = env.run("--uninstall", "--dry-run")
    assert f"would keep the supermemory MCP server entry in {env.claude_json}" in dry.stdout
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert load_json(env.claude_json)["mcpServers"]["supermemory"] == edited
    assert f"kept the supermemory MCP server entry in {env.claude_json}: it is not what install.py wrote" in res.stdout
    settings = load_json(env.settings)
    assert settings["hooks"]["SessionStart"] == [load_json(FIXTURES / "settings.json")["hooks"]["SessionStart"][0], mine]
    assert len(our_hook_commands(settings)["SessionStart"]) == 1 and set(our_hook_commands(settings)) == {"SessionStart"}
    assert f"kept the supermemory hook(s) in {env.settings}" in res.stdout
    codex = load_json(env.hooks_json)
    assert codex["hooks"]["Stop"] == stop and set(our_hook_commands(codex)) == {"Stop"}   # the rest of ours is gone
    assert env.config_toml.read_bytes() == (FIXTURES / "config.toml").read_bytes()   # untouched by the user: back


@pytest.mark.parametrize("kind", ["mcp", "hook"])
def test_a_hand_written_entry_close_to_ours_comes_back_after_uninstall(env, kind):
    """Such an entry (other args, an unquoted Python) was taken for one an earlier run of this install wrote, since
    only its command was compared (hooks: not even that): install replaced it and --uninstall deleted it."""
    (env.home / ".claude").mkdir()
    if kind == "mcp":
        path = env.claude_json
        path.write_text(json.dumps({"mcpServers": {"supermemory": {
            "type": "stdio", "command": sys.executable, "args": ["-m", "supermemory", "mcp", "--verbose"]}}}) + "\n",
            encoding="utf-8")
    else:
        path = env.settings
        path.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [{
            "type": "command", "command": f"{sys.executable} -m supermemory hook session-start --platform claude-code",
            "timeout": 10}]}]}}) + "\n", encoding="utf-8")
    original = path.read_bytes()
    assert env.run("--claude-only", "--no-backfill").returncode == 0
    assert path.read_bytes() != original   # install put ours in its place
    res = env.run("--uninstall", "--no-backfill")
    assert res.returncode == 0, res.output
    assert path.read_bytes() == original, res.output


def test_uninstall_leaves_a_near_copy_of_ours_in_a_file_install_never_touched(env):
    env.codex.mkdir()
    near = {"hooks": {"Stop": [{"hooks": [{"type": "command", "timeout": 10,
                                           "command": f'"{sys.executable}" -m supermemory hook stop --platform codex --x'}]}]}}
    env.hooks_json.write_text(json.dumps(near), encoding="utf-8")
    assert env.run("--claude-only").returncode == 0
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert load_json(env.hooks_json) == near
    assert f"kept the supermemory hook(s) in {env.hooks_json}" in res.stdout


# ---------------------------------------------------------------------------
# startup_timeout_sec: ours to set only where the user has not chosen one


def _codex_only(env: Env, *args):
    res = env.run("--codex-only", "--no-hooks", "--no-instructions", "--no-launcher", "--no-backfill", *args)
    assert res.returncode == 0, res.output
    return res.output


@needs_tomllib
def test_a_reinstall_keeps_a_startup_timeout_the_user_raised_and_uninstall_leaves_it(env):
    env.with_fixtures()
    _codex_only(env)
    raised = env.config_toml.read_text(encoding="utf-8").replace("startup_timeout_sec = 20", "startup_timeout_sec = 60")
    env.config_toml.write_text(raised, encoding="utf-8")
    state = (env.data / "install-state.json").read_bytes()
    out = _codex_only(env)
    assert f"unchanged {env.config_toml}" in out
    assert env.config_toml.read_text(encoding="utf-8") == raised   # not put back to 20
    assert (env.data / "install-state.json").read_bytes() == state
    out = _codex_only(env, "--uninstall")
    # their value goes only with the whole table: it stays, named, rather than being deleted with ours
    assert env.config_toml.read_text(encoding="utf-8") == raised
    assert f"kept the [mcp_servers.supermemory] table in {env.config_toml}" in out
    assert tomllib.loads(raised)["mcp_servers"]["supermemory"]["startup_timeout_sec"] == 60


@needs_tomllib
@pytest.mark.parametrize("default_data_dir", [False, True])
def test_a_hand_written_table_keeps_its_own_startup_timeout_and_comes_back_byte_identical(tmp_path, default_data_dir):
    home = DefaultDataDirHome(tmp_path, hand_written=False) if default_data_dir else Env(tmp_path)
    home.codex.mkdir(exist_ok=True)
    toml_bytes = _readme_manual_registration(sys.executable)[0].replace(b"startup_timeout_sec = 20",
                                                                       b"startup_timeout_sec = 60")
    home.config_toml.write_bytes(toml_bytes)
    _codex_only(home)
    server = tomllib.loads(home.config_toml.read_text(encoding="utf-8"))["mcp_servers"]["supermemory"]
    assert server["startup_timeout_sec"] == 60 and server["command"] == sys.executable
    assert ("env" in server) != default_data_dir
    _codex_only(home, "--uninstall")
    assert home.config_toml.read_bytes() == toml_bytes


@needs_tomllib
def test_a_startup_timeout_an_earlier_install_wrote_is_still_ours_to_change(env):
    _codex_only(env)
    state_file = env.data / "install-state.json"
    state = load_json(state_file)
    assert state["files"][str(env.config_toml)]["startup_timeout_sec"] == 20   # what it wrote is recorded
    state["files"][str(env.config_toml)]["startup_timeout_sec"] = 15   # as an install.py that wrote 15 left it
    state_file.write_text(json.dumps(state), encoding="utf-8")
    env.config_toml.write_text(env.config_toml.read_text(encoding="utf-8").replace("= 20", "= 15"), encoding="utf-8")
    assert f"would delete {env.config_toml}" in _codex_only(env, "--uninstall", "--dry-run")
    assert "updated" in _codex_only(env)
    assert tomllib.loads(env.config_toml.read_text(encoding="utf-8"))["mcp_servers"]["supermemory"]["startup_timeout_sec"] == 20
    assert load_json(state_file)["files"][str(env.config_toml)]["startup_timeout_sec"] == 20


# ---------------------------------------------------------------------------
# scopes


def test_project_mode_writes_dot_mcp_json(env):
    project = env.root / "proj"
    project.mkdir()
    res = env.run("--project", str(project), "--no-hooks", "--no-instructions", "--claude-only")
    assert res.returncode == 0, res.output
    assert load_json(project / ".mcp.json")["mcpServers"]["supermemory"]["type"] == "stdio"
    assert not env.claude_json.exists()
    assert set(snapshot(env.home)) == {".local", ".local/bin", ".local/bin/supermemory"}  # only the launcher
    res = env.run("--uninstall", "--project", str(project), "--no-hooks", "--no-instructions", "--claude-only")
    assert res.returncode == 0, res.output
    assert not (project / ".mcp.json").exists()
    assert snapshot(env.home) == {}  # nothing else was registered, so the launcher went with it


def test_plain_uninstall_also_cleans_recorded_project_files(env):
    project = env.root / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "x"}}}', encoding="utf-8")
    assert env.run("--project", str(project)).returncode == 0
    assert env.run().returncode == 0
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert (project / ".mcp.json").read_text(encoding="utf-8") == '{"mcpServers": {"x": {"command": "x"}}}'
    assert snapshot(env.home) == {}


@pytest.mark.parametrize(
    "flags, present, absent",
    [
        (["--claude-only"], ["claude_json", "settings", "claude_md"], ["config_toml", "hooks_json", "agents_md"]),
        (["--codex-only"], ["config_toml", "hooks_json", "agents_md"], ["claude_json", "settings", "claude_md"]),
        (["--no-hooks"], ["claude_json", "config_toml", "claude_md", "agents_md"], ["settings", "hooks_json"]),
        (["--no-instructions"], ["claude_json", "settings", "config_toml", "hooks_json"], ["claude_md", "agents_md"]),
    ],
)
def test_scope_flags(env, flags, present, absent):
    res = env.run(*flags)
    assert res.returncode == 0, res.output
    for name in present:
        assert getattr(env, name).exists(), name
    for name in absent:
        assert not getattr(env, name).exists(), name
    recorded = set(load_json(env.data / "install-state.json")["files"])
    assert recorded == {str(getattr(env, name)) for name in present} | {str(env.launcher)}


def test_codex_home_is_respected(env):
    codex_home = env.root / "custom-codex"
    res = env.run("--codex-only", extra_env={"CODEX_HOME": str(codex_home)})
    assert res.returncode == 0, res.output
    assert (codex_home / "config.toml").exists() and (codex_home / "hooks.json").exists()
    assert (codex_home / "AGENTS.md").exists()
    assert not env.codex.exists()
    assert env.run("--uninstall", extra_env={"CODEX_HOME": str(codex_home)}).returncode == 0
    assert not codex_home.exists()


# ---------------------------------------------------------------------------
# launcher: ~/.local/bin/supermemory


EXPORT_LINE = 'export PATH="$HOME/.local/bin:$PATH"'


def bare_path(env: Env, *dirs: Path) -> dict:
    """extra_env for a PATH made only of dirs (plus an empty one), so no other `supermemory` is found."""
    empty = env.root / "empty-bin"
    empty.mkdir(exist_ok=True)
    return {"PATH": os.pathsep.join(str(d) for d in (*dirs, empty))}


def launcher_env(env: Env, pythonpath, **extra) -> dict:
    """The user's shell environment for running the launcher: no SUPERMEMORY_HOME unless given."""
    base = env.environ(pythonpath, **extra)
    if "SUPERMEMORY_HOME" not in extra:
        base.pop("SUPERMEMORY_HOME")
    return base


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_the_readmes_name_the_python_the_launcher_runs_not_the_system_python3(readme, monkeypatch, tmp_path):
    monkeypatch.delenv("SUPERMEMORY_HOME", raising=False)
    monkeypatch.setattr(Path, "home", lambda: tmp_path)
    paths = inst.Paths(inst.build_parser().parse_args([]))
    venv_python = "~/" + paths.venv_python().relative_to(tmp_path).as_posix()
    cli = (ROOT / readme).read_text(encoding="utf-8").split("## CLI", 1)[1].split("\n## ", 1)[0]
    assert f"`{venv_python} -m supermemory`" in cli     # what the launcher execs
    assert f"exec {paths.venv_python()} -m supermemory" in inst.render_launcher(str(paths.venv_python()), {})
    assert "`python3 -m supermemory …`" not in cli         # not on the system python3 after install.py


def test_launcher_is_created_and_runs_the_cli(env):
    res = env.run(extra_env=bare_path(env))
    assert res.returncode == 0, res.output
    text = env.launcher.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "#!/bin/sh" and lines[1].startswith(inst.LAUNCHER_MARKER)
    assert lines[-1] == f'exec {shlex.quote(sys.executable)} -m supermemory "$@"'
    assert os.access(env.launcher, os.X_OK) and not env.launcher.is_symlink()
    assert f"[ok] created {env.launcher}" in res.stdout
    out = subprocess.run([str(env.launcher), "--help"], env=launcher_env(env, [ROOT]), cwd=str(env.root),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: supermemory")


@pytest.mark.parametrize("data_name", ["data", "da ta 'o'brien' $HOME `x` \"q\" }"])
def test_launcher_uses_the_installs_data_dir_unless_the_caller_sets_one(env, fakepkg, data_name):
    data = env.root / data_name
    res = env.run(pythonpath=[fakepkg], extra_env={"SUPERMEMORY_HOME": str(data)})
    assert res.returncode == 0, res.output
    run = lambda **extra: subprocess.run([str(env.launcher), "guide"], env=launcher_env(env, [fakepkg], **extra),
                                         cwd=str(env.root), capture_output=True, text=True, timeout=60)
    out = run()
    assert out.returncode == 0, out.stderr
    assert f"data dir: {data}" in out.stdout.splitlines()
    other = env.root / "elsewhere"
    assert f"data dir: {other}" in run(SUPERMEMORY_HOME=str(other)).stdout.splitlines()


@pytest.mark.parametrize("bin_exists", [False, True])
def test_launcher_folder_is_created_when_missing_and_removed_only_if_we_made_it(env, bin_exists):
    if bin_exists:
        env.launcher.parent.mkdir(parents=True)
        (env.launcher.parent / "other-tool").write_text("#!/bin/sh\n", encoding="utf-8")
    assert env.run("--claude-only").returncode == 0
    assert env.launcher.is_file()
    created = load_json(env.data / "install-state.json")["created_dirs"]
    assert (str(env.launcher.parent) in created) is not bin_exists
    assert (str(env.home / ".local") in created) is not bin_exists
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert not env.launcher.exists()
    if bin_exists:
        assert set(snapshot(env.home)) == {".local", ".local/bin", ".local/bin/other-tool"}
    else:
        assert snapshot(env.home) == {}


def test_reinstall_updates_our_launcher_in_place_with_a_backup(env):
    assert env.run().returncode == 0
    first = env.launcher.read_bytes()
    other = env.root / "other-data"
    res = env.run(extra_env={"SUPERMEMORY_HOME": str(other)})
    assert res.returncode == 0, res.output
    assert f"[ok] updated {env.launcher}" in res.stdout
    assert f"SUPERMEMORY_HOME={other}" in env.launcher.read_text(encoding="utf-8").splitlines()[4]
    backups = [p for p in (other / "backups").rglob("*") if p.is_file() and p.read_bytes() == first]
    assert len(backups) == 1


def test_reinstall_makes_our_launcher_executable_again(env):
    assert env.run().returncode == 0
    env.launcher.chmod(0o644)
    res = env.run()
    assert res.returncode == 0, res.output
    assert f"[ok] made {env.launcher} executable" in res.stdout
    assert os.access(env.launcher, os.X_OK)


PIP_USER_SCRIPT = "#!/usr/bin/python3\nimport sys\nfrom supermemory.cli import main\nsys.exit(main())\n"


@pytest.mark.parametrize("foreign", ["pip --user script", "pipx symlink", "directory"])
def test_foreign_launcher_is_never_overwritten_nor_removed(env, foreign):
    env.launcher.parent.mkdir(parents=True)
    target = env.root / "pipx" / "venvs" / "supermemory" / "bin" / "supermemory"
    if foreign == "pip --user script":
        env.launcher.write_text(PIP_USER_SCRIPT, encoding="utf-8")
        env.launcher.chmod(0o755)
        why = f"no `{inst.LAUNCHER_MARKER}` marker line"
    elif foreign == "pipx symlink":
        target.parent.mkdir(parents=True)
        target.write_text("#!/bin/sh\n" + inst.LAUNCHER_MARKER + " a marker behind a link is not ours\n",
                          encoding="utf-8")
        env.launcher.symlink_to(target)
        why = f"a symlink to {target}"
    else:
        env.launcher.mkdir()
        why = "not a regular file"
    before = snapshot(env.root / "home" / ".local"), snapshot(env.root / "pipx")
    res = env.run(extra_env=bare_path(env, env.launcher.parent))
    assert res.returncode == 0, res.output  # the registrations are all in place
    assert f"[!!] {env.launcher} is not supermemory's launcher ({why}); left alone." in res.stdout
    assert "pipx uninstall supermemory" in res.stdout and f"{shlex.quote(sys.executable)} -m supermemory" in res.stdout
    assert "on your PATH" not in res.stdout and EXPORT_LINE not in res.stdout
    assert str(env.launcher) not in load_json(env.data / "install-state.json")["files"]
    res = env.run("--uninstall")
    assert res.returncode == 0, res.output
    assert f"[--] {env.launcher} is not supermemory's launcher ({why}); left alone" in res.stdout
    assert (snapshot(env.root / "home" / ".local"), snapshot(env.root / "pipx")) == before
    assert env.launcher.is_symlink() is (foreign == "pipx symlink")


def test_with_a_foreign_launcher_the_closing_hints_name_this_installs_cli_by_full_path(tmp_path):
    env = Env(tmp_path)
    _history(env)
    env.launcher.parent.mkdir(parents=True)
    env.launcher.write_text(PIP_USER_SCRIPT, encoding="utf-8")
    env.launcher.chmod(0o755)
    res = env.run(extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash", **bare_path(env, env.launcher.parent)})
    assert res.returncode == 0, res.output
    ours = f"SUPERMEMORY_HOME={shlex.quote(str(env.data))} {shlex.quote(sys.executable)} -m supermemory"
    assert f"Run it any time: {ours} backfill --claude" in res.stdout and f"rules: {ours} import-rules" in res.stdout
    assert f"run it directly: {ours}" in res.stdout
    hints = [line for line in res.stdout.splitlines() if "backfill --claude" in line or "import-rules" in line]
    assert hints and all(f"{ours} backfill" in line or f"{ours} import-rules" in line for line in hints)
    assert "`supermemory " not in res.stdout and ": supermemory backfill" not in res.stdout


def test_with_our_launcher_the_closing_hints_say_supermemory(tmp_path):
    env = Env(tmp_path)
    _history(env)
    res = env.run(extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert res.returncode == 0, res.output
    assert "Run it any time: supermemory backfill --claude" in res.stdout and "-m supermemory backfill" not in res.stdout


@pytest.mark.parametrize(
    "flags, removed",
    [
        (["--uninstall"], True),
        (["--purge"], True),
        (["--uninstall", "--claude-only"], False),  # Codex is still registered
        (["--uninstall", "--no-hooks"], False),  # the hooks are still registered
        (["--uninstall", "--no-launcher"], False),
    ],
)
def test_uninstall_removes_our_launcher_with_the_last_registration(env, flags, removed):
    assert env.run().returncode == 0
    ours = env.launcher.read_bytes()
    res = env.run(*flags)
    assert res.returncode == 0, res.output
    if removed:
        assert not env.launcher.exists() and not (env.home / ".local").exists()
        assert f"[ok] deleted our launcher {env.launcher}" in res.stdout
    else:
        assert env.launcher.read_bytes() == ours
        assert "launcher" not in res.stdout
        res = env.run("--uninstall")  # the rest later: now it goes
        assert res.returncode == 0, res.output
        assert not env.launcher.exists()


def test_no_launcher_flag_writes_no_launcher(env):
    res = env.run("--no-launcher", extra_env=bare_path(env))
    assert res.returncode == 0, res.output
    assert not (env.home / ".local").exists()
    assert "PATH" not in res.stdout


def test_path_message_says_supermemory_is_on_path_when_it_is(env):
    env.launcher.parent.mkdir(parents=True)
    res = env.run(extra_env=bare_path(env, env.launcher.parent))
    assert res.returncode == 0, res.output
    assert f"[ok] supermemory is on your PATH ({env.launcher})" in res.stdout.splitlines()
    assert "export PATH" not in res.stdout


@pytest.mark.parametrize(
    "shell, rc", [("/bin/bash", "~/.bashrc"), ("/usr/bin/zsh", "~/.zshrc"), ("/bin/sh", "~/.profile"), ("", "~/.profile")]
)
def test_path_message_prints_the_line_to_add_when_not_on_path(env, shell, rc):
    res = env.run(extra_env={**bare_path(env), "SHELL": shell})
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert "[!!] supermemory is not on your PATH yet (~/.local/bin is not in PATH)." in lines
    assert f"      Add this line to {rc}, then open a new shell:" in lines
    assert lines[lines.index(f"      Add this line to {rc}, then open a new shell:") + 1] == "    " + EXPORT_LINE
    assert "is on your PATH" not in res.stdout


def test_path_message_for_fish_uses_fish_syntax(env):
    res = env.run(extra_env={**bare_path(env), "SHELL": "/usr/bin/fish"})
    assert res.returncode == 0, res.output
    assert "      Add this line to ~/.config/fish/config.fish, then open a new shell:" in res.stdout.splitlines()
    assert '    set -gx PATH "$HOME/.local/bin" $PATH' in res.stdout.splitlines()


DEBIAN_PROFILE = '# set PATH so it includes user\'s private bin if it exists\nif [ -d "$HOME/.local/bin" ] ; then\n' \
                 '    PATH="$HOME/.local/bin:$PATH"\nfi\n'


def test_path_message_names_the_login_profile_that_picks_up_a_new_folder(env):
    (env.home / ".profile").write_text(DEBIAN_PROFILE, encoding="utf-8")
    res = env.run(extra_env={**bare_path(env), "SHELL": "/bin/bash"})
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert "      ~/.profile adds ~/.local/bin to PATH at your next login, now that the folder exists." in lines
    assert "      Until then, run this line in open shells (or add it to ~/.bashrc):" in lines
    assert "    " + EXPORT_LINE in lines


def test_path_message_warns_when_another_supermemory_comes_first(env):
    other_bin = env.root / "usr-local-bin"
    other_bin.mkdir()
    (other_bin / "supermemory").write_text("#!/bin/sh\n", encoding="utf-8")
    (other_bin / "supermemory").chmod(0o755)
    env.launcher.parent.mkdir(parents=True)
    res = env.run(extra_env={**bare_path(env, other_bin, env.launcher.parent), "SHELL": "/bin/bash"})
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert (f"[!!] `supermemory` on your PATH is {other_bin / 'supermemory'}, not this install's launcher "
            f"{env.launcher}.") in lines
    assert "    " + EXPORT_LINE in lines


def test_dry_run_shows_the_launcher_and_writes_nothing(env):
    before = snapshot(env.root)
    res = env.run("--dry-run", extra_env=bare_path(env))
    assert res.returncode == 0, res.output
    assert snapshot(env.root) == {**before, "empty-bin": "<dir>"}
    assert f"[~~] would create {env.launcher}" in res.stdout
    assert f"+++ {env.launcher}" in res.stdout and "+#!/bin/sh" in res.stdout
    assert "    " + EXPORT_LINE in res.stdout.splitlines()
    # with our launcher in place and unchanged, a dry run reports it unchanged
    assert env.run(extra_env=bare_path(env)).returncode == 0
    res = env.run("--dry-run", extra_env=bare_path(env))
    assert f"[--] unchanged {env.launcher}" in res.stdout
    res = env.run("--uninstall", "--dry-run")
    assert f"[~~] would delete {env.launcher}" in res.stdout and f"--- {env.launcher}" in res.stdout
    assert env.launcher.is_file()


# ---------------------------------------------------------------------------
# robustness


@pytest.mark.parametrize(
    "attr, content, message",
    [
        ("claude_json", '{"mcpServers": {"x": 1},\n', "not valid JSON"),
        ("claude_json", "[1, 2]\n", "not a JSON object"),
        ("settings", '{"hooks": [1]}\n', '"hooks" is not a JSON object'),
        ("hooks_json", "{nope}\n", "not valid JSON"),
        ("config_toml", "[mcp_servers.alpha\ncommand = 1\n", "TOML"),
        ("claude_md", "x\n" + "<!-- supermemory:begin -->\n", "supermemory:end"),
    ],
)
def test_malformed_file_is_left_untouched_and_reported(env, attr, content, message):
    path = getattr(env, attr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    res = env.run()
    assert res.returncode == 2
    assert path.read_text(encoding="utf-8") == content
    assert f"{path}: " in res.stdout and message in res.stdout and "left untouched" in res.stdout
    others = [a for a in ["claude_json", "settings", "config_toml", "hooks_json"] if a != attr]
    for other in others:  # the rest is still registered
        assert getattr(env, other).exists()
    backups = env.data / "backups"
    assert not backups.exists() or not [p for p in backups.rglob("*") if p.is_file()]


def test_symlinked_config_is_written_through(env):
    real = env.root / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n', encoding="utf-8")
    (env.home / ".claude").mkdir()
    env.settings.symlink_to(real)
    assert env.run("--claude-only").returncode == 0
    assert env.settings.is_symlink()
    assert our_hook_commands(load_json(real))
    assert env.run("--uninstall").returncode == 0
    assert env.settings.is_symlink() and real.read_text(encoding="utf-8") == '{"model": "opus"}\n'


def test_existing_file_mode_is_kept(env):
    env.claude_json.write_text("{}\n", encoding="utf-8")
    env.claude_json.chmod(0o640)
    assert env.run("--claude-only").returncode == 0
    assert env.claude_json.stat().st_mode & 0o777 == 0o640


def test_backups_are_taken_before_modifying(env):
    env.with_fixtures()
    assert env.run().returncode == 0
    state = load_json(env.data / "install-state.json")
    rec = state["files"][str(env.claude_json)]
    assert rec["created"] is False
    backup = Path(rec["backup"])
    assert backup.is_relative_to(env.data / "backups")
    assert backup.read_bytes() == (FIXTURES / "claude.json").read_bytes()
    assert state["files"][str(env.agents_md)] == {"kind": "codex_instructions", "created": True}


# ---------------------------------------------------------------------------
# package interaction (guide / model / doctor / MCP handshake) via a fake package


def test_guide_output_becomes_the_block(env, fakepkg):
    res = env.run(pythonpath=[fakepkg])
    assert res.returncode == 0, res.output
    for path in (env.claude_md, env.agents_md):
        text = path.read_text(encoding="utf-8")
        assert "## Fake supermemory guide" in text
        assert f"data dir: {env.data}" in text  # guide ran with the explicit SUPERMEMORY_HOME
        assert text.startswith(inst.BLOCK_BEGIN) and text.endswith(inst.BLOCK_END + "\n")


def test_guide_failure_falls_back_to_minimal_block(env, fakepkg):
    res = env.run(pythonpath=[fakepkg], extra_env={"FAKE_SM_MODE": "guide-fail"})
    assert res.returncode == 0, res.output
    text = env.claude_md.read_text(encoding="utf-8")
    body = text.split(inst.BLOCK_BEGIN)[1].split(inst.BLOCK_END)[0].strip().splitlines()
    assert len(body) == 3
    assert "memory_recall" in text and "memory_remember" in text and "supermemory guide" in text


def test_model_failure_is_reported_but_registration_continues(env, fakepkg):
    args = ["--python", sys.executable, "--no-pip", "--no-selfcheck"]
    res = env.run(*args, fast=False, pythonpath=[fakepkg], extra_env={"FAKE_SM_MODE": "model-fail"})
    assert res.returncode == 0, res.output
    assert "model install failed" in res.stdout and "-m supermemory model install" in res.stdout
    assert env.claude_json.exists() and env.config_toml.exists()


def test_selfcheck_ok_with_a_working_server(env, fakepkg):
    args = ["--python", sys.executable, "--no-pip", "--no-model"]
    res = env.run(*args, fast=False, pythonpath=[fakepkg])
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert "[ok] supermemory doctor" in lines
    assert not [ln for ln in lines if ln.startswith("[!!] doctor")] and "check failed" not in res.stdout
    # ~/.claude.json and config.toml name the same command, so it is spawned once
    assert res.stdout.count("MCP server answers initialize (fake-supermemory 9.9)") == 1


def test_selfcheck_relays_doctor_warnings_without_failing(env, fakepkg):
    args = ["--python", sys.executable, "--no-pip", "--no-model"]
    res = env.run(*args, fast=False, pythonpath=[fakepkg], extra_env={"FAKE_SM_MODE": "doctor-warn"})
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[lines.index("[ok] supermemory doctor") + 1] == \
        "[!!] doctor: embedding model missing in /fake/models: lexical-only"
    assert "self-check failed" not in res.stdout


def test_selfcheck_failure_warns_and_exits_1(env, fakepkg):
    args = ["--python", sys.executable, "--no-pip", "--no-model"]
    res = env.run(*args, fast=False, pythonpath=[fakepkg], extra_env={"FAKE_SM_MODE": "mcp-dead"})
    assert res.returncode == 1, res.output
    assert "MCP server check failed" in res.stdout and "cannot open database" in res.stdout
    assert "Fix:" in res.stdout
    assert env.claude_json.exists()  # registration stays


def test_missing_python_is_an_error(env):
    res = env.run("--python", str(env.root / "nope" / "python"), "--no-pip", "--no-model", "--no-selfcheck", fast=False)
    assert res.returncode == 2
    assert f"[!!] --python {env.root / 'nope' / 'python'} does not exist" in res.stdout.splitlines()
    assert snapshot(env.home) == {}


# ---------------------------------------------------------------------------
# the real server (lands in parallel)


REAL_SERVER = pytest.param(
    "real", marks=pytest.mark.skipif(not (ROOT / "supermemory" / "mcp" / "server.py").exists(),
                                     reason="supermemory/mcp/server.py is not there yet"))


@pytest.mark.parametrize("server", ["fake", REAL_SERVER])
def test_registered_commands_answer_initialize(env, fakepkg, server):
    """Spawn exactly what ~/.claude.json and config.toml say, and speak MCP initialize to it."""
    pythonpath = [fakepkg] if server == "fake" else [ROOT]
    args = ["--python", sys.executable, "--no-pip", "--no-model"]
    res = env.run(*args, fast=False, pythonpath=pythonpath)
    # --no-model: the real doctor warns that the model is missing (lexical-only), which is not a failure
    assert res.returncode == 0, res.output
    lines = res.stdout.splitlines()
    assert "[ok] supermemory doctor" in lines
    warnings = [ln for ln in lines if ln.startswith("[!!] doctor: ")]
    if server == "real":
        model_dir = env.data / "models" / "bge-small-en-v1.5"
        assert [w.startswith("[!!] doctor: embedding model not installed") and str(model_dir) in w
                for w in warnings] == [True], warnings
    else:
        assert warnings == []
    assert res.stdout.count("MCP server answers initialize") == 1, res.output
    base = env.environ(pythonpath)
    entry = load_json(env.claude_json)["mcpServers"]["supermemory"]
    assert entry["type"] == "stdio"
    specs = [(entry["command"], entry["args"], entry["env"])]
    if tomllib is not None:
        table = tomllib.loads(env.config_toml.read_text(encoding="utf-8"))["mcp_servers"]["supermemory"]
        specs.append((table["command"], table["args"], table.get("env", {})))
    for command, cargs, cenv in specs:
        msg = handshake(command, cargs, cenv, base, env.home)
        assert msg is not None and "serverInfo" in msg["result"], msg


# ---------------------------------------------------------------------------
# unit: TOML escaping and editing


TRICKY = [
    r"C:\Users\Me\AppData\Local\Programs\Python\Python312\python.exe",
    r"\\server\share\python.exe",
    "/home/o'brien/\"quoted\"/bin/python",
    "tab\there\nnewline\rcr",
    "ctl\x00\x01\x1f\x7f\b\f",
    "unicode: ü 日本語 ✓ 🐍",
    "#not a comment = [x] {y}",
    '"""triple""" \'\'\'',
    "trailing backslash\\",
    "",
]


@pytest.mark.parametrize("value", TRICKY)
def test_toml_string_round_trips(value):
    quoted = inst.toml_string(value)
    assert "\n" not in quoted
    decoded, end = inst._parse_basic(quoted, 0)
    assert decoded == value and end == len(quoted)
    if tomllib is not None:
        assert tomllib.loads(f"k = {quoted}\n")["k"] == value
        table = inst.render_codex_table(value or "python", [value, "-m"], {"SUPERMEMORY_HOME": value, "odd key": value})
        parsed = tomllib.loads(table)["mcp_servers"]["supermemory"]
        assert parsed["command"] == (value or "python") and parsed["args"] == [value, "-m"]
        assert parsed["env"] == {"SUPERMEMORY_HOME": value, "odd key": value}


def test_toml_string_rejects_lone_surrogates():
    with pytest.raises(ValueError, match=r"lone surrogate \(U\+DCFF\)"):
        inst.toml_string("bad\udcff")


def test_render_table_omits_empty_env():
    table = inst.render_codex_table("/usr/bin/python3", ["-m", "supermemory", "mcp"], {})
    assert table == ('[mcp_servers.supermemory]\ncommand = "/usr/bin/python3"\n'
                     'args = ["-m", "supermemory", "mcp"]\nstartup_timeout_sec = 20\n')


OURS_BETWEEN = """\
# top
[mcp_servers.alpha]
command = "a"

[mcp_servers.supermemory]   # old, hand written
command = "old"
# a comment inside our table
args = [
  "x",
]

[mcp_servers.supermemory_extra]
command = "not ours"

[mcp_servers.supermemory.env]
SUPERMEMORY_HOME = "/old"

[mcp_servers.zeta]
command = "z"
"""


def test_toml_replace_in_place_between_other_servers():
    new = inst.toml_upsert_table(OURS_BETWEEN, inst.codex_entry("/new/python", ["-m", "supermemory", "mcp"], {}))
    # only the lines of our keys change; the comments, the other tables and the env subtable stay where they were
    assert new == OURS_BETWEEN.replace('command = "old"', 'command = "/new/python"').replace(
        'args = [\n  "x",\n]\n', 'args = ["-m", "supermemory", "mcp"]\nstartup_timeout_sec = 20\n')
    assert inst.toml_upsert_table(new, inst.codex_entry("/new/python", ["-m", "supermemory", "mcp"], {})) == new
    stripped = inst.toml_remove_table(new)
    assert stripped == ('# top\n[mcp_servers.alpha]\ncommand = "a"\n'
                        '\n[mcp_servers.supermemory_extra]\ncommand = "not ours"\n\n[mcp_servers.zeta]\ncommand = "z"\n')
    if tomllib is not None:
        parsed = tomllib.loads(new)["mcp_servers"]
        assert parsed["supermemory"] == {"command": "/new/python", "args": ["-m", "supermemory", "mcp"],
                                         "startup_timeout_sec": 20, "env": {"SUPERMEMORY_HOME": "/old"}}
        assert set(parsed) == {"alpha", "supermemory", "supermemory_extra", "zeta"}


@pytest.mark.parametrize(
    "original",
    [
        "",
        "# only a comment",
        "# only a comment\n",
        'model = "o3"\n',
        'model = "o3"',
        '[mcp_servers.a]\ncommand = "a"\n\n[tui]\nx = 1\n\n\n',
        '[mcp_servers.a]\r\ncommand = "a"\r\n\r\n[tui]\r\nx = 1\r\n',
        'a = """\n[mcp_servers.supermemory]\n"""\n[b]\nc = [\n  "[x]",\n  { d = "]" },\n]\n',
        "[ 'mcp_servers' . \"q\" ]\nk = 'v'\n",
    ],
)
def test_toml_insert_then_remove_is_identity(original):
    table = inst.codex_entry("/p/python", ["-m", "supermemory", "mcp"], {"SUPERMEMORY_HOME": "/d"})
    new = inst.toml_upsert_table(original, table)
    assert inst.toml_has_table(new)
    assert inst.toml_upsert_table(new, table) == new
    removed = inst.toml_remove_table(new)
    if original.endswith("\n") or not original:
        assert removed == original
    else:  # we had to add a final newline to the user's last line
        assert removed == original + "\n"
    if "\r\n" in original:
        assert "\r\n[mcp_servers.supermemory]\r\n" in new
    if tomllib is not None:
        assert tomllib.loads(new)["mcp_servers"]["supermemory"]["startup_timeout_sec"] == 20
        assert tomllib.loads(removed) == tomllib.loads(original)


@pytest.mark.parametrize(
    "text",
    [
        'mcp_servers = { other = { command = "x" } }\n',
        'mcp_servers.supermemory.command = "x"\n',
        '[mcp_servers]\nsupermemory.command = "x"\n',
        "[[mcp_servers]]\nname = 'x'\n",
    ],
)
def test_toml_conflicting_definitions_are_refused(text):
    table = inst.codex_entry("/p/python", ["-m", "supermemory", "mcp"], {})
    with pytest.raises(inst.ConfigError, match="mcp_servers"):
        inst.toml_upsert_table(text, table)



def test_env_variables_a_user_gave_our_claude_code_server_survive_a_reinstall():
    text = json.dumps({"mcpServers": {"supermemory": {"command": "/old/python", "args": ["-m", "supermemory", "mcp"],
                                                      "env": {"SUPERMEMORY_NAMESPACE": "work", "SUPERMEMORY_HOME": "/old"}},
                                      "other": {"command": "x"}}})
    entry = {"type": "stdio", "command": "/new/python", "args": ["-m", "supermemory", "mcp"],
             "env": {"SUPERMEMORY_HOME": "/new/home"}}
    servers = json.loads(inst.McpJsonEditor(entry).apply(text))["mcpServers"]
    assert servers["supermemory"]["command"] == "/new/python"
    assert servers["supermemory"]["env"] == {"SUPERMEMORY_NAMESPACE": "work", "SUPERMEMORY_HOME": "/new/home"}
    assert servers["other"] == {"command": "x"}

@needs_tomllib
def test_env_variables_a_user_gave_our_codex_server_survive_a_reinstall():
    # Found by a fresh-user run: a hand-made [mcp_servers.supermemory.env] (SUPERMEMORY_NAMESPACE = "work") was
    # replaced by the installer's table, so the user's setting was gone.
    text = ('model = "o3"\n\n[mcp_servers.supermemory]\ncommand = "/old/python"\nargs = ["-m", "supermemory", "mcp"]\n'
            '\n[mcp_servers.supermemory.env]\nSUPERMEMORY_NAMESPACE = "work"\nSUPERMEMORY_HOME = "/old/home"\n')
    new = inst.CodexTomlEditor("/new/python", {"SUPERMEMORY_HOME": "/new/home"}).apply(text)
    entry = tomllib.loads(new)["mcp_servers"]["supermemory"]
    assert entry["command"] == "/new/python"
    assert entry["env"] == {"SUPERMEMORY_NAMESPACE": "work", "SUPERMEMORY_HOME": "/new/home"}   # ours win on ours
    assert tomllib.loads(new)["model"] == "o3"

def test_a_config_toml_starting_with_a_bom_is_refused_naming_the_bom():
    # Found by a fresh-user run: it was refused as "Invalid statement (at line 1, column 1)", cause unsaid.
    editor = inst.CodexTomlEditor("/p/python", {})
    with pytest.raises(inst.ConfigError, match="byte-order mark"):
        editor.apply("\ufeff[mcp_servers.other]\ncommand = \"x\"\n")

# ---------------------------------------------------------------------------
# unit: Markdown block and JSON hook merging


def test_md_block_insert_replace_remove():
    block1 = inst.make_block("one\ntwo\n")
    block2 = inst.make_block("<!-- supermemory:begin -->\nthree\n<!-- supermemory:end -->\n")
    assert block2 == "<!-- supermemory:begin -->\nthree\n<!-- supermemory:end -->\n"
    original = "# Rules\n\n- a\n"
    new = inst.md_upsert_block(original, block1)
    assert new == original + "\n" + block1
    user_after = new + "\n## later user section\n"
    replaced = inst.md_upsert_block(user_after, block2)
    assert replaced == original + "\n" + block2 + "\n## later user section\n"
    assert inst.md_remove_block(replaced) == original + "\n## later user section\n"
    assert inst.md_remove_block(inst.md_upsert_block("", block1)) == ""


def test_json_hooks_merge_keeps_user_hooks_in_shared_group():
    editor = inst.HooksJsonEditor(inst.hook_groups(inst.CODEX_HOOKS, "/py", {}))
    ours_cmd = '"/py" -m supermemory hook stop --platform codex'
    text = json.dumps({"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": "user-a"}]},
        {"hooks": [{"type": "command", "command": '"/old" -m supermemory hook stop'},
                   {"type": "command", "command": "user-b"}]},
        {"hooks": [{"type": "command", "command": "user-c"}]},
    ], "Empty": []}})
    out = json.loads(editor.apply(text))
    stop = out["hooks"]["Stop"]
    assert [g["hooks"][0]["command"] for g in stop] == ["user-a", ours_cmd, "user-b", "user-c"]
    assert out["hooks"]["Empty"] == []  # a user's empty list is not ours to prune
    assert editor.apply(editor.apply(text)) == editor.apply(text)
    stripped = json.loads(editor.strip(editor.apply(text)))
    assert [g["hooks"][0]["command"] for g in stripped["hooks"]["Stop"]] == ["user-a", "user-b", "user-c"]


def test_a_reinstall_keeps_a_hook_timeout_the_user_raised():
    """fu30 D6: re-running install.py put every hook timeout back to 10 and said only "updated"."""
    editor = inst.HooksJsonEditor(inst.hook_groups(inst.CODEX_HOOKS, "/new/py", {}))
    text = json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": '"/old/py" -m supermemory hook stop --platform codex', "timeout": 30}]}],
        "PreCompact": [{"hooks": [
            {"type": "command", "command": '"/old/py" -m supermemory hook pre-compact --platform codex', "timeout": 10}]}]}})
    out = json.loads(editor.apply(text))
    stop, = [h for g in out["hooks"]["Stop"] for h in g["hooks"]]
    assert stop == {"type": "command", "command": '"/new/py" -m supermemory hook stop --platform codex', "timeout": 30}
    pre, = [h for g in out["hooks"]["PreCompact"] for h in g["hooks"]]
    assert pre["timeout"] == inst.HOOK_TIMEOUT and pre["command"].startswith('"/new/py"')
    start, = [h for g in out["hooks"]["SessionStart"] for h in g["hooks"]]
    assert start["timeout"] == inst.HOOK_TIMEOUT     # a hook the file did not hold gets ours


def test_unchanged_json_is_not_reformatted():
    editor = inst.McpJsonEditor({"type": "stdio", "command": "/py", "args": ["-m", "supermemory", "mcp"], "env": {}})
    compact = '{"mcpServers":{"supermemory":{"type":"stdio","command":"/py","args":["-m","supermemory","mcp"],"env":{}}}}'
    assert editor.apply(compact) == compact


# ---------------------------------------------------------------------------
# the backfill offer at the end


def _history(env: Env) -> None:
    """One Claude Code session and one Codex rollout in the throw-away home, and a user-level CLAUDE.md rule."""
    from helpers.histories import ClaudeSession, CodexRollout, claude_path

    project = env.root / "proj"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    ClaudeSession("s-install", str(project), "2026-10-01").user("Explain the deploy pipeline of proj").write(
        claude_path(env.home / ".claude" / "projects", str(project), "s-install"))
    CodexRollout("0199abcd-0000-7000-8000-00000000000a", str(project), "2026-10-02").user(
        "Add a health check endpoint to proj").write(env.home / ".codex" / "sessions")
    (env.home / ".claude" / "CLAUDE.md").write_text("# Mine\n- Write commit messages in the imperative.\n",
                                                    encoding="utf-8")


def _memories(env: Env) -> dict:
    res = subprocess.run([sys.executable, "-m", "supermemory", "stats", "--namespace", "*", "--json"],
                         env=env.environ(), capture_output=True, text=True, timeout=120, cwd=str(env.root))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["by_kind"]


def test_without_a_terminal_the_installer_only_counts_the_sessions_and_names_the_command(tmp_path):
    env = Env(tmp_path)
    _history(env)
    res = env.run(extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert res.returncode == 0, res.output
    assert "found 1 Claude Code session(s)" in res.output and "1 Codex session(s)" in res.output
    assert "supermemory backfill --claude" in res.output and "supermemory import-rules" in res.output
    assert "session" not in _memories(env)


def test_backfill_flag_captures_the_sessions_and_the_user_rules_at_the_end(tmp_path):
    env = Env(tmp_path)
    _history(env)
    res = env.run("--backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert res.returncode == 0, res.output
    kinds = _memories(env)
    assert kinds.get("session") == 2 and kinds.get("preference") == 1
    again = env.run("--yes", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert again.returncode == 0 and _memories(env) == kinds          # a re-run adds nothing


def test_with_rules_but_no_session_folder_only_the_rules_are_imported(tmp_path):
    """A fresh machine: a user-level CLAUDE.md but no ~/.claude/projects or ~/.codex/sessions. Naming those
    missing folders to backfill would be an error; there is nothing to capture, so only the rules run."""
    env = Env(tmp_path)
    (env.home / ".claude").mkdir(parents=True, exist_ok=True)
    (env.home / ".claude" / "CLAUDE.md").write_text("# Mine\n- Write commit messages in the imperative.\n",
                                                    encoding="utf-8")
    res = env.run("--yes", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert res.returncode == 0, res.output
    assert "backfill failed" not in res.output and "does not exist" not in res.output
    assert _memories(env).get("preference") == 1
    skip = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert "Run it any time" not in skip.output and "backfill --claude" not in skip.output   # all imported already


def test_no_backfill_in_a_dry_run_or_with_no_backfill(tmp_path):
    env = Env(tmp_path)
    _history(env)
    dry = env.run("--dry-run", "--backfill")
    assert dry.returncode == 0 and "dry run: no backfill" in dry.output
    assert not env.data.exists()
    skip = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert "no backfill now" in skip.output and "session" not in _memories(env)


@pytest.mark.parametrize("answer, runs", [("", True), ("y", True), ("n", False)])
def test_on_a_terminal_the_installer_asks_once_default_yes(tmp_path, monkeypatch, answer, runs):
    env = Env(tmp_path)
    _history(env)
    args = inst.build_parser().parse_args(["--home", str(env.home)])
    paths = inst.Paths(args)
    calls, asked = [], []

    class Tty:
        def isatty(self):
            return True

    monkeypatch.setattr(inst.sys, "stdin", Tty())
    monkeypatch.setattr("builtins.input", lambda q: asked.append(q) or answer)
    monkeypatch.setattr(inst, "run_package", lambda python, a, p, capture, timeout: calls.append(a) or
                        subprocess.CompletedProcess(a, 0, "", ""))
    inst.offer_backfill(args, sys.executable, paths)
    assert len(asked) == 1 and "[Y/n]" in asked[0] and "2 session(s)" in asked[0]
    assert [c[0] for c in calls if "--dry-run" not in c] == (["backfill", "import-rules"] if runs else [])


def test_on_a_fresh_machine_the_files_holding_only_our_block_are_not_offered_to_import_rules(tmp_path):
    """The installer writes its usage block into ~/.claude/CLAUDE.md and ~/.codex/AGENTS.md; import-rules never
    imports that block, so suggesting those files imported 0 rules."""
    env = Env(tmp_path)
    env.codex.mkdir()
    (env.home / ".claude").mkdir()
    res = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert res.returncode == 0, res.output
    assert inst.BLOCK_BEGIN in env.claude_md.read_text(encoding="utf-8") and env.agents_md.is_file()
    assert "import-rules" not in res.stdout.replace("run `supermemory import-rules` inside a project", "")
    env.agents_md.write_text(env.agents_md.read_text(encoding="utf-8") + "\n# Mine\n- Prefer rg to grep.\n",
                             encoding="utf-8")
    again = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert f"Run it any time: supermemory import-rules {env.agents_md}\n" in again.stdout   # not CLAUDE.md


def test_counting_sessions_to_capture_never_holds_the_install_up(tmp_path, monkeypatch):
    # The dry run reads every session not captured yet to its end; on gigabytes of history the install's offer
    # gives up counting (None: the offer words it without a count) instead of waiting minutes.
    monkeypatch.delenv("SUPERMEMORY_HOME", raising=False)
    monkeypatch.setattr(Path, "home", lambda: tmp_path)
    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(inst, "COUNT_TIMEOUT_S", 0.5)
    started = time.monotonic()
    assert inst.sessions_to_capture(str(slow), inst.Paths(inst.build_parser().parse_args([])), []) is None
    assert time.monotonic() - started < 15


def test_a_re_run_offers_the_backfill_only_for_sessions_not_captured_yet(tmp_path):
    env = Env(tmp_path)
    _history(env)
    first = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert "2 of them not captured yet" in first.stdout and "Run it any time: supermemory backfill" in first.stdout
    assert env.run("--backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"}).returncode == 0
    again = env.run("--no-backfill", extra_env={"SUPERMEMORY_EMBED_PROVIDER": "hash"})
    assert "found 1 Claude Code session(s)" in again.stdout and "nothing in them left to capture" in again.stdout
    assert "backfill --claude" not in again.stdout and "import-rules ~" not in again.stdout
    assert "Run it any time" not in again.stdout      # the --backfill run imported the rules too: nothing to offer


def test_a_re_run_offers_only_the_rule_files_with_a_rule_not_stored_yet(tmp_path):
    env = Env(tmp_path)
    (env.home / ".claude").mkdir(parents=True, exist_ok=True)
    env.codex.mkdir(parents=True, exist_ok=True)
    env.claude_md.write_text("## My rules\n- Write commit messages in the imperative.\n- Prefer rg to grep.\n",
                             encoding="utf-8")
    env.agents_md.write_text("# Codex\n- Keep the changelog in sync.\n", encoding="utf-8")
    hash_env = {"SUPERMEMORY_EMBED_PROVIDER": "hash"}
    first = env.run("--no-backfill", extra_env=hash_env)
    assert first.returncode == 0, first.output
    assert f"Run it any time: supermemory import-rules {env.claude_md} {env.agents_md}\n" in first.stdout
    imported = subprocess.run([sys.executable, "-m", "supermemory", "import-rules", str(env.claude_md)],
                              env=env.environ(**hash_env), capture_output=True, text=True, timeout=120, cwd=str(env.root))
    assert imported.returncode == 0 and "2 new" in imported.stdout, imported.stderr
    again = env.run("--no-backfill", extra_env=hash_env)
    assert f"Run it any time: supermemory import-rules {env.agents_md}\n" in again.stdout   # not CLAUDE.md
    env.run("--yes", extra_env=hash_env)
    done = env.run("--no-backfill", extra_env=hash_env)
    assert "rules not imported now" not in done.stdout and "import-rules /" not in done.stdout, done.stdout
    env.claude_md.write_text(env.claude_md.read_text(encoding="utf-8") + "- Log in UTC.\n", encoding="utf-8")
    grown = env.run("--no-backfill", extra_env=hash_env)
    assert f"Run it any time: supermemory import-rules {env.claude_md}\n" in grown.stdout
