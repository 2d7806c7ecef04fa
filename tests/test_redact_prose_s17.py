"""A password named in prose goes whatever its shape; prose about passwords stays.

Found in use: "my password is correct-horse-battery-staple" and "the wifi password is hunter2" were stored
verbatim (a value named after "password is" needed a symbol or three case switches, and eight characters).
The secrets are split so this file holds nothing a scanner would flag.
"""
from __future__ import annotations

import pytest

from supermemory import redact as redact_module
from supermemory.redact import RULES_VERSION, redact
from supermemory.store import redaction as reredact


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


PASSPHRASE = "correct-horse-" + "battery-staple"
SHORT = "hunter" + "2"
SEASON = "Summer" + "2024"


@pytest.mark.parametrize("text, secret, kind", [
    ("my password is " + PASSPHRASE, PASSPHRASE, "password_in_prose"),
    ("the wifi password is " + SHORT, SHORT, "password_in_prose"),
    ("use the password " + SHORT + " to log in", SHORT, "password_in_prose"),   # right after the word (fu36 D4)
    ("the wifi password is " + SHORT + ".", SHORT, "password_in_prose"),
    ("the password is " + SEASON, SEASON, "password_in_prose"),
    ("the password was " + SEASON + " until Monday", SEASON, "password_in_prose"),
    ("the password for staging is " + SHORT + ", ask ops", SHORT, "password_in_prose"),
    ("set the password to `" + SHORT + "`", SHORT, "password_in_prose"),
    ("my passphrase is " + PASSPHRASE, PASSPHRASE, "password_in_prose"),
    ("the passcode is " + "48" + "21", "4821", "password_in_prose"),
    ("pwd is " + SHORT, SHORT, "password_in_prose"),
    ("db password: " + SEASON, SEASON, "password_assignment"),
    ("password = " + SHORT, SHORT, "password_assignment"),
    ("数据库密码是" + SHORT, SHORT, "password_in_prose"),
    ("口令是 " + PASSPHRASE, PASSPHRASE, "password_in_prose"),
])
def test_a_password_named_directly_goes_whatever_its_shape(text, secret, kind):
    out, counts = redact(text)
    assert secret not in out
    assert marker(kind) in out and counts == {kind: 1}
    assert redact(out) == (out, {})


def test_only_the_password_goes_and_the_sentence_around_it_stays():
    assert redact("the wifi password is " + SHORT + ", ask ops")[0] == \
        "the wifi password is [REDACTED:password_in_prose], ask ops"


@pytest.mark.parametrize("text", [
    "the password is stored in the keychain",
    "password is required",
    "the password is wrong",
    "password is too short",
    "the password reset flow",
    "passwords are hashed with argon2",
    "the password is hashed with argon2id",
    "the password hash is argon2id",
    "the password is base64-encoded",
    "the password is case-sensitive",
    "the password is not-so-secret",
    "the password is end-to-end-encrypted",
    "the password is 8-64 characters",
    "the password is 1024 bits",
    "password is at least 12 characters",
    "the password was rotated on 2024-05-01 by ops",
    "the password is your-password-here",
    "the password is changeme",
    "the pwd is /home/me/project",
    "run pwd to see where you are",
    "the token is " + SHORT,
    "密码是必填项",
])
def test_prose_about_passwords_stays(text):
    assert redact(text) == (text, {})


def test_the_rules_version_is_bumped_so_old_stores_re_redact():
    assert RULES_VERSION >= 7


def test_maintenance_re_redacts_a_prose_password_stored_before_the_rule(store):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(redact_module, "redact", lambda text, **kw: (text, {}))
        memory_id = store.remember("the wifi password is " + SHORT + " at the office", title="wifi")["id"]
    with store.context.txn():
        store.conn.execute("UPDATE meta SET value = 'older-rules' WHERE key = ?", (reredact.STAMP_KEY,))
    assert store.maintenance()["redacted"] >= 1
    content = store.get([memory_id])["memories"][0]["body"]
    assert SHORT not in content and marker("password_in_prose") in content
