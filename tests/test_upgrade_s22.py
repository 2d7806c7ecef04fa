"""fu22 D1, D7, D8: after an upgrade the one-time passes run (install.py runs them itself, bounded; doctor and health
say while any is pending; maintenance names the links it wrote), the installed version and commit can be read
(`supermemory --version`, MCP serverInfo, doctor, install.py's "upgraded A → B"), and a store a newer version
maintained keeps that version's stamps."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import supermemory
from supermemory.config import load_config
from supermemory.core import MemoryStore
from supermemory import render
from supermemory.store import lifecycle, redaction, supersession
from supermemory.text.summary import SUMMARY_VERSION

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("supermemory_install_s22", ROOT / "install.py")
inst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(inst)

VALUE_PAIRS = [("Nightly export job runs at 03:00 UTC via cron on worker-2.",
                "Nightly export job runs at 04:30 UTC via cron on worker-2."),
               ("The webhook handler read timeout is 30s.", "The webhook handler read timeout is 60s.")]
PENDING = ["re-redaction", "summaries", "value supersedes links"]


@pytest.fixture
def hashed(monkeypatch):
    """The `hash` embedder for this process and the installer's subprocesses (no model needed)."""
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def old_store(namespace: str = "proj") -> list[tuple[str, str]]:
    """memory.db in the test's data dir as a version before value links leaves it: value pairs without a link, the
    change pass stamped but not the values pass, an older summary version and older redaction rules. Returns the
    (newer, older) id pairs the pending pass links."""
    config = load_config()
    expected = []
    with MemoryStore(config.db_path, config=config, namespace=namespace) as s:
        for older, newer in VALUE_PAIRS:
            a, b = s.remember(older, kind="fact")["id"], s.remember(newer, kind="fact")
            assert b["supersedes"] == [a]
            s.unlink(b["id"], a, relation="supersedes")       # as the old version wrote it: no link
            expected.append((b["id"], a))
        with s.context.txn():
            for key, value in ((supersession.STAMP_KEY, "1"), (lifecycle.SUMMARY_STAMP, "2"),
                               (redaction.STAMP_KEY, "older-rules")):
                s.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
            s.conn.execute("DELETE FROM meta WHERE key = ?", (supersession.VALUES_STAMP_KEY,))
            s.conn.execute("DELETE FROM link_removals")     # the old version wrote no link, so removed none
    return expected


def links() -> set[tuple[str, str]]:
    config = load_config()
    with MemoryStore(config.db_path, config=config, namespace="proj") as s:
        return {(f"M{a}", f"M{b}") for a, b in s.conn.execute("SELECT src, dst FROM links WHERE relation = 'supersedes'")}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "supermemory", *args], capture_output=True, text=True, timeout=120,
                          cwd=str(ROOT), env=dict(os.environ))


def installer_paths(tmp_path: Path):
    (tmp_path / "userhome").mkdir(exist_ok=True)
    return inst.Paths(inst.build_parser().parse_args(["--home", str(tmp_path / "userhome")]))


# --- D1: the one-time passes --------------------------------------------------------------------------------------

def test_an_old_store_has_its_one_time_passes_pending_until_maintenance_runs_them(hashed):
    old_store()
    config = load_config()
    with MemoryStore(config.db_path, config=config, namespace="proj") as s:
        assert lifecycle.pending_passes(s.context) == PENDING
        s.maintenance()
        assert lifecycle.pending_passes(s.context) == []
    with MemoryStore(config.db_path.with_name("empty.db"), config=config, namespace="proj") as s:
        assert lifecycle.pending_passes(s.context) == []       # nothing stored: nothing to redo


def test_a_store_this_version_creates_has_no_pass_pending(hashed):
    """A new user's first memories are stored by this version's rules: doctor and health said "passes pending"
    of them until the first SessionEnd hook."""
    config = load_config()
    with MemoryStore(config.db_path, config=config, namespace="proj") as s:
        for older, newer in VALUE_PAIRS:
            s.remember(older, kind="fact")
            s.remember(newer, kind="fact")
        assert lifecycle.pending_passes(s.context) == [] and lifecycle.newer_stamps(s.context) == []
    assert "one-time pass" not in cli("doctor").stdout
    assert "one-time pass" not in cli("health", "--namespace", "proj").stdout


