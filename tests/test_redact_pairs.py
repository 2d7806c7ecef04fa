"""A credential written as a user/password pair after a login word loses its secret half; prose stays.

Found by a fresh-user run: `remember "The staging admin password is <p1> and the grafana login is admin / <p2>"`
redacted the first password and stored the second in clear (body, summary, chunks, FTS).  The secrets are
split so this file holds nothing a scanner would flag.
"""
from __future__ import annotations

import pytest

from supermemory import redact as redact_module
from supermemory.redact import RULES_VERSION, redact, rules_hit
from supermemory.store import redaction as reredact

MARK = "[REDACTED:password_in_prose]"
GRAFANA = "Gr4fana" + "#2026"
HUNTER = "hunter" + "2"
SEASON = "Summer" + "2024"
STRONG = "S3cr3" + "t!"
TOPS = "T0ps3" + "cret"
HUNT = "Hunt3r2" + "Secret!"
PASSPHRASE = "correct-horse-" + "battery-staple"


@pytest.mark.parametrize("text, secret, rule", [
    ("the grafana login is admin / " + GRAFANA, GRAFANA, "password_pair"),
    ("login: admin/" + GRAFANA, GRAFANA, "password_pair"),
    ("Login: admin/" + GRAFANA, GRAFANA, "password_pair"),
    ("**Login:** admin / " + GRAFANA, GRAFANA, "password_pair"),
    ("creds are root / " + HUNTER, HUNTER, "password_pair"),
    ("the creds for staging are root / " + HUNTER, HUNTER, "password_pair"),
    ("the login details are deploy / " + SEASON, SEASON, "password_pair"),
    ("login admin:" + GRAFANA, GRAFANA, "password_pair"),
    ("the grafana login is admin:" + GRAFANA, GRAFANA, "password_pair"),
    ("log in as admin / " + HUNTER, HUNTER, "password_pair"),
    ("sign in with ops / " + TOPS, TOPS, "password_pair"),
    ("credentials: `admin` / `" + GRAFANA + "`", GRAFANA, "password_pair"),
    ("the login is bob@example.com / " + STRONG, STRONG, "password_pair"),
    ("creds are root / " + "8675" + "309", "8675309", "password_pair"),
    ("user admin password " + GRAFANA, GRAFANA, "password_after_user"),
    ("username deploy, password " + HUNTER, HUNTER, "password_after_user"),
    ("log in as bob with password " + SEASON, SEASON, "password_after_user"),
    ("user root pass " + PASSPHRASE, PASSPHRASE, "password_after_user"),
    ("账号 admin 密码 " + GRAFANA, GRAFANA, "password_pair_zh"),
    ("账号admin密码" + HUNTER, HUNTER, "password_pair_zh"),
    ("登录 admin / " + GRAFANA, GRAFANA, "password_pair_zh"),
    ("登录 root / " + HUNTER, HUNTER, "password_pair_zh"),
    ("账号密码是 admin/" + HUNTER, HUNTER, "password_pair_zh"),
    ("用户 root 口令 " + SEASON, SEASON, "password_pair_zh"),
])
def test_the_secret_half_of_a_pair_goes_and_the_user_name_stays(text, secret, rule):
    out, counts = redact(text)
    assert secret not in out
    assert out == text.replace(secret, MARK)  # only the secret: the user name and the words around it stay
    assert counts == {"password_in_prose": 1}
    assert rules_hit(text) == {rule: 1}
    assert redact(out) == (out, {})


@pytest.mark.parametrize("text, secret", [
    ("username: deploy, password: " + STRONG, STRONG),   # an assignment: password_assignment takes it
    ("用户名：deploy，密码：" + STRONG, STRONG),           # 密码： reads as one too
    ("user/password: deploy/" + GRAFANA, GRAFANA),
])
def test_a_pair_written_as_assignments_loses_its_secret_too(text, secret):
    out, counts = redact(text)
    assert secret not in out and counts


