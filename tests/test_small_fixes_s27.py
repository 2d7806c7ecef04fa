"""Fixes from the twenty-seventh session's fresh-user run (fu36): each test names the defect it guards."""
from __future__ import annotations

import pytest

from supermemory.redact import redact


@pytest.mark.parametrize("text, secret", [
    ("log in with password hunter2Secret! on staging", "hunter2Secret!"),
    ("ssh root@10.0.0.5, pw Xk9mP2qL7", "Xk9mP2qL7"),
    ("why does key AKIAIOSFODNN7EXAMPLE with password hunter2Secret! fail", "hunter2Secret!"),
    ("the password hunter2Secret! works", "hunter2Secret!"),
    ("pw: Xk9mP2qL7", "Xk9mP2qL7"),
])
def test_a_password_right_after_its_word_is_redacted(text, secret):
    """fu36 D4: a password named with no "is" between word and value was stored verbatim."""
    out, counts = redact(text)
    assert secret not in out
    assert counts.get("password_in_prose") == 1


@pytest.mark.parametrize("text", [
    "password reset flow uses tokens",
    "with password protection on",
    "pw test --headed",
    "the pw config file playwright.config.ts",
    "set pw timeout 30000",
    "password v2 flow",
    "password argon2id hashing",
    "password policy requires 12 chars",
])
def test_words_after_a_password_word_that_are_no_password_stay(text):
    assert redact(text) == (text, {})