def test_maintenance_names_the_supersedes_links_it_wrote_in_text_and_json(hashed):
    expected = old_store()
    text = cli("maintenance")
    assert text.returncode == 0, text.stderr
    for (new, old), (before, after) in zip(expected, VALUE_PAIRS):
        assert re.search(rf"^  {new} supersedes {old} \(.+ → .+\): ", text.stdout, re.M), text.stdout
    assert f"  {expected[0][0]} supersedes {expected[0][1]} (03:00 → 04:30): " in text.stdout
    assert "supersedes_links 2" in text.stdout and "[{" not in text.stdout
    old_store("other")     # the same memories again in another project: links to write once more
    report = json.loads(cli("maintenance", "--json").stdout)
    assert report["supersedes_links"] == len(report["supersedes"]) == 2
    assert all(set(link) == {"src", "dst", "titles"} for link in report["supersedes"])
    assert report["passes_pending"] == []


def test_doctor_and_health_say_the_passes_are_pending_and_stop_once_they_ran(hashed):
    old_store()
    doctor, health = cli("doctor"), cli("health", "--namespace", "proj")
    line = "3 one-time passes pending (re-redaction, summaries, value supersedes links): run `supermemory maintenance`"
    assert line in doctor.stdout, doctor.stdout
    assert line in health.stdout, health.stdout
    assert json.loads(cli("doctor", "--json").stdout)["passes_pending"] == PENDING
    assert cli("maintenance").returncode == 0
    assert "one-time pass" not in cli("doctor").stdout
    assert "one-time pass" not in cli("health", "--namespace", "proj").stdout


@pytest.mark.model
def test_health_says_a_pending_pass_may_link_the_pairs_it_lists_as_possible_contradictions(db_path, config,
                                                                                           onnx_embedder):
    with MemoryStore(db_path, config=config, embedder=onnx_embedder, namespace="proj") as s:
        for older, newer in VALUE_PAIRS:
            a, b = s.remember(older, kind="fact")["id"], s.remember(newer, kind="fact")["id"]
            s.unlink(b, a, relation="supersedes")
        with s.context.txn():
            s.conn.execute("DELETE FROM meta WHERE key = ?", (supersession.VALUES_STAMP_KEY,))
            s.conn.execute("DELETE FROM link_removals")     # the old version wrote no link, so removed none
        text = render.render_health(s.health())
        assert "possible contradictions" in text and "value supersedes links): run `supermemory maintenance` (it may " \
                                                     "link some of the pairs above itself)" in text, text
        s.maintenance()
        text = render.render_health(s.health())
        assert "possible contradictions" not in text and "one-time pass" not in text and text.endswith("clean")


def test_the_installer_runs_the_pending_passes_of_an_existing_store_and_names_the_links(hashed, tmp_path, capsys):
    expected = old_store()
    report = inst.run_upgrade_passes(sys.executable, installer_paths(tmp_path), budget=60)
    out = capsys.readouterr().out
    assert report["pending_before"] == PENDING and report["pending"] == []
    assert "ran the one-time passes of this version" in out and "2 supersedes links written" in out, out
    for new, old in expected:
        assert f"{new} supersedes {old}: " in out
    assert set(expected) <= links()
    assert inst.run_upgrade_passes(sys.executable, installer_paths(tmp_path), budget=60)["pending_before"] == []
    assert "no one-time passes pending" in capsys.readouterr().out


def test_the_installer_out_of_time_says_the_session_end_hook_or_maintenance_finishes_the_passes(hashed, tmp_path,
                                                                                              capsys):
    expected = old_store()
    report = inst.run_upgrade_passes(sys.executable, installer_paths(tmp_path), budget=0)
    out = capsys.readouterr().out
    assert report["pending"] == ["summaries", "value supersedes links"], report
    assert "not finished in 0 s (summaries, value supersedes links)" in out
    assert "the SessionEnd hook or `supermemory maintenance` runs them (they go on where they stopped)" in out
    assert cli("maintenance").returncode == 0
    assert set(expected) <= links()