def test_the_reported_sentence_keeps_both_passwords_out():
    text = "The staging admin password is " + HUNT + " and the grafana login is admin / " + GRAFANA
    out, counts = redact(text)
    assert out == ("The staging admin password is " + MARK + " and the grafana login is admin / " + MARK)
    assert counts == {"password_in_prose": 2}


@pytest.mark.parametrize("text", [
    "login is handled by the auth service / see docs",
    "the admin / user split",
    "open admin/settings to change it",
    "login: admin/settings",
    "the login page is admin/settings2",
    "login flow/step2",
    "login page / settings",
    "input/output", "CI/CD", "read/write", "TCP/IP over UDP/IP",
    "a 3/4 ratio", "due 12/04", "login at 12/04", "the login is 3/4 done",
    "login: https://grafana.example.com:3000/login",
    "see https://example.com/admin/login",
    "login to db.example.com:5432",
    "ssh login host:2222",
    "creds: vault/prod2",
    "credentials are in ssm/db1",
    "login: oauth/oauth2",
    "login with github/v2",
    "login: admin/v1.2.3",
    "login as root / see the runbook",
    "login: USER/PASSWORD",
    "login: <user>/<password>",
    "creds are admin / changeme",
    "creds are admin / ${GRAFANA_PASSWORD}",
    "log in with your username/password",
    "the login is user / pass",
    "login/logout buttons", "sign-in/sign-out",
    "user admin password reset",
    "user admin password required",
    "username field, password field",
    "user admin password 1024 bits",
    "the user password is hashed with argon2id",
    "def login(username: str, password: str) -> Session:",
    "登录 https://grafana.example.com/login",
    "登录 localhost:8080",
    "用户 id:1234",
    "登录 admin/settings",
    "账号 admin 密码 在 1Password 里",
])
def test_prose_paths_ratios_dates_and_urls_around_login_words_stay(text):
    assert redact(text) == (text, {})


def test_the_rules_version_is_bumped_so_old_stores_re_redact():
    assert RULES_VERSION >= 8


def _every_copy(store) -> str:
    """Every value of every table but the vector ones (FTS shadow tables included), as one string."""
    parts = []
    tables = [r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table.startswith("vec_"):
            continue
        for row in store.conn.execute(f'SELECT * FROM "{table}"'):
            parts.extend(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in row if v is not None)
    return "\n".join(parts)


REPORTED = ("The staging admin password is " + HUNT + " and the grafana login is admin / " + GRAFANA)


def test_remember_keeps_no_trace_of_the_pair_in_body_summary_chunks_fts_or_recall(store):
    mid = store.remember(REPORTED, title="staging logins", kind="note")["id"]
    memory = store.get([mid])["memories"][0]
    assert GRAFANA not in str(memory) and HUNT not in str(memory)
    assert "grafana login is admin / " + MARK in memory["body"]
    hits = store.recall("grafana login admin", touch=False, min_similarity=0, relevance_threshold=0)["results"]
    assert hits and mid in [h["id"] for h in hits]
    assert GRAFANA not in str(hits)
    everything = _every_copy(store)
    assert GRAFANA not in everything and GRAFANA.lower() not in everything.lower()
    assert "gr4fana" not in everything.lower() and HUNT.lower() not in everything.lower()
    fts = " ".join(str(v) for r in store.conn.execute("SELECT * FROM fts") for v in r)
    assert "gr4fana" not in fts.lower()


def test_maintenance_re_redacts_a_pair_stored_before_the_rule(store):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(redact_module, "redact", lambda text, **kw: (text, {}))
        mid = store.remember("the grafana login is admin / " + GRAFANA, title="grafana")["id"]
    assert GRAFANA in _every_copy(store)
    with store.context.txn():
        store.conn.execute("UPDATE meta SET value = 'older-rules' WHERE key = ?", (reredact.STAMP_KEY,))
    assert store.maintenance()["redacted"] >= 1
    assert store.get([mid])["memories"][0]["body"] == "the grafana login is admin / " + MARK
    assert "gr4fana" not in _every_copy(store).lower()
