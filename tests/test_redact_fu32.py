"""Secrets a fresh-user run (fu32, twenty-fourth session) found stored in clear, and the look-alikes that stay:
D1 a value with base64 padding after a credential name was read as code ("a=b"); D2 a "*" or "%r" in Django's
SECRET_KEY read it as a glob or a format string; D3 "token 是 <v>" kept what 令牌是 <v> and "the token is <v>" took out;
D7 a secret wrapped onto the next line kept its second half; D10 a Chinese input method types ＜private＞."""
from __future__ import annotations

import pytest

from supermemory.redact import RULES_VERSION, redact

SECRETS = [
    # D1: base64 padding
    ("k8s secret: DB_PASSWORD: UGw0MW5UM3h0UHc= (base64 of the real one)", "UGw0MW5UM3h0UHc"),
    ("password=Tr0ub4dor=", "Tr0ub4dor"),
    ("PASSWORD=aGVsbG8=", "aGVsbG8"),
    ("_auth=ZGVwbG95OnNlY3JldDEyMw==", "ZGVwbG95OnNlY3JldDEyMw"),
    ("SECRET_KEY=abcDEF123456789ghiJKLmno=", "abcDEF123456789ghiJKLmno"),
    ("data:\n  DB_PASSWORD: UGw0MW5UM3h0UHc=\n  API_TOKEN: ZXlKaGJHY2lPaUpJVXpJMU5pSjk=", "ZXlKaGJHY2lPaUpJVXpJMU5pSjk"),
    # D2: Django's SECRET_KEY
    ("SECRET_KEY = 'k8#2m!x9q@w3e$r5t^y7u*i0o(p)a1s2d3f4g5h6j'", "x9q@w3e"),
    ("SECRET_KEY = 'k8#2m!x9q@w3e%r5t&y7u*i0oa1s2d3f4g5h6j'", "x9q@w3e"),
    ('SECRET_KEY = "django-insecure-0n7%1vj$&8@+lh6gq3!mxa=b2p(z5#w)c^k9*ur4e_yts-d"', "lh6gq3"),
    # D3: the credential named in English in a Chinese sentence
    ("测试环境的 token 是 z2YBSoGOsDbjqMVzaVp62BSKLVPA2o", "z2YBSoGOsDbjqMVzaVp62BSKLVPA2o"),
    ("token是Xk29dLq83mZpW7vRt5nB4cY1", "Xk29dLq83mZpW7vRt5nB4cY1"),
    ("我们的 secret 是 Xk29dLq83mZpW7vRt5nB4cY1", "Xk29dLq83mZpW7vRt5nB4cY1"),
    ("api key 为 z2YBSoGOsDbjqMVzaVp62BSKLVPA2o", "z2YBSoGOsDbjqMVzaVp62BSKLVPA2o"),
    # D7: wrapped onto the next line (a terminal's soft wrap), or continued with a backslash
    ("The token is ghp_6e3uKBKzTOAshzb9\nukZ8ND1S6xfB2gpBLzHf keep it safe", "ukZ8ND1S6xfB2gpBLzHf"),
    ("sk-proj-8F80ymm3T207gmhZRnFy\r\n  y5r2xJ7Fj4mgblEv0_9BZhvWaXH6", "y5r2xJ7Fj4mgblEv0"),
    ('export API_SECRET="InTEGbOY1xHvAV8DnRlz\\\nGW7hUNwOdqryzdaeA6AO"', "GW7hUNwOdqryzdaeA6AO"),
    ('export API_SECRET="InTEGbOY1xHvAV8DnRlz\\\nGW7hUNwOdqryzdaeA6AO"', "InTEGbOY1xHvAV8DnRlz"),
    # fu33 D1: a provider token cut at a line end with no credential word near it
    ("Renovate used ghp_I638yIxjM2UNybGOfEuo\nqHkEpQCrChvW774A until yesterday.", "ghp_I638yIxjM2UNybGOfEuo"),
    ("Renovate used ghp_I638yIxjM2UNybGOfEuo\nqHkEpQCrChvW774A until yesterday.", "qHkEpQCrChvW774A"),
    ("The CI bot key:\nghp_AEV8ruiEQbV3BEqk\nVFnthply1JseEezsYpEA", "VFnthply1JseEezsYpEA"),
    ("Session log: pasted output\n  ghp_I638yIxjM2UNybGOfEuoqH\r\n  kEpQCrChvW774A\nwas the PAT, revoked.", "kEpQCrChvW774A"),
]
LOOKALIKES = [
    "x: Type = default", "password=a=b", "if token == expected: retry()", 'token_glob = "**/*.tokens.json"',
    'password = "%(db_password)s"', 'token_fmt = "%s-%s-%d"',
    "token 是必需的参数", "token 是一个 JWT", "token 是 <your-token>",
    # D7's look-alikes: the next line is words, a name or a flag; a continued command without a secret
    "docker run --rm \\\n  -e LOG_LEVEL=debug image", "CFLAGS=-O2\\\n-Wall", "path=src/app\\\nmain.py",
    "set GITHUB_TOKEN to ghp_xxx\nthen run it", "the pattern\nmatching goes here", "sk-\nproject notes follow",
]


@pytest.mark.parametrize("text, secret", SECRETS)
def test_the_secret_goes(text, secret):
    clean, counts = redact(text)
    assert secret not in clean and counts


@pytest.mark.parametrize("text", LOOKALIKES)
def test_code_and_words_that_look_alike_stay(text):
    assert redact(text)[0] == text


def test_stores_re_redact_what_the_older_rules_kept():
    assert RULES_VERSION >= 10


def test_a_private_span_typed_with_full_width_brackets_is_dropped():
    assert redact("keep this ＜private＞客户名单 ACME＜/private＞ and this") == ("keep this  and this", {"private": 1})
    assert redact("open ＜private＞ the rest")[0] == "open "
    assert redact("a <b> tag and 1 ＜ 2 ＞ 0") == ("a <b> tag and 1 ＜ 2 ＞ 0", {})


@pytest.mark.parametrize("after", ["release-2024-notes follow", "deploys run at noon", "MyServiceConfig holds it",
                                   "  --dry-run first"])
def test_the_line_after_a_secret_stays_when_it_is_words_a_name_or_a_flag(after):
    clean, _ = redact("The token is ghp_6e3uKBKzTOAshzb9ukZ8ND1S6xfB2gpBLzHf\n" + after)
    assert clean == "The token is [REDACTED:github_token]\n" + after