def test_the_installer_stops_passes_that_outrun_their_grace_and_says_who_finishes_them(tmp_path, monkeypatch,
                                                                                        capsys):
    monkeypatch.setattr(inst, "run_python", lambda *a, **k: subprocess.CompletedProcess(
        a, 127, "", "Command '...' timed out after 180 seconds"))
    assert inst.run_upgrade_passes(sys.executable, installer_paths(tmp_path), budget=60) is None
    out = capsys.readouterr().out
    assert "could not run now (stopped after 180 s)" in out and "`supermemory maintenance` runs them" in out


def test_install_over_an_existing_data_dir_runs_the_passes_before_registering(hashed, tmp_path):
    expected = old_store()
    home = tmp_path / "userhome"
    home.mkdir()
    res = subprocess.run([sys.executable, str(ROOT / "install.py"), "--home", str(home), "--python", sys.executable,
                          "--no-pip", "--no-model", "--no-selfcheck", "--no-backfill"], capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL, cwd=str(tmp_path),
                         env={**os.environ, "HOME": str(home)})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ran the one-time passes of this version" in res.stdout, res.stdout
    assert set(expected) <= links()


# --- D7: the version ---------------------------------------------------------------------------------------------

def test_the_release_is_the_version_pyproject_builds():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == supermemory.RELEASE != "0.1.0"
    assert inst.INSTALL_RECORD == supermemory.INSTALL_RECORD


def test_the_recorded_commit_joins_the_version_only_for_this_release(tmp_path):
    assert supermemory.full_version(str(tmp_path)) == supermemory.RELEASE          # no record
    record = tmp_path / supermemory.INSTALL_RECORD
    record.write_text(json.dumps({"version": supermemory.RELEASE, "commit": "d2844e9"}), encoding="utf-8")
    assert supermemory.full_version(str(tmp_path)) == f"{supermemory.RELEASE}+d2844e9"
    record.write_text(json.dumps({"version": supermemory.RELEASE, "commit": "d2844e9", "dirty": True}), encoding="utf-8")
    assert supermemory.full_version(str(tmp_path)) == f"{supermemory.RELEASE}+d2844e9.dirty"
    for stale in ({"version": "0.0.1", "commit": "d2844e9"}, {"version": supermemory.RELEASE, "commit": "$(rm -rf)"}):
        record.write_text(json.dumps(stale), encoding="utf-8")           # pip-installed since, or not a commit
        assert supermemory.full_version(str(tmp_path)) == supermemory.RELEASE
    record.write_text("{not json", encoding="utf-8")
    assert supermemory.full_version(str(tmp_path)) == supermemory.RELEASE


def _git_checkout(path: Path) -> str:
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    (path / "f.txt").write_text("one\n", encoding="utf-8")
    subprocess.run(git + ["add", "f.txt"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "one"], check=True)
    return subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def venv_python(tmp_path, monkeypatch) -> str:
    """A venv of its own (its prefix is where the record goes) that imports this checkout and its dependencies."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]]))
    monkeypatch.setenv("SUPERMEMORY_EMBED_PROVIDER", "hash")
    return str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))


def test_the_installer_records_the_commit_and_version_option_server_info_and_doctor_show_it(tmp_path, venv_python):
    commit = _git_checkout(tmp_path / "checkout")
    assert inst.source_commit(tmp_path / "checkout") == (commit, False)
    (tmp_path / "checkout" / "f.txt").write_text("two\n", encoding="utf-8")
    assert inst.source_commit(tmp_path / "checkout") == (commit, True)
    assert inst.source_commit(tmp_path) == (None, False)                     # no git checkout
    (tmp_path / "checkout" / "f.txt").write_text("one\n", encoding="utf-8")
    paths = installer_paths(tmp_path)
    written = inst.record_install(venv_python, paths, tmp_path / "checkout")
    assert written == Path(venv_python).parents[1] / supermemory.INSTALL_RECORD
    expected = f"{supermemory.RELEASE}+{commit}"
    assert inst.installed_version(venv_python, paths) == expected
    run = subprocess.run([venv_python, "-m", "supermemory", "--version"], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == f"supermemory {expected}", run.stderr
    init = subprocess.run([venv_python, "-m", "supermemory", "mcp"], input=inst.INITIALIZE_REQUEST, capture_output=True,
                          text=True, timeout=60, cwd=str(tmp_path))
    answer = next(json.loads(line) for line in init.stdout.splitlines() if '"serverInfo"' in line)
    assert answer["result"]["serverInfo"]["version"] == expected
    doctor = subprocess.run([venv_python, "-m", "supermemory", "doctor"], capture_output=True, text=True, timeout=120)
    assert f"supermemory   {expected} (installed from {tmp_path / 'checkout'})" in doctor.stdout, doctor.stdout


def test_the_installer_says_which_version_it_upgraded_from_and_to(tmp_path, monkeypatch, capsys):
    args = inst.build_parser().parse_args(["--home", str(tmp_path), "--python", sys.executable])
    said = iter(["0.1.0", "0.2.0+d2844e9"])
    monkeypatch.setattr(inst, "installed_version", lambda python, paths: next(said))
    monkeypatch.setattr(inst, "record_install", lambda *a, **k: None)
    monkeypatch.setattr(inst.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0))   # pip
    assert inst.prepare_python(args, installer_paths(tmp_path)) == sys.executable
    assert "[ok] upgraded 0.1.0 → 0.2.0+d2844e9" in capsys.readouterr().out
    said = iter([None, "0.2.0+d2844e9"])
    inst.prepare_python(args, installer_paths(tmp_path))
    assert "[ok] installed 0.2.0+d2844e9" in capsys.readouterr().out


def test_version_option_prints_the_version():
    run = cli("--version")
    assert run.returncode == 0 and run.stdout.strip() == f"supermemory {supermemory.__version__}", run.stderr


# --- D8: stamps a newer version wrote ----------------------------------------------------------------------------

def test_a_store_a_newer_version_maintained_keeps_its_stamps_and_doctor_says_so(hashed):
    old_store()
    config = load_config()
    newer_summaries = str(int(SUMMARY_VERSION) + 1)
    with MemoryStore(config.db_path, config=config, namespace="proj") as s:
        s.maintenance()
        with s.context.txn():
            s.conn.execute("UPDATE meta SET value = ? WHERE key = ?", (newer_summaries, lifecycle.SUMMARY_STAMP))
            s.conn.execute("UPDATE meta SET value = 'newer-rules' WHERE key = ?", (redaction.STAMP_KEY,))
            s.conn.execute("UPDATE meta SET value = '999 newer-rules' WHERE key = ?", (lifecycle.REDACTION_VERSION_KEY,))
        assert lifecycle.newer_stamps(s.context) == ["summaries", "redaction rules"]
        assert lifecycle.pending_passes(s.context) == []
        result = s.maintenance()
        assert result["summaries"] == 0 and result["redacted"] == 0
        meta = dict(s.conn.execute("SELECT key, value FROM meta"))
        assert meta[lifecycle.SUMMARY_STAMP] == newer_summaries and meta[redaction.STAMP_KEY] == "newer-rules"
    assert "last maintained by a newer version (summaries, redaction rules)" in cli("doctor").stdout


def test_changed_words_name_a_value_change_and_nothing_else():
    assert render.changed_words(*VALUE_PAIRS[0]) == "03:00 → 04:30"
    assert render.changed_words("The API request timeout is 30.", "The API request timeout is 60.") == "30 → 60"
    assert render.changed_words("We use REST for the public API.", "The team moved every service to gRPC streaming last "
                                                            "quarter.") is None
