"""Secret redaction: runs on every text before it is stored or indexed.

``redact(text)`` returns ``(clean_text, counts_by_type)``:

* ``<private>...</private>`` spans (case-insensitive, multi-line) are removed
  outright and counted under ``"private"``.  An unclosed ``<private>`` drops
  everything up to the end of the text (fail closed; ``unclosed_private`` says
  how much, so a write can tell its author).  Code spans do not protect a tag:
  `` `<private>` `` opens a span like a bare one.  Nested spans are removed up to their
  matching outer close tag, so nothing inside an outer span survives.
* Recognised secrets are replaced by ``[REDACTED:<type>]``.  Only the secret
  itself is replaced: the key of an assignment, the scheme/user/host of a URL
  and the ``Authorization: Bearer`` prefix are kept, so the text stays useful.
  Rules run most specific first (see ``RULE_KINDS``, the rule table): provider
  formats (about a hundred, by prefix or shape), then structured tokens and
  headers, then values named by their key.  An Anthropic key is never labelled
  ``openai_key``, ``GITHUB_TOKEN=ghp_...`` counts once as ``github_token``,
  and a JWT sent as a bearer token is labelled ``jwt``.
* ``generic_secret`` takes a long random-looking value under any name with
  key / auth / credential / secret / token / password in it.  A hex digest or
  UUID counts only under a name that says it is a credential (``api_secret:
  <hex>`` goes, ``cache key: <sha>`` and ``idempotency key: <uuid>`` stay).  A
  label whose value is itself an assignment is looked into: ``token:
  TWILIO_AUTH_TOKEN=<hex>`` loses the hex.
* The last rules, ``password_in_prose`` and ``secret_in_prose``, take a secret
  named in a sentence: a credential word (password, passphrase, secret, token,
  API / access / secret key, credential; 密码, 口令, 令牌, 密钥), up to five
  words, "is" / "was" / "to" / ":" / "=" (是, 为, 改为, ：) or nothing, then
  one run ("the admin password for staging is <v>", "set the password to <v>",
  "数据库密码是<v>").  Named directly (right after the word or a phrase naming
  it: "for staging", "we use"), the run needs letters with a digit or an inner
  symbol, and the symbol or three switches between upper, lower and digits
  ("hunter2Secret!", "Passw0rd", "p@ssword"); otherwise it must look random.
  A password (password, passphrase, passcode, pwd, pw, 密码, 口令) named directly
  goes whatever its shape: a word with a number ("the wifi password is
  hunter2", "Summer2024"), words joined by hyphens ("my password is
  correct-horse-battery-staple"), a PIN ("the passcode is 4821"); ordinary
  words ("the password is wrong", "password is required") stay.
* ``password_pair``, ``password_after_user`` and ``password_pair_zh`` take the secret half of a user/password
  pair after a login word ("the grafana login is admin / <v>", "login: admin/<v>", "creds are root / <v>",
  "log in as admin:<v>", "user admin password <v>", "账号 admin 密码 <v>", "登录 admin / <v>"), reported as
  ``password_in_prose``; the user name stays.  The value must read as a password (a word with a number, an
  inner symbol, hyphenated words; a number only after a spaced " / " or a password word), so paths
  ("login: admin/settings"), ports ("login host:2222"), versions, ratios, dates, URLs and references
  ("creds: vault/prod2") stay; a pair not named directly ("the login page is admin/<v>") needs an inner symbol
  or three case-and-digit switches.

The rule, in every form (YAML, env, JSON, code, prose, Chinese): a value named
by a credential word goes when it looks like a credential -- any literal after
``password:`` / ``password=``, mixed letters and digits or symbols after
"password is / was / to" (for a password also a word with a number, hyphenated
words or a PIN), a long random-looking string under any key-like name.  It
stays when it is an ordinary word followed by more prose ("password: see
vault", "the secret: never commit .env files"), a word with a number in prose
not named as a password ("the token is gpt-4o-mini", "the password hash is
argon2id", "the password is base64-encoded"), a
placeholder (``<your-password>``, ``****``, ``changeme``: the usual default of
sample configs), a reference to where the secret lives (``${TOKEN}``,
``$PGPASSWORD``, ``env:DB_PASSWORD``, ``op://vault/item``, "keychain",
"1Password") or code: calls, dotted names, annotations (``token:
Optional[str] = None``; CamelCase ending in a type's word or naming a
credential, ``token: AccessToken``, not ``password: CorrectHorseBattery9``).

The rules are heuristics tuned to miss few real secrets while leaving ordinary
prose and code alone: hashes, UUIDs, lockfile checksums, data URIs, words such
as "password reset flow", identifiers such as ``token_count``, variables
(``password = os.environ["X"]``, ``f(password=password)``) and placeholder
values (``password=${DB_PASSWORD}``, ``token=None``, ``your_password_here``)
come back unchanged.  A value is a placeholder when it reads as one as a whole:
``Flyyourkite88!Zq`` holds "your" and is still a password, and a value with a
random run of twelve or more letters and digits in it is a secret whatever
words stand around it (``app-secret-9fK2mQ9xLp4vR7tW1zN5`` is not a name like
``my-client-secret``, nor ``your-token-<random>`` a placeholder).

Speed: every regex is precompiled and starts with a literal, so the engine
skips ahead with a substring search (the few that cannot run only when a
trigger substring is present); keyword assignments are located with
``str.find`` and matched on a lower-cased copy of the text; quantifiers are
bounded or run over one character class, so the run time is linear.  A megabyte of ordinary code or prose
takes a few tens of milliseconds.  ``redact`` never raises on a ``str`` (lone
surrogates and NUL bytes included).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from typing import Callable, Iterable, Iterator, Optional

__all__ = ["redact", "unclosed_private", "rules_hit", "rules_fingerprint", "REDACTION_TYPES", "RULE_KINDS", "PRIVATE_TYPE"]

PRIVATE_TYPE = "private"

_MARKER_PREFIX = "[REDACTED:"
# A marker as `_marker` writes it, for readers of redacted text (`text.traits.around_secrets`).
MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")


def _marker(kind: str) -> str:
    return f"{_MARKER_PREFIX}{kind}]"


# ---------------------------------------------------------------------------
# <private> spans
# ---------------------------------------------------------------------------

# An opening or closing tag; ``<private-notes>`` or ``<privateer>`` are other tags. A Chinese input method types the
# brackets full-width: ＜private＞ (fresh-user run fu32 D10).
_PRIVATE_TAG = re.compile(r"[<＜]([/／]?)private(?![\w-])([^<>＜＞]{0,256})[>＞]", re.IGNORECASE)
# Removing a span can splice a new tag together ("<pri<private>x</private>vate>");
# a few passes make the result stable without risking quadratic time.
_PRIVATE_MAX_PASSES = 8


def _strip_private_once(text: str) -> tuple[str, int, int]:
    """(text without its spans, spans removed, characters after an unclosed opening tag dropped)."""
    parts: list[str] = []
    pos = 0
    depth = 0
    start = 0
    opened = 0
    spans = 0
    for m in _PRIVATE_TAG.finditer(text):
        if m.group(1):  # closing tag
            if depth:
                depth -= 1
                if depth == 0:
                    parts.append(text[pos:start])
                    pos = m.end()
                    spans += 1
            # a stray closing tag outside any span is left alone
        elif m.group(2).rstrip().endswith("/"):
            continue  # self-closing <private/> encloses nothing
        else:
            if depth == 0:
                start, opened = m.start(), m.end()
            depth += 1
    dropped = 0
    if depth:  # unclosed: drop to the end of the text
        parts.append(text[pos:start])
        dropped = len(text) - opened
        pos = len(text)
        spans += 1
    if not spans:
        return text, 0, 0
    parts.append(text[pos:])
    return "".join(parts), spans, dropped


def _strip_private(text: str) -> tuple[str, int, int]:
    total = dropped = 0
    for _ in range(_PRIVATE_MAX_PASSES):
        text, spans, unclosed = _strip_private_once(text)
        if not spans:
            break
        total += spans
        dropped += unclosed
    return text, total, dropped


def unclosed_private(text: str) -> int:
    """How many characters an unclosed ``<private>`` tag in ``text`` drops (everything after it; 0 when
    every span is closed). ``redact`` counts such a span under ``"private"`` like any other; this says
    that it swallowed the rest of the text, so the writer can be told."""
    text = _coerce(text)
    if "<" not in text and "＜" not in text:
        return 0
    return _strip_private(text)[2]


# ---------------------------------------------------------------------------
# PEM private keys (handled in code so that many BEGIN lines stay linear)
# ---------------------------------------------------------------------------

_PK_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PK_BODY_CHUNK = re.compile(r"[A-Za-z0-9+/]{16,}")
_PK_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# Body of a truncated key (no END line): base64 lines and "Proc-Type: ..." style
# headers, separated by real newlines or by literal "\n" as in JSON strings.
_PK_TRUNCATED_BODY = re.compile(
    r"(?:(?:\r?\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]{2,32}: [^\r\n\\]{1,200})"
    r"|[ \t]+[A-Za-z0-9+/=]{16,})+"
)


def _redact_private_keys(text: str, counts: dict[str, int]) -> str:
    marker = _marker("private_key")
    parts: list[str] = []
    pos = 0
    found = 0
    end_match: Optional[re.Match[str]] = None
    no_more_ends = False
    while True:
        begin = _PK_BEGIN.search(text, pos)
        if begin is None:
            break
        if not no_more_ends and (end_match is None or end_match.start() < begin.end()):
            end_match = _PK_END.search(text, begin.end())
            no_more_ends = end_match is None
        if end_match is not None and not no_more_ends:
            if _PK_BODY_CHUNK.search(text, begin.end(), end_match.start()) is None:
                # "starts with -----BEGIN ... and ends with -----END ...": prose
                parts.append(text[pos:begin.end()])
                pos = begin.end()
                continue
            stop = end_match.end()
        else:
            body = _PK_TRUNCATED_BODY.match(text, begin.end())
            if body is None:  # a bare header mentioned in prose is no secret
                parts.append(text[pos:begin.end()])
                pos = begin.end()
                continue
            stop = body.end()
        parts.append(text[pos:begin.start()])
        parts.append(marker)
        pos = stop
        found += 1
    if not found:
        return text
    parts.append(text[pos:])
    counts["private_key"] = counts.get("private_key", 0) + found
    return "".join(parts)


# ---------------------------------------------------------------------------
# Placeholder / code detection for values of assignments, URLs and headers
# ---------------------------------------------------------------------------

# Values that are clearly not credentials (types, nulls, booleans, masks,
# code keywords, the key words themselves used as doc placeholders).
_NOT_A_SECRET = frozenset(
    """
    none null nil undefined true false yes no on off empty unset default
    required optional str string int integer bytes bool boolean any object
    secretstr text varchar char number dict list field column
    await new this self cls function lambda yield async return typeof require
    input prompt ask getpass env environ getenv os var let const
    redacted masked hidden omitted sensitive removed n/a na tbd todo fixme
    sample example dummy placeholder
    keychain keyring vault 1password lastpass bitwarden keepass keepassxc sops ssm kms doppler infisical
    password passwd pass pwd passphrase passcode secret token key apikey
    api_key api-key secret_key access_token auth_token
    """.split()
)
_KEYWORD_IN_VALUE = re.compile(r"passw(?:or)?d|passphrase|secret|token|api[_-]?key", re.IGNORECASE)
# A placeholder word somewhere in a value: the cheap test before `_is_placeholder` reads the whole value.
_PLACEHOLDER_WORD = re.compile(
    r"your|example|placeholder|sample|dummy|fake|change|replace|insert|enter|here|xxx",
    re.IGNORECASE,
)
# Words that say "put the real value here": one of them makes a value of words a placeholder.
_PLACEHOLDER_MARKS = frozenset(
    """your yours example examples placeholder sample dummy fake changeme changeit replace replaceme insert
    here""".split()
)
# Words a placeholder is otherwise made of: "your_api_key_here", "insert-token-here", "MyPasswordHere".
_PLACEHOLDER_FILLERS = frozenset(
    """my the our own real actual put enter paste add set change me it this that goes go to with
    of for and or in new value values string long random generated some
    api key keys token tokens secret secrets password passwords passwd pass pwd passphrase passcode pin
    access auth bearer client db database user username login name id private app service account
    project org bot webhook url host server admin root master session signing encryption credential
    credentials cred creds connection conn""".split()
)
_PLACEHOLDER_VOCABULARY = _PLACEHOLDER_MARKS | _PLACEHOLDER_FILLERS
# the words of a value: "YOURApiKey_here2" -> YOUR, Api, Key, here, 2
_VALUE_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# letters in words joined by separators only: "your-sendgrid-key", "Your Stripe Key"
_PLACEHOLDER_SEPARATED = re.compile(r"[A-Za-z]+(?:[ _.-]+[A-Za-z]+)*")
_CAMEL_IDENT = re.compile(r"_*[a-z]+[A-Z][A-Za-z]*|_+[A-Za-z]\w*")
# two or more words joined by "_" or "-": next_token, X-Auth-Token, my-client-secret
_JOINED_WORDS = re.compile(r"_*[A-Za-z][A-Za-z0-9]*(?:[_-]+[A-Za-z0-9]+)+_*")
_MASK = re.compile(r"[*xX.\u2022#?_:-]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# code "a=b", not base64 padding ("UGw0MW5UM3h0UHc=", "ZGVwbG95==": a Kubernetes Secret's data, .npmrc _auth; fu32 D1)
_IDENT_ASSIGN = re.compile(r"[A-Za-z_$][\w.$]*=(?!=?$)")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]{0,40}(?:\.[A-Za-z_$][\w$]{0,40})+")
_CALL = re.compile(r"[A-Za-z_$][\w.$:]*[(\[]")
_ENV_VAR = re.compile(r"[A-Z_][A-Z0-9_]*")
# where a secret lives, not the secret: env:DB_PASSWORD, op://Private/db/password, vault:secret/data/db#pw
_SECRET_REF = re.compile(
    r"(?i:env|environ|vault|op|ssm|keychain|keyring|file|secrets?|sops|doppler|infisical|gcpsm|awssm)"
    r"(?::[A-Z_][A-Z0-9_]*|:(?:/{1,2}[\w.@-]+(?:/[\w.@-]+)*|[\w.@-]+(?:/[\w.@-]+)+)(?:#[\w.-]+)?)"
)
_PERCENT = re.compile(r"%(?:\([\w.]+\))?[sdr]|%[A-Za-z_]\w*%")
_SQL_PARAM = re.compile(r"[:@][A-Za-z_]\w*|\?")
_TEMPLATE = re.compile(r"\{\{|\$\{|\{[A-Za-z_][\w.]*\}")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.@-]+)+/?|~")
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")
_WORDY = re.compile(r"[A-Za-z][A-Za-z_-]*")
_CAMEL_WORD = re.compile(r"[A-Z][a-z]{2,}|[a-z]{3,}")
_FORMAT_SPEC = re.compile(r"[<>^=]?[+ -]?#?0?[0-9]*[,_]?(?:\.[0-9]+)?[bcdeEfFgGnosxX%]")
_REGEX_META = re.compile(r"[\\\[\]^$|]")
_KEY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-$"
_SPACE = re.compile(r"\s")
_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")


def _is_wordy(v: str) -> bool:
    """Made of words (snake_case, CamelCase, kebab-case, CONSTANT), not random letters."""
    if not _WORDY.fullmatch(v):
        return False
    if v.islower() or v.isupper():
        return True
    return len(_UPPER.findall(v)) * 4 <= len(v)


def _is_camel_words(v: str) -> bool:
    """CamelCase made of real-looking words, like a type name: "PKCS7PrivateKeyTypes"."""
    if not v[:1].isupper() or not _IDENT.fullmatch(v):
        return False
    words = _CAMEL_WORD.findall(v)
    if sum(1 for w in words if w[0].isupper()) < 2:
        return False
    return sum(len(w) for w in words) * 10 >= len(v) * 6


# The last word of a type name: "AccessToken", "PrivateKeyTypes", "SecretStr", "HTTP2ServerConfig".
_TYPE_WORDS = frozenset(
    """type types str string bytes int bool dict list set map tuple array option optional result union literal any
    token tokens key keys secret secrets password passwords passphrase credential credentials cred creds auth
    config settings options model class info data value values field fields id name kind spec schema provider
    manager handler client service store base interface protocol object ref response request payload params args
    input output struct enum pair bundle source factory builder context state entry record hash digest header
    headers session account identity principal claims scope material handle wrapper alias error callback
    generator reader writer loader parser validator verifier signer cipher app middleware grant bearer flow scheme
    adapter backend strategy policy plugin module component view form serializer resource entity event message
    command query task job worker""".split()
)
# a credential's word inside CamelCase: a name such as "OAuth2PasswordBearer" or "CsrfTokenMiddleware"
_CREDENTIAL_WORDS = frozenset("token password passwd secret key auth oauth credential credentials bearer".split())


def _reads_as_type(v: str) -> bool:
    """CamelCase words ending in a type's word or naming a credential, as an annotation's value does ("token:
    AccessToken", "key: PrivateKeyTypes", "token: OAuth2PasswordBearer"); "CorrectHorseBattery9" or
    "CorrectHorseBatteryStaple" after "password:" is a password."""
    if not _is_camel_words(v):
        return False
    words = [w.lower() for w in _VALUE_WORDS.findall(v) if len(w) > 1 and not w.isdigit()]  # past "V3"
    return bool(words) and (words[-1] in _TYPE_WORDS or not _CREDENTIAL_WORDS.isdisjoint(words))


def _is_dotted_name(v: str) -> bool:
    """self.password, process.env.API_KEY, rust_openssl.hpke.X -- not ya29.<random>."""
    if not _DOTTED.fullmatch(v):
        return False
    for seg in v.split("."):
        if len(seg) > 16 and not (_is_wordy(seg) or _is_camel_words(seg)):
            if len(_DIGIT.findall(seg)) * 5 >= len(seg):
                return False
    return True


def _spelled_with(word: str, vocabulary: frozenset[str]) -> Optional[bool]:
    """Whether ``word`` (lower case) is one or more words of ``vocabulary`` run together, and if so whether one
    of them is a placeholder mark ("yourapikey": True; "apikey": False; "flyyourkite": None, not spelled so)."""
    if len(word) > 48:
        return None
    # reach[i]: None = position i cannot be reached; else whether a mark was used on the way there
    reach: list[Optional[bool]] = [None] * (len(word) + 1)
    reach[0] = False
    for i in range(len(word)):
        if reach[i] is None:
            continue
        for j in range(i + 1, min(len(word), i + 16) + 1):
            piece = word[i:j]
            if piece in vocabulary:
                marked = reach[i] or piece in _PLACEHOLDER_MARKS
                if reach[j] is None or (marked and not reach[j]):
                    reach[j] = marked
    return reach[-1]


def _is_placeholder(v: str) -> bool:
    """True when ``v`` as a whole reads as a placeholder (``your_password_here``, ``sample-token``,
    ``YOURAPIKEY``, ``your-sendgrid-key``, ``changeme``, ``xxxx``), not when a random-looking value merely
    contains such a word (``Flyyourkite88!Zq``, ``Kx9sampleQ2``, ``Dummyhorse77xQ``).

    Two readings: every word of the value is a placeholder word, a key word or a number, at least one a
    placeholder mark (run-together words too: "yourapikey", "passwordhere", "sample_token_2"); or the value
    is only letters and separators, and a placeholder mark stands as a word of its own ("your-sendgrid-key",
    "xoxb-your-token", "ExampleOrgToken")."""
    words = _VALUE_WORDS.findall(v)
    if not words:
        return False
    marked = False
    spelled = True
    for word in words:
        low = word.lower()
        if word.isdigit():   # your_key_1, sample-token-2024
            continue
        if len(low) >= 3 and low.strip("x") == "":   # your_key_xxxx
            marked = True
            continue
        reading = _spelled_with(low, _PLACEHOLDER_VOCABULARY)
        if reading is None:
            spelled = False
        else:
            marked = marked or reading
    if spelled and marked:
        return True
    if _DIGIT.search(v) or not _PLACEHOLDER_SEPARATED.fullmatch(v):
        return False
    return any(word.lower() in _PLACEHOLDER_MARKS for word in words)


def _class_changes(segment: str) -> int:
    """How often consecutive characters of ``segment`` switch between upper case, lower case and digits:
    "9fK2mQ9x" switches 7 times, "Build2024" twice, "sha256Digest" three times."""
    classes = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o" for c in segment]
    return sum(a != b for a, b in zip(classes, classes[1:]))


def _jumbled(segment: str) -> bool:
    """A run of letters and digits that reads as random: upper and lower case and digits, switching between
    them at least five times ("Q8zL2mX9vT4kR7wN1pB5", "abc123XYZ789def456"), and not a CamelCase name
    ("HTTP2ServerConfig", "OAuth2Token")."""
    return (_class_changes(segment) >= 5 and _UPPER.search(segment) is not None and _LOWER.search(segment) is not None
            and _DIGIT.search(segment) is not None and not _is_camel_words(segment))


def _has_random_run(v: str, min_len: int = 12) -> bool:
    """Whether ``v`` holds a random-looking run of ``min_len`` or more letters and digits, whatever words stand
    around it: ``app-secret-9fK2mQ9xLp4vR7tW1zN5`` and ``your-token-abc123XYZ789def456`` are secrets, not names."""
    return any(len(seg) >= min_len and _jumbled(seg) for seg in _SEGMENTS.findall(v))


def _keep_value(value: str, *, quoted: bool, family: str) -> bool:
    """True when ``value`` on its own reads as a placeholder, a reference or
    code rather than a credential."""
    v = value.strip()
    if not v or v.startswith(_MARKER_PREFIX):
        return True
    if quoted and v != value:  # "Token: " + x -- a fragment of a larger string
        return True
    low = v.lower()
    if low in _NOT_A_SECRET:
        return True
    first = v[0]
    if first in "<{([&":  # <your password>, {{ vault }}, (expr), [list], [PAD], &ref
        return True
    if low.startswith("arn:"):  # an AWS resource name, not a credential
        return True
    if _SECRET_REF.fullmatch(v) and not _has_random_run(v):  # env:DB_PASSWORD, op://Private/db/password
        return True
    if first == "$":  # ${VAR}, $(cmd), $DB_PASSWORD, $password
        rest = v[1:]
        if not rest or rest[0] in "{(" or _ENV_VAR.fullmatch(rest) or _KEYWORD_IN_VALUE.search(rest):
            return True
    if len(v) <= 2 and not v.isalnum():  # "|", ">-"
        return True
    if _MASK.fullmatch(v) or _SQL_PARAM.fullmatch(v) or _COLOR.fullmatch(v):
        return True
    if (_PERCENT.search(v) and not _noisy(v)) or _TEMPLATE.search(v) or _PATH.fullmatch(v):
        return True
    if "..." in v or "\u2026" in v or "***" in v:  # elided: "hf_...", "sk-...", "hf_***"
        return True
    if v.isdigit() and (family == "token" or len(v) <= 3):
        return True
    # words around a random run do not make it a name or a placeholder: "app-secret-9fK2mQ9xLp4vR7tW1zN5"
    random_run = _has_random_run(v)
    if not random_run and _PLACEHOLDER_WORD.search(v) and _is_placeholder(v):
        return True
    has_keyword = _KEYWORD_IN_VALUE.search(v) is not None
    if has_keyword and _ENV_VAR.fullmatch(v):  # names a variable: "DB_PASSWORD", API_TOKEN
        return True
    if has_keyword and not random_run and (_JOINED_WORDS.fullmatch(v) or _CAMEL_IDENT.fullmatch(v)):
        # a name, not a value: next_token, "X-Auth-Token", "my-client-secret", dbPassword
        # (a single run of letters such as "supersecret" is still redacted)
        return True
    if quoted:
        if _CALL.match(v) and v.endswith((")", "]")):  # `get_token()`, "cfg['key']"
            return True
        if has_keyword and _SPACE.search(v):  # "Forgot your password?"
            return True
    else:
        # code: os.getenv("X"), cfg["db"], self.password, process.env.TOKEN, dbPassword,
        # a=b, markup (bob.<span>), an escape left from a JSON string ("\\n")
        if _CALL.match(v) or _is_dotted_name(v) or _IDENT_ASSIGN.match(v):
            return True
        if "<" in v or first == "\\":
            return True
    if family == "token":
        # API tokens are long and random: not counts, stars ("1*tchar"),
        # descriptions ("RFC 2518"), short words ("unexpected token: import")
        # or names ("next_marker", "string.quoted.single")
        if len(v) < 4 or ("*" in v and not _noisy(v)) or _is_dotted_name(v):
            return True
        if _SPACE.search(v) and low.split(None, 1)[0] not in ("bearer", "basic", "token"):
            return True
        if _is_wordy(v) and (
            len(v) < 8 or ("_" in v and not has_keyword) or _reads_as_type(v) or _CAMEL_IDENT.fullmatch(v)
        ):
            return True
    return False


def _key_start(s: str, kw_start: int) -> int:
    """Where the key ending in the keyword at ``kw_start`` begins (DB_PASSWORD)."""
    lo = max(0, kw_start - 128)
    return lo + len(s[lo:kw_start].rstrip(_KEY_CHARS))


def _keep_assignment(m: "re.Match[str]", value: str) -> bool:
    s = m.string  # the text matched (usually lower-cased, same offsets)
    kw = m.group("kw").lower()
    family = _family(kw)
    start = _key_start(s, m.start("kw"))
    key = s[start : m.end("kw")].lower().lstrip("-")
    if ":" in key:  # AWS::ApiGateway::ApiKey, arn:aws:...:secret:name
        return True
    sep = m.group("sep")
    quoted = m.group("uq") is None
    if quoted:
        prefix = m.group("pfx") or ""
        if "r" in prefix and _REGEX_META.search(value):  # r"[a-z]+" is a regex
            return True
        if "f" in prefix and "{" in value:
            return True
        return _keep_value(value, quoted=True, family=family)
    v = value.rstrip(":.,")  # "token: str:", "password: hunter2."
    if not v:
        return True
    after = s[m.end() : m.end() + 80]
    rest = after.lstrip(" \t")
    if rest.startswith("="):  # a = b = c, or "x: Type = default"
        return True
    colon_only = "=" not in sep and ":" in sep
    if kw == "pass" and key == "pass" and ((colon_only and sep != ":") or _is_wordy(v)):
        return True  # "First pass: determine ...", "pass :data:`x`", "--pass=early"
    if (colon_only or not sep.strip()) and _WORDY.fullmatch(v):
        if rest and rest[0] != "#" and len(rest) < len(after):
            return True  # prose: "password: The plaintext password.", "--password option"
        if not sep.strip() and v.lower() in _CLI_WORDS:
            return True
    if colon_only:
        if rest[:1] == "|" or _reads_as_type(v):  # annotations: "key: PrivateKeyTypes | None"
            return True
        if sep == ":" and _FORMAT_SPEC.fullmatch(v):  # f"{token:056d}"
            return True
    bare = _IDENT.fullmatch(v) is not None and _DIGIT.search(v) is None
    if bare and "=" in sep:
        if sep[:1] in (" ", "\t"):  # code style "key = value": a variable
            return True
        j = start
        while j > 0 and s[j - 1] in " \t":
            j -= 1
        if j > 0 and s[j - 1] in ",(":  # f(x, password=pw), user, password = creds
            return True
    return _keep_value(v, quoted=False, family=family)


_CLI_WORDS = frozenset(
    """option options flag flags argument arguments parameter parameters and or is
    are to the with for of in requires required must can cannot should will was not
    if when then also""".split()
)


# ---------------------------------------------------------------------------
# Regex rules
# ---------------------------------------------------------------------------

Check = Callable[["re.Match[str]", str], bool]


class _Rule:
    """One pattern.  ``lowered`` rules are written in lower case and matched
    against ``text.lower()`` (fast, case-sensitive scanning); the secret is
    still cut out of the original text by position.  ``name`` is unique in the
    table (tests hold one sample per name); ``kind`` is the reported type."""

    __slots__ = ("name", "kind", "marker", "regex", "regex_ci", "groups", "keep", "triggers", "lowered", "stems",
                 "shaped")

    def __init__(
        self,
        kind: str,
        pattern: str,
        *,
        name: str = "",
        triggers: tuple[str, ...] = (),
        groups: tuple[str, ...] = (),
        keep: Optional[Check] = None,
        lowered: bool = False,
        stems: tuple[str, ...] = (),
        shaped: bool = False,
    ) -> None:
        self.name = name or kind
        self.kind = kind
        self.marker = _marker(kind)
        self.regex = re.compile(pattern)
        # used on the original text if lowering ever changes its length
        self.regex_ci = re.compile(pattern, re.IGNORECASE) if lowered else self.regex
        self.groups = groups  # first group that matched is the secret; () = whole match
        self.keep = keep  # returns True to leave a match alone
        # for patterns without a literal prefix: one of these substrings must
        # be present for the (slower) scan to run at all
        self.triggers = triggers
        self.lowered = lowered
        # if set, every match starts at one of these substrings: candidates are
        # found with str.find and tried with regex.match (much faster than a
        # regex scan for a pattern with no literal prefix)
        self.stems = stems
        # every match is one run of _RUN_CHARS, 20 or more long: the rule runs
        # only if it matches (or its triggers occur) in the text's long runs
        self.shaped = shaped


_B64URL = r"A-Za-z0-9_-"

# Value of an assignment: quoted (with optional Python string prefix) or bare.
# Lower-case only: it is used by lowered rules.
_VALUE = (
    r"(?:(?P<pfx>[rbuf]{1,2})(?=[\"']))?"
    r"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,1024})\""
    r"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,1024})'"
    r"|`(?P<bq>[^`\r\n]{1,1024})`"
    # bare: up to a space, quote or closing bracket; "&" only ends it before
    # the next query parameter (?token=abc&page=2)
    r"|(?P<uq>(?:[^\s\"'`,;&)}\]]|&(?![A-Za-z_][\w.-]*=)){1,1024}))"
)
_VALUE_GROUPS = ("dq", "sq", "bq", "uq")

# Every alternative starts at one of _KW_STEMS (prefixes such as "api_" in
# "api_key" are look-behinds), so candidates are found with str.find.
_KW_STEMS = ("pass", "pwd", "secret", "token", "key")
_PASSWORD_KW = r"passw(?:or)?d|passphrase|passcode|pwd|pass(?<![a-z]pass)"
# "api key: <v>" and "access key: <v>" are written with a space too (in prose and YAML alike)
_KEY_KW = "key(?:%s)" % "|".join(
    "(?<=%s%skey)" % (prefix, re.escape(joint))
    for prefix in ("api", "access", "private", "encryption", "signing", "master")
    for joint in ("", "_", ".", "-") + ((" ",) if prefix in ("api", "access") else ())
)
_TOKEN_KW = r"secret(?:[ _.-]?access)?(?:[ _.-]?key(?:[_.-]?base)?)?|token|" + _KEY_KW
_KW = rf"(?P<kw>{_PASSWORD_KW}|{_TOKEN_KW})"
# a quoted key may close a subscript: env["DB_PASSWORD"] = ...; a bare
# [token] is a variable used as an index.  "==" and "!=" are comparisons.
_SEPARATOR = r"(?:[\"'`]\]?)?(?P<sep>[ \t]*(?:=>|[:?]?=(?!=)|:(?!:))[ \t]*)"


def _family(kw: str) -> str:
    kw = kw.lower()
    return "password" if kw.startswith("pass") or kw == "pwd" else "token"


def _cli_value(group: str) -> str:
    """A command-line option's value, bare or in quotes (the quote is left out of the group)."""
    return rf"[\"']?(?P<{group}>[^\s\"'`;&|]{{1,256}})"


def _keep_cli(m: "re.Match[str]", value: str) -> bool:
    """Keep a password option's value that is a reference ($MYSQL_PWD, $(cat f)), a placeholder or prose
    ("docker login -p is deprecated")."""
    return value.lower() in _CLI_WORDS or _keep_value(value, quoted=False, family="password")


def _keep_xml(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value.strip(), quoted=True, family=_family(m.group("kw")))


def _keep_literal(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value, quoted=True, family="literal")


def _needs_digit(m: "re.Match[str]", value: str) -> bool:
    """Keep a match without a digit: a run of letters after the prefix is a word, not a key."""
    return _DIGIT.search(value) is None


def _needs_mixed_case(m: "re.Match[str]", value: str) -> bool:
    """Keep a match whose random part is single-case (hf_transformerscachedirectoryname...)."""
    body = value.split("_", 1)[-1] if value.startswith("hf_") else value[8:]
    return body.islower() or body.isupper()


def _keep_mailgun(m: "re.Match[str]", value: str) -> bool:
    """key-<md5> names a cache entry; a Mailgun key also has letters past f and a digit."""
    body = value[4:]
    return _DIGIT.search(body) is None or re.search(r"[g-z]", body) is None


def _keep_discord(m: "re.Match[str]", value: str) -> bool:
    """A bot token's first part encodes a numeric id (digits in its base64); its last part is random."""
    first, _, rest = value.partition(".")
    last = rest.rpartition(".")[2]
    return _DIGIT.search(first) is None or _is_wordy(last) or _is_camel_words(last)


def _keep_unless_base64(m: "re.Match[str]", value: str) -> bool:
    """An AWS secret key is base64 (mixed case and digits); a 40-hex SHA-1 next to a key id or after the words
    "aws secret" is not.  Reads ``value`` (the original text), not the match, which a lowered rule lower-cased."""
    has = [_UPPER.search(value), re.search(r"[a-z]", value), _DIGIT.search(value) or re.search(r"[+/]", value)]
    return not all(has)


# ---- keyword-anchored, high-entropy values (names no provider rule knows) ----

_GENERIC_KW = r"(?P<kw>key|auth(?:orization)?|cred(?:ential)?|secret|token|passw(?:or)?d|passphrase|pwd)"
# the name may go on after the keyword: TOKEN_PROD, api_key.live, credentials
_GENERIC_TAIL = r"(?P<tail>s?(?:[_.-][a-z0-9]{1,16}){0,3})"
_GENERIC_STEMS = _KW_STEMS + ("auth", "cred")
# names that say the value is a credential: a hex digest or UUID under them is one too
_SECRET_NAME = re.compile(
    r"secret|passw|pwd|passphrase|token|auth|cred|priv|signing|master|encrypt|licen[cs]e|hmac"
    r"|(?:api|access|account|session|client|app|service|subscription|consumer|shared|deploy|admin|write|project)[ _.-]?key"
)
# names that say it is not: lookup keys, public halves, metadata about a key
_PUBLIC_NAME = re.compile(
    r"public|pub[ _.-]?key|cache|idempot|partition|primary|foreign|lookup|dedup|composite|unique"
    r"|(?:sort|object|row|hash|map|range|dict|group|index|shard|routing|join|foreign|natural|message)[ _.-]?key"
    r"|key[ _.-]?(?:id|ids|name|type|size|len|length|path|file|alg|algorithm|format|version|prefix|usage|ref|count"
    r"|hash|fingerprint|spec|field|column|order)(?![a-z])"
    r"|token[ _.-]?(?:id|type|count|counts|len|length|limit|usage|url|uri|endpoint|expiry|expires|budget)(?![a-z])"
    r"|fingerprint|checksum|digest|etag"
)
_SEGMENTS = re.compile(r"[A-Za-z0-9]+")
_DIGEST_LABEL = re.compile(r"(?:sha|SHA)(?:1|224|256|384|512)[:=-]|(?:md5|MD5|blake2[bs]?|xxh[0-9]*)[:=-]")
_PREFIXED_ID = re.compile(r"[a-z]{2,6}_[A-Za-z0-9]{8,64}")
_HEX_SEGMENT = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_WORD_SEGMENT = re.compile(r"([A-Za-z]+)[0-9]{0,4}")


def _noisy(v: str) -> bool:
    """A long run of near-random characters: a "%r" or a "*" in it is one of them, no format or glob (Django's
    SECRET_KEY = 'k8#2m!x9q@w3e%r5t&y7u*i0o…': fresh-user run fu32 D2)."""
    return len(v) >= 24 and _entropy(v) >= 4.5


def _entropy(v: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(v)
    return -sum(c / n * math.log2(c / n) for c in Counter(v).values())


def _wordlike(segment: str) -> bool:
    if len(segment) <= 5:
        return True
    m = _WORD_SEGMENT.fullmatch(segment)
    return m is not None and (_is_wordy(m.group(1)) or _is_camel_words(m.group(1)))


def _shape(v: str) -> str:
    """'words' (identifiers, versions, prose), 'hex' (digests, UUIDs, hashed asset names) or 'random'."""
    segments = _SEGMENTS.findall(v)
    if all(_wordlike(s) for s in segments):
        return "words"
    if all(_wordlike(s) or _HEX_SEGMENT.fullmatch(s) for s in segments):
        return "hex"
    return "random"


def _previous_word(s: str, start: int) -> str:
    """The word before a key in prose: "cache" in "cache key: ...", "api" in "API key: ..."."""
    if start < 2 or s[start - 1] != " ":
        return ""
    j = start - 1
    lo = max(0, j - 32)
    return s[lo:j].rsplit(None, 1)[-1] if s[lo:j].strip() else ""


def _keep_generic(m: "re.Match[str]", value: str) -> bool:
    v = value.strip()
    if m.group("uq") is not None:
        v = v.rstrip(":.,")
    if len(v) < 16 or _SPACE.search(v) or _keep_assignment(m, value):  # cheapest test first
        return True
    if max(map(len, _SEGMENTS.findall(v)), default=0) < 12:  # host names, versions, short ids joined up
        return True
    s = m.string
    start = _key_start(s, m.start("kw"))
    name = s[start : m.end("tail")].lower()
    prev = _previous_word(s, start).lower()
    full = f"{prev} {name}" if prev else name
    if _PUBLIC_NAME.search(full):
        return True
    if _DIGEST_LABEL.match(v):  # SHA256:<fingerprint>, sha512-<integrity>: digests, whatever the name
        return True
    shape = _shape(v)
    if shape == "words":
        return True
    secretish = _SECRET_NAME.search(full) is not None
    if shape == "hex":  # a digest or UUID is a secret only under a name that says so
        return not secretish
    if not secretish and _PREFIXED_ID.fullmatch(v):  # "key": "msg_01XF...", cus_..., req_...: object ids
        return True
    if _DIGIT.search(v) is None or not re.search(r"[A-Za-z]", v):
        return True
    if sum(ord(b) - ord(a) == 1 for a, b in zip(v, v[1:])) * 2 >= len(v):  # an alphabet: "abc...XYZ0123"
        return True
    return _entropy(v) < min(3.5, math.log2(len(v)) - 0.6)


# ---- a credential named in prose: "the admin password for staging is <value>", "use the password <value>" ----

# the credential word, not part of a longer name (token_count, password_reset, passwords_match)
_PROSE_PASSWORD_KW = r"(?<![a-z0-9])(?P<kw>passw(?:or)?d|passphrase|passcode|pwd|pw)(?![a-z0-9_-])"
_PROSE_SECRET_KW = (r"(?<![a-z0-9])(?P<kw>secret(?:[ _-](?:access[ _-])?key)?|token|credential"
                    r"|key(?<=api key)|key(?<=api-key)|key(?<=api_key)|key(?<=apikey)"
                    r"|key(?<=access key)|key(?<=access-key)|key(?<=access_key)"
                    r"|key(?<=project key)|key(?<=project-key)|key(?<=project_key))(?![a-z0-9_-])")   # fu37 D6: Memfault
# Between word and value: nothing ("use the password <v>"), or up to five words of the same sentence and
# line ("for staging", "of the ci user") then the link ``lk``: "is" / "was" / "to" / "=" / ":" ("is now",
# "was changed to", "set the password to").
_PROSE_LINK = (
    # a word taken whole (the look-ahead and back-reference make it atomic: no shorter tries)
    r"(?:(?:[ \t]+(?=(?P<w>[\w'@/-]{1,30}(?:\.[\w'@/-]{1,30}){0,3}))(?P=w)){0,5}?"
    r"(?P<lk>[ \t]+(?:is|was|are|were|equals|becomes|became|to)"
    r"(?:[ \t]+(?:now|still|currently|just|simply|(?:set|changed|reset|rotated)[ \t]+to))?[ \t]*:?"
    r"|[ \t]*(?:=>|->|:=|=|:)))?"
    r"[ \t]+"
)
def _prose_value(shortest: int) -> str:
    """A value in prose: one run without spaces, `shortest` to 200 characters, optionally quoted, ending before
    sentence punctuation (a trailing "!" stays in: it is as often part of a password as the end of a sentence)."""
    return (rf"[\"'`]?(?P<s>[^\s\"'`<>()\[\]{{}},;]{{{shortest - 1},199}}[^\s\"'`<>()\[\]{{}},;.:?])"
            r"(?=[.,;:?)\]}\"'`>]*(?:\s|$))")


_PROSE_VALUE = _prose_value(8)
# A password's value may be short ("hunter2", "abc1"): 4 to 200 characters.
_PROSE_PASSWORD_VALUE = _prose_value(4)
# The same in Chinese, where no space need stand around the value: 密码：<v>, 数据库密码是<v>, 口令已改为 <v>.
_ZH_PASSWORD_KW = r"(?P<kw>密码|密碼|口令)"
_ZH_SECRET_KW = r"(?P<kw>令牌|密钥|密鑰|秘钥|凭证|凭据|憑證)"
# the English credential word a Chinese sentence names it with ("测试环境的 token 是 <v>", "api key 为 <v>": fresh-user run
# fu32 D3), before a Chinese link only (its "token: <v>" is the English rules')
_ZH_EN_KW = (r"(?<![a-z0-9_])(?P<kw>token|secret|api[ _-]?key|access[ _-]?key|password|passwd)(?![a-z0-9_])"
             r"(?=[ \t]*(?:现在|目前|已经?|仍然?|还|都|统一)?(?:是|为|為|改为|改為|改成|设为|设置为|设成|换成|換成|更新为))")
_ZH_LINK = (r"[ \t]*(?P<lk>[:：=]|(?:现在|目前|已经?|仍然?|还|都|统一)?"
            r"(?:是|为|為|改为|改為|改成|设为|设置为|设成|换成|換成|更新为)[ \t]*[:：]?)[ \t]*")
# an ASCII run (a CJK character or full-width punctuation ends it), 4 to 200 characters
_ZH_VALUE = (r"[\"'`“‘「]?(?P<s>[!#-&*+\-./0-9:=?@A-Z\\^_a-z|~]{3,199}[!#-&*+\-/0-9=@A-Z\\^_a-z|~])"
             r"(?=[.,;:?)\]}\"'`>”’」]*(?![!-~]))")
_SPECIAL = re.compile(r"[!#$%^&*+=?~@]")
# words before the credential word that say the value is not a secret: a public key, a page cursor
_NOT_SECRET_BEFORE = re.compile(
    r"public|publishable|pagination|continuation|(?<![a-z])(?:next|page|starting|cursor)(?![a-z])", re.IGNORECASE
)
_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# the first word between credential word and link that still names the credential itself: "the password
# for staging is", "the token we use is", "the password changed to"
_DIRECT_LEAD = frozenset(
    "for of on in at from to we i you they that which used needed set changed reset rotated updated".split()
)


def _named_directly(m: "re.Match[str]") -> bool:
    """Whether the value follows the credential word and a link ("is", "was", "to", ":", "=") directly or after
    a phrase that names the credential ("the password for staging is"), not after a noun that names something
    else about it ("the password hash is", "the token format is")."""
    if m.group("lk") is None:   # right after the word: "log in with password <v>", "pw <v>" (a password only)
        return _is_password_word(m.group("kw"))
    between = m.string[m.end("kw") : m.start("lk")].split()
    return not between or between[0] in _DIRECT_LEAD


# words that join the parts of an ordinary compound ("not-so-secret", "end-to-end", "one-time-only"), not the
# words of a passphrase
_COMPOUND_JOINERS = frozenset(
    """a an the to of in on at by for and or nor not no so as is be it its with from up off out per via than too
    very all any one only non self well de re pre co un multi""".split()
)
# a letters-and-digits word that names a technique, a unit or a version, not a password: "argon2id", "base64",
# "sha256", "utf8", "k8s", "2fa", "128bit", "v12"
_TECH_NAME = re.compile(
    r"md[245]|sha(?:1|2|3|224|256|384|512)|argon2(?:id|i|d)?|pbkdf2|[by]?scrypt|bcrypt|base(?:16|32|36|58|62|64)"
    r"|utf(?:8|16|32)|ucs2|rot13|aes(?:128|192|256)|3des|des3|blake[23][bs]?|crc(?:16|32|64)|hmac|x509"
    r"|pkcs[0-9]{1,2}|[ex]25519|ed448|p256|rsa[0-9]{3,4}|k8s|i18n|l10n|[0-9]fa|ipv[46]|http[23]|oauth[12]"
    r"|v[0-9]{1,3}|[0-9]+(?:bits?|bytes?|chars?|characters?|digits?|[kmg]b|ms|s|m|h|d|mins?|hours?|days?"
    r"|weeks?|months?|years?|x)",
    re.IGNORECASE,
)
_PASSWORD_WORDS = ("pwd", "pw", "密码", "密碼", "口令")


def _is_password_word(kw: str) -> bool:
    """password / passwd / passphrase / passcode / pwd / 密码 / 口令, not secret, token or key."""
    return kw.startswith("pass") or kw in _PASSWORD_WORDS


def _is_passphrase(v: str) -> bool:
    """Three or more words joined by hyphens, as a generated passphrase is ("correct-horse-battery-staple"),
    not a compound adjective ("case-sensitive", "not-so-secret", "end-to-end-encrypted")."""
    parts = v.split("-")
    if len(parts) < 3 or not all(p.isalnum() and p.isascii() for p in parts):
        return False
    words = {p.lower() for p in parts if p.isalpha() and len(p) >= 2} - _COMPOUND_JOINERS
    return len(words) >= 3


def _is_word_and_number(v: str) -> bool:
    """One run of letters and digits ("hunter2", "Summer2024", "abc1"), not a technique, unit or version
    ("argon2id", "base64", "128bit", "v12")."""
    return (v.isascii() and v.isalnum() and _DIGIT.search(v) is not None and not v.isdigit()
            and _TECH_NAME.fullmatch(v) is None)


# a unit after a number: "the password is 1024 bits", not a PIN
_UNIT_AFTER = re.compile(r"[ \t]+(?:bits?|bytes?|chars?|characters?|digits?|letters?|symbols?|words?|times?"
                         r"|attempts?|tries|days?|hours?|minutes?|weeks?|months?|years?|long)(?![a-z])")


def _password_shape(m: "re.Match[str]", v: str) -> bool:
    """A password named directly whatever its shape: a word with a number ("hunter2", "Summer2024!"), words
    joined by hyphens ("correct-horse-battery-staple"), a PIN of four digits or more ("the passcode is 4821")."""
    if not _is_password_word(m.group("kw")) or not _named_directly(m):
        return False
    core = v.rstrip("!")
    if core.isdigit() and core.isascii():
        return len(core) >= 4 and _UNIT_AFTER.match(m.string, m.end()) is None
    return _is_word_and_number(core) or _is_passphrase(core)


def _keep_prose(m: "re.Match[str]", value: str) -> bool:
    """Keep what a credential word is followed by in prose unless it reads as a secret.

    Named directly ("the DB password is <v>", "set the password to <v>", "password for staging: <v>"), a value
    goes when it has letters and a digit or a symbol inside it, and either the symbol or three switches between
    upper, lower and digits ("hunter2Secret!", "Passw0rd", "p@ssword", "CorrectHorseBattery9").  A password
    (passphrase, passcode, pwd, 密码, 口令) named directly goes in two more shapes: one word with a number
    ("hunter2", "Summer2024"; not "argon2id", "base64", "128bit") and three or more words joined by hyphens
    ("correct-horse-battery-staple"; not "case-sensitive" or "not-so-secret"); ordinary words ("the password is
    wrong", "password is required") stay.  Otherwise a value must read as a random token: letters and a digit,
    mixed case or a special character, and five switches or more ("Xk9mQ2pLz7Rw!", "here_8Fk2LmQ9xZ").  Either
    way a word, version or name with a number ("argon2id", "v1.2.3-rc4", "gpt-4o-mini", ``token_count``,
    ``OAuth2Token``), code, a path, URL, e-mail address or placeholder stays.  Reads ``value`` (the original
    text): the rule matched a lower-cased copy."""
    v = value
    if _password_shape(m, v):  # "the wifi password is hunter2", "my password is correct-horse-battery-staple"
        return _keep_value(v, quoted=False, family="password")
    direct = _named_directly(m)
    if re.search(r"[A-Za-z]", v) is None or (not direct and (m.group("lk") or "").strip() == "to"):
        return True  # "the token is passed to verifyJwt2Token": "to" links only a value named directly
    if direct:
        inner = _SPECIAL.search(v.rstrip("!"), 1)  # not "#channel" or "required!"
        if not (_DIGIT.search(v) or inner):
            return True
        if not inner and sum(_class_changes(seg) for seg in _SEGMENTS.findall(v)) < 3:
            return True
    else:
        if _DIGIT.search(v) is None or not ((_UPPER.search(v) and _LOWER.search(v)) or _SPECIAL.search(v)):
            return True
        if sum(_class_changes(seg) for seg in _SEGMENTS.findall(v)) < 5:
            return True
    if "://" in v or v[0] in "/~." or _EMAIL.fullmatch(v) or _DIGEST_LABEL.match(v):
        return True
    # public by design (a Mapbox "pk." or Stripe "pk_" token, one the sentence calls public) or a page cursor
    # ("--next-token <v>", "the next page token is <v>"); ``m.string`` is lower case
    if v.startswith(("pk.", "pk_")) or _NOT_SECRET_BEFORE.search(m.string[max(0, m.start() - 40) : m.start()]):
        return True
    if _reads_as_type(v) if direct else _is_camel_words(v):
        return True
    if _IDENT.fullmatch(v) and (not direct or v.lower() == v or v.upper() == v):  # token_count, MAX_TOKENS2
        if all(_wordlike(seg) for seg in v.split("_") if seg):
            return True
    return _keep_value(v, quoted=False, family="token")


def _keep_zh(m: "re.Match[str]", value: str) -> bool:
    """密码：<v> and 密码=<v> read as an assignment (``password: <v>``: a literal value goes, words followed by more
    words, placeholders and references stay); 密码是 <v> as prose (``_keep_prose``)."""
    if m.group("lk") not in (":", "：", "="):
        return _keep_prose(m, value)
    rest = m.string[m.end() : m.end() + 80].lstrip(" \t")
    if _WORDY.fullmatch(value) and rest and rest[0] != "#":  # 密码: see vault
        return True
    return _keep_value(value, quoted=False, family="password" if m.group("kw") in ("密码", "密碼", "口令") else "token")


# ---- a user/password pair after a login word: "the grafana login is admin / <v>", "账号 admin 密码 <v>" ----

# the word that says a pair follows: login, sign-in, creds, "user/password"; not part of a path or a longer name
_PAIR_KW = (r"(?<![a-z0-9_./@-])(?P<kw>log[ -]?ins?|sign[ -]?ins?|creds|credentials?"
            r"|user(?:[ -]?name)?[ \t]*/[ \t]*pass(?:w(?:or)?d)?)(?![a-z0-9_-])")
# between the word and the user name: nothing, or up to four words then "is" / "are" / "was" / ":" / "=" ("the creds
# for staging are root / <v>", "login: admin/<v>") or "as" / "with" / "using" ("log in as admin / <v>", "log in to the
# VPN with tomasz / <v>": fresh-user run fu37 D6)
_PAIR_LINK = (
    r"(?:(?:[ \t]+(?=(?P<w>[\w'@-]{1,30}))(?P=w)){0,4}?"
    r"(?P<lk>[ \t]+(?:is|are|was|were)(?:[ \t]+(?:now|still|just))?(?:[ \t]*:)?[ \t]+"
    r"|(?:\*\*|__)?[ \t]*(?:=|:)[ \t]*(?:\*\*|__)?[ \t]*)"
    r"|(?:[ \t]+(?=(?P<w2>[\w'@-]{1,30}))(?P=w2)){0,4}?[ \t]+(?P<as>as|with|using)[ \t]+|[ \t]+)"
)
# a user name: letters, digits and . _ @ + - (an e-mail address too), optionally quoted
_PAIR_USER = r"[\"'`]?(?P<user>[a-z0-9_][a-z0-9._@+-]{0,63})[\"'`]?"
# user and secret: "admin / <v>", "admin/<v>", "admin:<v>"; after credentials also "admin and <v>" (fu37 D6)
_PAIR_SEP = r"(?P<sep>[ \t]*/[ \t]*|:|[ \t]+and[ \t]+)"
# "user admin password <v>", "username deploy, pass <v>", "login bob with password <v>"
_USER_KW = (r"(?<![a-z0-9_./@-])(?P<kw>user(?:[ -]?name)?|login|usr|(?:log|sign)[ -]?in[ \t]+as)"
            r"(?![a-z0-9_-])")
_USER_THEN_PASSWORD = (
    r"(?:[ \t]*[:=][ \t]*|[ \t]+(?:is[ \t]+)?)" + _PAIR_USER
    + r"(?:[ \t]*[,;]?[ \t]+(?:(?:and|with|&)[ \t]+)?(?:(?:the|a|its|their)[ \t]+)?)"
    r"(?P<pk>passw(?:or)?d|pass|pwd|pw|passphrase|passcode)(?![a-z0-9_-])"
    r"(?:[ \t]+(?:is|was)(?:[ \t]*:)?|[ \t]*(?::|=))?[ \t]+"
)
# the same in Chinese: "账号 admin 密码 <v>", "用户名：deploy，密码：<v>", "登录 admin / <v>", "账号密码是 admin/<v>"
_ZH_PAIR_KW = (r"(?P<kw>(?:账号|帐号|账户|帳號|帳戶|用户名?|用戶名?|登录名?|登錄名?|登陆名?)"
               r"(?:[ \t]*(?:和|与|及|/|、)?[ \t]*(?:密码|密碼|口令))?)")
_ZH_PAIR_USER = r"[ \t]*(?P<lk>[:：=]|是|为|為)?[ \t]*[\"'`“‘「]?(?P<user>[a-z0-9_][a-z0-9._@+-]{0,63})[\"'`”’」]?"
_ZH_PAIR_SEP = (r"(?P<sep>[ \t]*/[ \t]*|:|[ \t]*[,，、;；]?[ \t]*(?P<pk>密码|密碼|口令)"
                r"[ \t]*(?:[:：=]|是|为|為)?[ \t]*)")
# where a secret lives, not a user name: "creds: vault/prod2", "credentials are in ssm/db1"
_SECRET_STORES = frozenset(
    """vault secrets secret env ssm kms sops keychain keyring 1password op lastpass bitwarden doppler infisical
    kv aws gcp azure k8s kubernetes github gitlab ci in at on from see the a an""".split()
)


def _pair_secret_shape(v: str, pin: bool) -> bool:
    """Whether the secret half of a user/password pair reads as a password: a word with a number ("hunter2";
    not "v2", "utf8", "http2"), an inner symbol with letters or digits around it ("Gr4fana#2026", "S3cr3t!",
    "p@ss"), words joined by hyphens ("correct-horse-battery-staple") or, when ``pin``, four digits or more.
    Ordinary words ("settings", "output"), paths, URLs, versions and addresses are no password."""
    core = v.rstrip("!")
    if not core or "/" in v or "://" in v or v[0] in "/~." or _EMAIL.fullmatch(v):
        return False
    if core.isdigit() and core.isascii():
        return pin and len(core) >= 4
    if _is_word_and_number(core) or _is_passphrase(core):
        return True
    return _SPECIAL.search(core, 1) is not None and re.search(r"[A-Za-z0-9]", core) is not None


# the first word between a login word and "is" / ":" that still names the pair: "the login for staging is",
# "the login details are", "the creds we use are"
_PAIR_LEAD = _DIRECT_LEAD | frozenset("details detail info information credentials creds pair combo".split())


def _pair_named_directly(m: "re.Match[str]") -> bool:
    """Whether the pair follows its word as a pair: after a password word ("user admin password <v>"), "is" / ":"
    right after the word or a phrase naming it ("the login for staging is"), "as" / "with", a spaced " / "
    ("login admin / <v>"), or a Chinese word that names the password too (账号密码 admin/<v>).  Otherwise ("the
    login page is admin/<v>", "login flow/<v>") the value must read as a password on its own (``_keep_pair``)."""
    groups = m.groupdict()
    if groups.get("pk") or groups.get("as"):
        return True
    sep = groups.get("sep") or ""
    if sep.strip() == "/" and sep != "/":
        return True
    kw = groups["kw"]
    if not kw.isascii():
        return groups.get("lk") is not None or any(w in kw for w in _PASSWORD_WORDS)
    if "/" in kw:  # "user/password: deploy/<v>"
        return True
    if groups.get("lk") is None:
        return False
    between = m.string[m.end("kw") : m.start("lk")].split()
    return not between or between[0] in _PAIR_LEAD


def _keep_pair(m: "re.Match[str]", value: str) -> bool:
    """Keep the second half of "<login word> <user> / <value>" unless the user reads as a name and the value as
    a password (``_pair_secret_shape``; not named directly as a pair, it needs an inner symbol or three switches
    between upper, lower and digits: "login flow/step2" stays).  A number goes only after a spaced " / " or a
    password word (after "host:" it is a port, after "admin/" part of a path); a user that names where secrets
    live ("creds: vault/prod2") is a reference.  Reads ``value`` (the original text)."""
    user = m.group("user")
    if re.search(r"[a-z]", user) is None or user in _SECRET_STORES:
        return True
    groups = m.groupdict()
    sep = groups.get("sep") or ""
    if sep.strip() == "and" and not groups["kw"].startswith("cred"):   # "log in with SSO and 2FA": no pair
        return True
    pin = bool(groups.get("pk")) or (sep.strip() == "/" and sep != "/")
    if not _pair_secret_shape(value, pin):
        return True
    if not _pair_named_directly(m):
        core = value.rstrip("!")
        if _SPECIAL.search(core, 1) is None and sum(_class_changes(seg) for seg in _SEGMENTS.findall(core)) < 3:
            return True
    if _UNIT_AFTER.match(m.string, m.end()):  # "user admin password 1024 bits"
        return True
    return _keep_value(value, quoted=False, family="password")


def _token(name: str, kind: str, prefix: str, body: str, *, keep: Optional[Check] = None,
           edge: str = "A-Za-z0-9_", end: str = "A-Za-z0-9_-", triggers: tuple[str, ...] = ()) -> _Rule:
    """A token that starts with the literal ``prefix``: the look-behind says the prefix does
    not continue a longer word, the look-ahead that the random part ends where the token
    does.  The rule runs only when ``triggers`` (default: the prefix) occur in the text's
    long runs (see ``_RUN``)."""
    p = re.escape(prefix)
    return _Rule(kind, rf"{p}(?<![{edge}]{p}){body}(?![{end}])", name=name, keep=keep,
                 triggers=triggers or (prefix,), shaped=True)


# The redaction rule table.  Literal first, boundary check as a look-behind
# after it: a pattern that starts with a literal is scanned for with a fast
# substring search.  Most specific first: a provider's token is labelled with
# its provider before the keyword rules at the end see the assignment.
_RULES: tuple[_Rule, ...] = (
    # --- AI providers --------------------------------------------------------
    _Rule(
        "anthropic_key",
        rf"sk-ant-(?<![{_B64URL}]sk-ant-)[{_B64URL}]{{20,}}",
        triggers=("sk-ant-",),
        shaped=True,
    ),
    _Rule(
        "openai_key",
        # a real key always has a digit somewhere; kebab-case words don't
        rf"sk-(?<![{_B64URL}]sk-)(?!ant-)(?:(?:proj|svcacct|admin)-)?"
        rf"(?=[{_B64URL}]{{0,300}}?[0-9])[{_B64URL}]{{20,}}",
        triggers=("sk-",),
        shaped=True,
    ),
    _token("huggingface_token", "huggingface_token", "hf_", "[A-Za-z0-9]{34,40}", keep=_needs_mixed_case),
    _token("huggingface_org_token", "huggingface_token", "api_org_", "[A-Za-z0-9]{34}", keep=_needs_mixed_case),
    _token("replicate_token", "replicate_token", "r8_", "[A-Za-z0-9]{37}"),
    _token("groq_key", "groq_key", "gsk_", "[A-Za-z0-9]{52}"),
    _token("xai_key", "xai_key", "xai-", "[A-Za-z0-9]{80}"),
    _token("perplexity_key", "perplexity_key", "pplx-", "[A-Za-z0-9]{48}"),
    _token("nvidia_key", "nvidia_key", "nvapi-", "[A-Za-z0-9_-]{64}"),
    _token("langsmith_key", "langsmith_key", "lsv2_", "(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    # --- source hosting, CI, package registries ------------------------------
    _Rule(
        "github_token",
        r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{36,}",
        triggers=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        shaped=True,
    ),
    _Rule(
        "github_token",
        r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,}",
        name="github_fine_grained_pat",
        triggers=("github_pat_",),
        shaped=True,
    ),
    _Rule(
        "gitlab_token",
        rf"gl(?<![{_B64URL}]gl)(?:pat|oas|dt|rtr|rt|cbt|ptt|ft|imt|agent|soat|ffct)-[{_B64URL}]{{20,}}",
        shaped=True,
    ),
    _token("gitlab_runner_registration_token", "gitlab_token", "GR1348941", "[A-Za-z0-9_-]{20}"),
    _token("npm_token", "npm_token", "npm_", "[A-Za-z0-9]{36}", end="A-Za-z0-9"),
    _token("pypi_token", "pypi_token", "pypi-AgE", "[A-Za-z0-9_-]{50,}"),
    _token("rubygems_key", "rubygems_key", "rubygems_", "[a-f0-9]{48}"),
    _token("clojars_token", "clojars_token", "CLOJARS_", "[a-z0-9]{60}"),
    _token("artifactory_key", "artifactory_key", "AKCp", "[A-Za-z0-9]{69}"),
    _token("circleci_token", "circleci_token", "CCIPAT_", "[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    _token("buildkite_token", "buildkite_token", "bkua_", "[a-f0-9]{40}"),
    _token("sourcegraph_token", "sourcegraph_token", "sgp_", "(?:[a-f0-9]{16}_)?[a-f0-9]{40}"),
    _token("postman_key", "postman_key", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
    _token("pulumi_token", "pulumi_token", "pul-", "[a-f0-9]{40}"),
    _Rule(
        "terraform_token",
        r"[A-Za-z0-9](?<![A-Za-z0-9][A-Za-z0-9])[A-Za-z0-9]{13}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])",
        triggers=(".atlasv1.",),
        shaped=True,
    ),
    _token("harness_token", "harness_token", "pat.", "[A-Za-z0-9_-]{22}\\.[a-f0-9]{24}\\.[A-Za-z0-9]{20}"),
    _token("octopus_key", "octopus_key", "API-", "[A-Z0-9]{26}", keep=_needs_digit, end="A-Za-z0-9"),
    # --- chat and messaging --------------------------------------------------
    _Rule(
        "slack_token",
        r"xox(?<![A-Za-z0-9]xox)[abeprscd]-[A-Za-z0-9-]{10,}",
    ),
    _Rule(
        "slack_token",
        r"xapp-(?<![A-Za-z0-9]xapp-)[0-9]-[A-Za-z0-9-]{10,}",
        name="slack_app_token",
    ),
    _Rule(
        "slack_token",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,})",
        name="slack_webhook",
        groups=("s",),
        triggers=("hooks.slack.com/",),
        shaped=True,
    ),
    _Rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/(?P<s>[A-Za-z0-9_-]{60,80})",
        groups=("s",),
        triggers=("/api/webhooks/",),
        shaped=True,
    ),
    _Rule(
        "discord_bot_token",
        r"[MNO](?<![A-Za-z0-9_.-][MNO])[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"
        r"(?![A-Za-z0-9_.-])",
        keep=_keep_discord,
        shaped=True,
    ),
    _Rule(
        "telegram_bot_token",
        r"[0-9](?<![0-9][0-9])[0-9]{7,9}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        triggers=(":AA",),
        shaped=True,
    ),
    _Rule(
        "teams_webhook",
        r"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/._-]{40,400})",
        groups=("s",),
        triggers=(".webhook.office.com/",),
        shaped=True,
    ),
    _token("twilio_key", "twilio_key", "SK", "[0-9a-f]{32}", edge="A-Za-z0-9", end="A-Za-z0-9"),
    _token("sendgrid_key", "sendgrid_key", "SG.", "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}"),
    _token("brevo_key", "brevo_key", "xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    _token("mailgun_key", "mailgun_key", "key-", "[0-9a-z]{32}", keep=_keep_mailgun, edge="A-Za-z0-9_-"),
    _Rule(
        "mailchimp_key",
        r"[0-9a-f](?<![0-9A-Za-z][0-9a-f])[0-9a-f]{31}-us[0-9]{1,2}(?![0-9A-Za-z])",
        triggers=("-us",),
        shaped=True,
    ),
    # --- payments and commerce -----------------------------------------------
    _Rule(
        "stripe_key",
        r"(?<![A-Za-z0-9_])[srp]k_(?:live|test)_[A-Za-z0-9]{24,}",
        triggers=("k_live_", "k_test_"),
        shaped=True,
    ),
    _token("stripe_webhook_secret", "stripe_key", "whsec_", "[A-Za-z0-9]{32,}"),
    _token("shopify_token", "shopify_token", "shp", "(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
           triggers=("shpat_", "shpca_", "shppa_", "shpss_")),
    _token("square_token", "square_token", "sq0", "(?:atp|csp)-[A-Za-z0-9_-]{22,43}", triggers=("sq0atp-", "sq0csp-")),
    _token("square_access_token", "square_token", "EAAA", "[A-Za-z0-9_-]{60}"),
    _token("facebook_token", "facebook_token", "EAA", "[A-Za-z0-9]{90,512}"),
    _token("shippo_token", "shippo_token", "shippo_", "(?:live|test)_[a-f0-9]{40}"),
    _token("easypost_key", "easypost_key", "EZ", "[AT]K[A-Za-z0-9]{54}", triggers=("EZAK", "EZTK")),
    _token("flutterwave_key", "flutterwave_key", "FLWSECK", "(?:_TEST)?-[a-h0-9]{32}-X", end="A-Za-z0-9"),
    _token("duffel_token", "duffel_token", "duffel_", "(?:test|live)_[A-Za-z0-9_=-]{43}"),
    # --- cloud platforms -----------------------------------------------------
    _Rule(
        "google_api_key",
        rf"AIza(?<![A-Za-z0-9_+/-]AIza)[{_B64URL}]{{35}}(?![{_B64URL}])",
        triggers=("AIza",),
        shaped=True,
    ),
    _token("google_oauth_client_secret", "google_oauth", "GOCSPX-", "[A-Za-z0-9_-]{28}"),
    _token("google_oauth_token", "google_oauth", "ya29.", "[A-Za-z0-9_-]{30,2048}"),
    _token("google_refresh_token", "google_oauth", "1//0", "[A-Za-z0-9_-]{40,512}", edge="A-Za-z0-9_:/"),
    _Rule(
        "aws_access_key",
        r"A(?:KI|SI|BI|CC)A(?<![A-Za-z0-9+/]A..A)[A-Z0-9]{16}(?![A-Za-z0-9+/])",
        triggers=("AKIA", "ASIA", "ABIA", "ACCA"),
        shaped=True,
    ),
    _token("aws_session_token", "aws_session_token", "IQoJb3JpZ2lu", "[A-Za-z0-9+/=%]{100,4096}",
           edge="A-Za-z0-9+/", end="A-Za-z0-9+/=%"),
    _Rule(
        "azure_storage_key",
        # AccountKey=... in a connection string, SharedAccessKey=... (Service Bus, Event Hubs)
        r"(?:account|sharedaccess|storageaccount)key[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<s>[a-z0-9+/]{40,}={0,2})(?![a-z0-9+/=])",
        triggers=("accountkey", "accesskey"),
        lowered=True,
        groups=("s",),
        keep=_keep_literal,
    ),
    _Rule(
        "azure_sas_signature",
        # the signature of a shared access signature URL or connection string
        r"[?&;](?<=[?&;])sig=(?P<s>[a-z0-9%+/=]{20,256})",
        triggers=("sig=",),
        lowered=True,
        groups=("s",),
    ),
    _Rule(
        "azure_client_secret",
        r"[A-Za-z0-9_~.-](?<![A-Za-z0-9_~.-][A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{2}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"
        r"(?![A-Za-z0-9_~.-])",
        triggers=("Q~",),
        shaped=True,
    ),
    _token("alibaba_key", "alibaba_key", "LTAI", "[A-Za-z0-9]{20}", keep=_needs_digit),
    _token("yandex_key", "yandex_key", "AQVN", "[A-Za-z0-9_-]{35,38}", keep=_needs_digit),
    _token("digitalocean_token", "digitalocean_token", "do", "[opr]_v1_[a-f0-9]{64}", triggers=("_v1_",)),
    _token("heroku_api_key", "heroku_api_key", "HRKU-", "[A-Za-z0-9_-]{40,70}"),
    _token("fly_token", "fly_token", "f", "(?:m[12]|o1)_[A-Za-z0-9+/=_-]{40,2048}", end="A-Za-z0-9+/=_-",
           triggers=("fm1_", "fm2_", "fo1_")),
    _token("cloudflare_origin_ca_key", "cloudflare_origin_ca_key", "v1.0-", "[a-f0-9]{24}-[a-f0-9]{146}"),
    _token("openshift_token", "openshift_token", "sha256~", "[A-Za-z0-9_-]{43}"),
    _token("databricks_token", "databricks_token", "dapi", "[a-f0-9]{32}(?:-[0-9])?"),
    _token("doppler_token", "doppler_token", "dp.", "(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9]{40,44}"),
    _token("dynatrace_token", "dynatrace_token", "dt0", "[a-z][0-9]{2}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}"),
    _token("supabase_token", "supabase_token", "sbp_", "[a-f0-9]{40}"),
    _token("planetscale_token", "planetscale_token", "pscale_", "(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}"),
    _token("netlify_token", "netlify_token", "nfp_", "[A-Za-z0-9]{36}"),
    _token("scalingo_token", "scalingo_token", "tk-us-", "[A-Za-z0-9_-]{48}"),
    _token("tailscale_key", "tailscale_key", "tskey-",
           "(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,20}-[A-Za-z0-9]{20,40}"),
    _token("vault_token", "vault_token", "hv", "[sbr]\\.[A-Za-z0-9_-]{24,}", triggers=("hvs.", "hvb.", "hvr.")),
    _token("age_secret_key", "age_secret_key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    # --- observability and SaaS ----------------------------------------------
    _token("grafana_cloud_token", "grafana_token", "glc_", "[A-Za-z0-9+/]{32,400}={0,2}", end="A-Za-z0-9+/=_-"),
    _token("grafana_service_account_token", "grafana_token", "glsa_", "[A-Za-z0-9]{32}_[a-f0-9]{8}"),
    _token("grafana_api_key", "grafana_token", "eyJrIjoi", "[A-Za-z0-9+/]{40,400}={0,2}", end="A-Za-z0-9+/=_-"),
    _token("new_relic_key", "new_relic_key", "NR", "(?:AK|II|JS|RA|SP)-[A-Za-z0-9_-]{19,40}", keep=_needs_digit,
           triggers=("NRAK-", "NRII-", "NRJS-", "NRRA-", "NRSP-")),
    _Rule(
        "new_relic_key",
        r"[0-9a-f](?<![0-9A-Za-z][0-9a-f])[0-9a-f]{35}NRAL(?![A-Za-z0-9])",
        name="new_relic_license_key",
        triggers=("NRAL",),
        shaped=True,
    ),
    _token("sentry_token", "sentry_token", "sntry", "[su]_[A-Za-z0-9_+/=]{60,2048}", end="A-Za-z0-9_+/="),
    _token("atlassian_token", "atlassian_token", "ATATT3", "[A-Za-z0-9_=-]{60,400}"),
    _token("linear_key", "linear_key", "lin_", "(?:api|oauth)_[A-Za-z0-9]{40}"),
    _token("notion_token", "notion_token", "ntn_", "[A-Za-z0-9]{46}"),
    _token("notion_integration_secret", "notion_token", "secret_", "[A-Za-z0-9]{43}"),
    _token("airtable_token", "airtable_token", "pat", "[A-Za-z0-9]{14}\\.[a-f0-9]{64}"),
    _token("onepassword_token", "onepassword_token", "ops_eyJ", "[A-Za-z0-9+/=_-]{100,4096}", end="A-Za-z0-9+/=_-"),
    _token("typeform_token", "typeform_token", "tfp_", "[A-Za-z0-9_.=-]{59}"),
    _token("readme_key", "readme_key", "rdme_", "[a-z0-9]{70}"),
    _token("prefect_key", "prefect_key", "pnu_", "[A-Za-z0-9]{36}"),
    _token("frameio_token", "frameio_token", "fio-u-", "[A-Za-z0-9_=-]{64}"),
    _token("contentful_token", "contentful_token", "CFPAT-", "[A-Za-z0-9_-]{43}"),
    _token("dropbox_token", "dropbox_token", "sl.", "(?:u\\.)?[A-Za-z0-9_-]{130,2048}"),
    _token("infracost_key", "infracost_key", "ico-", "[A-Za-z0-9]{32}"),
    _token("adafruit_key", "adafruit_key", "aio_", "[A-Za-z0-9]{28}"),
    _Rule(
        "mapbox_token",
        r"[st]k\.eyJ(?<![A-Za-z0-9_.-][st]k\.eyJ)[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
        triggers=("k.eyJ",),
        shaped=True,
    ),
    # --- structured tokens and headers ---------------------------------------
    _Rule(
        "jwt",
        rf"eyJ(?<![{_B64URL}]eyJ)[{_B64URL}]{{10,}}\.[{_B64URL}]{{10,}}\.[{_B64URL}]{{10,}}",
        triggers=("eyJ",),
        shaped=True,
    ),
    _Rule(
        "okta_token",
        # Authorization: SSWS <api token>
        r"ssws(?<![a-z0-9_]ssws)[ \t]+(?P<s>00[a-z0-9_-]{40})(?![a-z0-9_-])",
        lowered=True,
        groups=("s",),
    ),
    _Rule(
        "bearer_token",
        # Authorization / Proxy-Authorization header, in HTTP, curl, JSON or code
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|basic)[ \t]+"
        r"(?P<s>[a-z0-9._~+/-]{6,}=*)",
        lowered=True,
        groups=("s",),
        keep=_keep_literal,
    ),
    _Rule(
        "bearer_token",
        # a bare "Bearer <token>" needs a long token with a digit in it
        r"bearer(?<![a-z0-9_]bearer)[ \t]+"
        r"(?P<s>(?=[a-z0-9._~+/-]{0,300}?[0-9])[a-z0-9._~+/-]{20,}=*)",
        name="bearer_bare",
        lowered=True,
        groups=("s",),
        keep=_keep_literal,
    ),
    _Rule(
        "url_password",
        # scheme://user:password@host -- only the password goes
        r"://(?<=[A-Za-z0-9]://)[^\s:/?#@\"'<>\[\]]{0,128}:(?P<s>[^\s/?#\"']{1,256})@(?=[A-Za-z0-9\[_])",
        groups=("s",),
        keep=_keep_literal,
    ),
    _Rule(
        "sentry_token",
        # a Sentry DSN's key (and the secret older DSNs add): https://<32 hex>@o123.ingest.sentry.io/456 lets anyone
        # who reads it send events to the project (fresh-user run fu35 D7: `SENTRY_DSN=…` was stored whole)
        r"://(?P<s>[0-9a-f]{32}(?::[0-9a-f]{32})?)@(?=[a-z0-9.-]*sentry)",
        name="sentry_dsn",
        triggers=("sentry",),
        lowered=True,
        groups=("s",),
    ),
    # --- named by their key --------------------------------------------------
    _Rule(
        "aws_secret_key",
        r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
        r"[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*[\"']?(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        triggers=("secret",),
        lowered=True,
        groups=("s",),
    ),
    _Rule(
        "aws_secret_key",
        # named in prose, without an assignment: "aws secret for uploader is <key>", "the AWS secret access
        # key of the ci user: <key>"; the 40 characters must be base64 (a SHA-1 there stays)
        r"(?:aws[ _.-]?secret|secret[ _.-]?access)(?:[ _.-]?(?:access[ _.-]?)?key)?(?![a-z])[^\r\n]{0,80}?"
        r"(?<![a-z0-9/+])(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        name="aws_secret_in_prose",
        triggers=("secret",),
        lowered=True,
        groups=("s",),
        keep=_keep_unless_base64,
    ),
    _Rule(
        "aws_secret_key",
        # the secret pasted next to its key id (already replaced above): CSV
        # exports, `aws configure` prompts, "id / secret" in prose
        r"\[REDACTED:aws_access_key\][^\r\n]{0,100}?(?:\r?\n[^\r\n]{0,100}?)?"
        r"(?<![A-Za-z0-9/+])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        name="aws_secret_near_key_id",
        triggers=("[REDACTED:aws_access_key]",),
        groups=("s",),
        keep=_keep_unless_base64,
    ),
    _Rule(
        "password_assignment",
        _KW + _SEPARATOR + _VALUE,
        stems=_GENERIC_STEMS,  # shared with generic_secret: the positions are found once
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_assignment,
    ),
    _Rule(
        "password_assignment",
        # command-line flags: --password hunter2, --api-key "..."
        r"--(?<![\w-]--)(?:[a-z0-9]+-)*" + _KW + r"(?P<sep>[ \t]+)(?!-)" + _VALUE,
        name="password_flag",
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_assignment,
    ),
    _Rule(
        "password_assignment",
        # short options of the commands whose password travels on the command line (session capture
        # keeps commands): mysql -pSECRET (attached; a bare -p prompts), sshpass -p, redis-cli -a,
        # docker/podman login -p, curl -u user:SECRET
        r"(?<![\w.-])(?:"
        r"(?:mysql(?:dump|admin|import|check|sh)?|mariadb(?:-dump|-admin|dump)?)(?![\w.-])"
        r"[^\r\n;&|]{0,200}?[ \t]-p" + _cli_value("my")
        + r"|sshpass[ \t]+-p[ \t]*" + _cli_value("sp")
        + r"|redis-cli(?![\w.-])[^\r\n;&|]{0,200}?[ \t]-a[ \t]+" + _cli_value("rc")
        + r"|(?:docker|podman|nerdctl|buildah|skopeo|oras)[ \t]+login(?![\w.-])[^\r\n;&|]{0,200}?[ \t]-p[ \t]+"
        + _cli_value("dl")
        + r"|curl(?![\w.-])[^\r\n;&|]{0,300}?[ \t](?:-u[ \t]*|--user[ \t]+|--user=)[\"']?[^\s\"':]{0,128}:"
        + r"(?P<cu>[^\s\"'`;&|]{1,256}))",
        name="password_cli",
        triggers=("mysql", "mariadb", "sshpass", "redis-cli", "login", "curl"),
        groups=("my", "sp", "rc", "dl", "cu"),
        keep=_keep_cli,
    ),
    _Rule(
        "password_assignment",
        # <password>hunter2</password>, <db.password>...</db.password>
        r"<(?P<tag>[\w.:-]{0,40}?" + _KW + r")>(?P<xv>[^<\r\n]{1,1024})</(?P=tag)>",
        name="password_xml",
        triggers=("</",),
        lowered=True,
        groups=("xv",),
        keep=_keep_xml,
    ),
    _Rule(
        "generic_secret",
        # any other name with key / auth / credential / secret / token /
        # password in it, holding a long random-looking value
        _GENERIC_KW + _GENERIC_TAIL + _SEPARATOR + _VALUE,
        stems=_GENERIC_STEMS,
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_generic,
    ),
    _Rule(
        "secret_in_prose",
        # "the webhook secret is <value>", "the API token is <value>", "our api key: <value>"
        _PROSE_SECRET_KW + _PROSE_LINK + _PROSE_VALUE,
        stems=("secret", "token", "key", "cred"),
        lowered=True,
        groups=("s",),
        keep=_keep_prose,
    ),
    _Rule(
        "password_in_prose",
        # "数据库密码是 hunter2Secret!", "密码：Xk9mQ2pLz7Rw", "口令已改为Tr0ub4dor&3"
        _ZH_PASSWORD_KW + _ZH_LINK + _ZH_VALUE,
        name="password_in_prose_zh",
        stems=("密码", "密碼", "口令"),
        lowered=True,
        groups=("s",),
        keep=_keep_zh,
    ),
    _Rule(
        "secret_in_prose",
        # "令牌：<value>", "API 密钥是 <value>"
        _ZH_SECRET_KW + _ZH_LINK + _ZH_VALUE,
        name="secret_in_prose_zh",
        stems=("令牌", "密钥", "密鑰", "秘钥", "凭证", "凭据", "憑證"),
        lowered=True,
        groups=("s",),
        keep=_keep_zh,
    ),
    _Rule(
        "secret_in_prose",
        # "测试环境的 token 是 <value>", "api key 为 <value>": an English credential word, a Chinese link
        _ZH_EN_KW + _ZH_LINK + _ZH_VALUE,
        name="secret_in_prose_zh_en",
        stems=("token", "secret", "api", "access", "passw"),
        lowered=True,
        groups=("s",),
        keep=_keep_zh,
    ),
    _Rule(
        "password_in_prose",
        # a user/password pair after a login word: "the grafana login is admin / <v>", "login: admin/<v>",
        # "creds are root / <v>", "log in as admin:<v>", "user/password: deploy/<v>"
        _PAIR_KW + _PAIR_LINK + _PAIR_USER + _PAIR_SEP + _PROSE_PASSWORD_VALUE,
        name="password_pair",
        stems=("log", "sign", "cred", "user"),
        lowered=True,
        groups=("s",),
        keep=_keep_pair,
    ),
    _Rule(
        "password_in_prose",
        # a password word right after a user name: "user admin password <v>", "username deploy, pass <v>"
        _USER_KW + _USER_THEN_PASSWORD + _PROSE_PASSWORD_VALUE,
        name="password_after_user",
        stems=("user", "login", "usr", "log", "sign"),
        lowered=True,
        groups=("s",),
        keep=_keep_pair,
    ),
    _Rule(
        "password_in_prose",
        # after the pairs, which name the user too: "the admin password for staging is Xk9mQ2pLz7Rw!", "use the password <value> to log in"
        _PROSE_PASSWORD_KW + _PROSE_LINK + _PROSE_PASSWORD_VALUE,
        stems=("pass", "pw"),
        lowered=True,
        groups=("s",),
        keep=_keep_prose,
    ),
    _Rule(
        "password_in_prose",
        # "账号 admin 密码 <v>", "用户名：deploy，密码：<v>", "登录 admin / <v>", "账号密码是 admin/<v>"
        _ZH_PAIR_KW + _ZH_PAIR_USER + _ZH_PAIR_SEP + _ZH_VALUE,
        name="password_pair_zh",
        stems=("账号", "帐号", "账户", "帳號", "帳戶", "用户", "用戶", "登录", "登錄", "登陆"),
        lowered=True,
        groups=("s",),
        keep=_keep_pair,
    ),
)

_UNSHAPED = tuple(rule for rule in _RULES if not rule.shaped)

#: Every rule name in the table, in the order the rules run, with the type it reports
#: (PEM private keys are matched in code, first).
RULE_KINDS: dict[str, str] = {"private_key": "private_key", **{r.name: r.kind for r in _RULES}}
if len(RULE_KINDS) != len(_RULES) + 1:  # pragma: no cover - a table edit gone wrong
    raise RuntimeError("redaction rule names must be unique")

#: Every type ``redact`` may report, in the order the rules run.
REDACTION_TYPES: tuple[str, ...] = tuple(dict.fromkeys(RULE_KINDS.values()))

#: Bump when a rule's keep logic changes in a way the patterns do not show, or the pass reads more of a row
#: (5: the caller's `source`; 6: a CamelCase value is an annotation only when it reads as a type, a value named
#: directly in prose needs no random look, references to where a secret lives stay; 7: a password named directly
#: in prose goes whatever its shape: "hunter2", "correct-horse-battery-staple", a PIN; 8: a user/password pair
#: after a login word, "the grafana login is admin / <v>", "账号 admin 密码 <v>"; 9: a value with base64 padding,
#: "DB_PASSWORD: UGw0MW5UM3h0UHc=", is no "a=b" code, and a "%r" or "*" inside a long near-random value, Django's
#: SECRET_KEY, no format or glob; 10: a secret wrapped onto the next line or continued with a `\`, or a provider
#: token cut at a line end, is taken whole; 11: a password right after its word, "log in with password <v>", "pw <v>",
#: is named directly; 12: "log in to X with <user> / <v>", "credentials … are <user> and <v>", a project key): stores
#: re-redact themselves once when ``rules_fingerprint()`` changes.
RULES_VERSION = 12


def rules_fingerprint() -> str:
    """A short digest of the rule table: stores stamp it after a re-redaction pass, so
    maintenance re-scans stored text only when the rules changed since."""
    h = hashlib.sha256(str(RULES_VERSION).encode())
    for rule in _RULES:
        h.update(f"\x1f{rule.name}\x1e{rule.kind}\x1e{rule.regex.pattern}".encode())
    return h.hexdigest()[:16]


def _stem_starts(haystack: str, stems: tuple[str, ...]) -> list[int]:
    starts: list[int] = []
    for stem in stems:
        i = haystack.find(stem)
        while i != -1:
            starts.append(i)
            i = haystack.find(stem, i + 1)
    starts.sort()
    return starts


def _stem_matches(regex: "re.Pattern[str]", haystack: str, found: list[int],
                  skip: list[int]) -> Iterator["re.Match[str]"]:
    """Matches at the keyword positions ``found`` from ``skip[0]`` on (the caller moves it)."""
    for i in found:
        if i >= skip[0]:
            m = regex.match(haystack, i)
            if m is not None:
                yield m


def _apply(rule: _Rule, text: str, haystack: str, counts: dict[str, int], *, fold: bool = False,
           hits: Optional[dict[str, int]] = None, starts: Optional[dict[tuple, list[int]]] = None) -> str:
    """Replace in ``text`` the secrets ``rule`` finds in ``haystack``: ``text``
    itself or a same-length lower-cased copy.  ``fold`` matches ``text``
    case-insensitively instead.  ``starts`` caches keyword positions in
    ``haystack`` for the rules that share its stems."""
    regex = rule.regex_ci if fold else rule.regex
    # Stem rules try every keyword occurrence; one inside a kept value is tried
    # too, once: "token: TWILIO_AUTH_TOKEN=<hex>" keeps the outer value (an
    # assignment) and then judges the inner one on its own.
    skip = [0]
    nest_end = -1
    if rule.stems and not fold:
        found = None if starts is None else starts.get(rule.stems)
        if found is None:
            found = _stem_starts(haystack, rule.stems)
            if starts is not None:
                starts[rule.stems] = found
        if not found:
            return text
        matches: Iterable["re.Match[str]"] = _stem_matches(regex, haystack, found, skip)
    else:
        matches = regex.finditer(haystack)
    parts: list[str] = []
    pos = 0
    for m in matches:
        name = None
        for g in rule.groups:
            if m.group(g) is not None:
                name = g
                break
        start, end = m.span() if name is None else m.span(name)
        if rule.keep is not None and rule.keep(m, text[start:end]):
            if name is not None and m.start() >= nest_end:
                skip[0], nest_end = start, m.end()
            else:
                skip[0] = m.end()
            continue
        parts.append(text[pos:start])
        parts.append(rule.marker)
        pos = skip[0] = end
    if not parts:
        return text
    parts.append(text[pos:])
    n = len(parts) // 2
    counts[rule.kind] = counts.get(rule.kind, 0) + n
    if hits is not None:
        hits[rule.name] = hits.get(rule.name, 0) + n
    return "".join(parts)


# Characters of a token-shaped secret (and of the URLs and assignments around
# it): every match of a ``shaped`` rule lies inside one run of them.
_RUN_CHARS = "A-Za-z0-9_.+/=~%:@-"
_RUN = re.compile(rf"(?<![{_RUN_CHARS}])[{_RUN_CHARS}]{{20,}}")


# A secret wrapped onto the next line (a terminal's soft wrap pasted, a shell `\` continuation): the random run
# that starts the line right after a redaction marker is the rest of that secret (fresh-user run fu32 D7).
_WRAPPED_TAIL = re.compile(r"(\[REDACTED:[a-z0-9_]+\])\\?(\r?\n)[ \t]*([A-Za-z0-9+/_-]{8,}={0,2})(?![A-Za-z0-9+/=_-])")
# A shell line continuation inside a run of token characters: `API_SECRET="InTEGb…\<newline>GW7hUN…"`.
_CONTINUED = re.compile(r"(?<=[A-Za-z0-9+/=_-])\\\r?\n[ \t]*(?=[A-Za-z0-9+/=_-])")


# A provider-prefixed token cut at a line end (a terminal's soft wrap, a pasted log), its rest on the next line:
# "ghp_I638yIxjM2UN<newline>qHkEpQCr…" (fresh-user run fu33 D1). The prefixes are the shaped rules' own.
# The shaped rules' triggers that start a token ("ghp_", "sk-", "AKIA"), not those found inside one ("-us", ":AA")
# or short enough to start a word ("pat", "eyJ"): a line ending in "pattern" is no token cut short.
_PREFIXES = tuple(sorted({t for rule in _RULES if rule.shaped for t in rule.triggers
                          if t[0].isalnum() and (len(t) >= 4 or not t[-1].isalnum())}))
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=-")
_RUN_AT_END = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{3,}$")
_FIRST_RUN = re.compile(r"[ \t]*[A-Za-z0-9_+/=-]{4,}")


def _join_wrapped_prefixed(text: str) -> str:
    """`text` with each line that ends in a run starting like a provider's token joined to the run starting the next
    line (the spaces around the break dropped). A line is looked at only when it ends in a token character, so a
    megabyte of prose costs a split and a character test per line."""
    lines = text.split("\n")
    out = [lines[0]]
    for line in lines[1:]:
        prev = out[-1].rstrip(" \t\r")
        if prev and prev[-1] in _TOKEN_CHARS and _FIRST_RUN.match(line):
            last = _RUN_AT_END.search(prev[-256:])
            if last and last.group().startswith(_PREFIXES):
                out[-1] = prev + line.lstrip(" \t")
                continue
        out.append(line)
    return "\n".join(out)


def _take_wrapped_tails(text: str) -> str:
    return _WRAPPED_TAIL.sub(lambda m: m.group(1) + m.group(2) if _has_random_run(m.group(3), 8) else m.group(0),
                             text)


def _redact_secrets(text: str, counts: dict[str, int], hits: Optional[dict[str, int]] = None) -> str:
    """`_apply_rules` of `text`, or of the text with its `\\` line continuations and its provider tokens cut at a
    line end joined, when that finds more secrets: a value continued onto the next line is read whole then (the
    joined text is kept only so)."""
    if "\n" in text:
        joined = _join_wrapped_prefixed(_CONTINUED.sub("", text) if "\\\n" in text or "\\\r\n" in text else text)
        if joined != text:
            counts_plain, hits_plain = dict(counts), (dict(hits) if hits is not None else None)
            counts_joined, hits_joined = dict(counts), (dict(hits) if hits is not None else None)
            plain = _apply_rules(text, counts_plain, hits_plain)
            whole = _apply_rules(joined, counts_joined, hits_joined)
            better = sum(counts_joined.values()) > sum(counts_plain.values())
            counts.update(counts_joined if better else counts_plain)
            if hits is not None:
                hits.update(hits_joined if better else hits_plain)
            return whole if better else plain
    return _apply_rules(text, counts, hits)


def _apply_rules(text: str, counts: dict[str, int], hits: Optional[dict[str, int]] = None) -> str:
    if "-----BEGIN " in text:
        before = counts.get("private_key", 0)
        text = _redact_private_keys(text, counts)
        if hits is not None and counts.get("private_key", 0) > before:
            hits["private_key"] = counts["private_key"] - before
    lowered: Optional[str] = None
    starts: dict[tuple, list[int]] = {}  # keyword positions in ``lowered``
    # The long runs of token characters, gathered once: a few percent of
    # ordinary text, so a hundred provider rules cost one scan, not a hundred
    # (and none at all when there is no run, as in most short texts).
    runs = " ".join(_RUN.findall(text))
    for rule in _RULES if runs else _UNSHAPED:
        if rule.shaped:
            if rule.triggers:
                if not any(t in runs for t in rule.triggers):
                    continue
            elif rule.regex.search(runs) is None:
                continue
            new = _apply(rule, text, text, counts, hits=hits)
        elif rule.lowered:
            if lowered is None:
                lowered = text.lower()
            if rule.triggers and not any(t in lowered for t in rule.triggers):
                continue
            if len(lowered) == len(text):
                new = _apply(rule, text, lowered, counts, hits=hits, starts=starts)
            else:  # lower() expanded a character ("\u0130"): match case-insensitively
                new = _apply(rule, text, text, counts, fold=True, hits=hits)
        else:
            if rule.triggers and not any(t in text for t in rule.triggers):
                continue
            new = _apply(rule, text, text, counts, hits=hits)
        if new is not text:
            text = new
            lowered = None
            starts = {}
    return _take_wrapped_tails(text) if _MARKER_PREFIX in text else text


def _coerce(text) -> str:
    if isinstance(text, str):
        return text
    if text is None:
        return ""
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", "replace")
    return str(text)


def redact(text: str, *, enabled: bool = True, drop_private: bool = True) -> tuple[str, dict[str, int]]:
    """Return (clean_text, counts_by_type).

    ``drop_private`` removes ``<private>...</private>`` spans (counted as
    ``"private"``); ``enabled`` replaces recognised secrets by
    ``[REDACTED:<type>]``.  With ``enabled=False`` the text is otherwise
    returned unchanged.
    """
    text = _coerce(text)
    counts: dict[str, int] = {}
    if drop_private and ("<" in text or "＜" in text):
        text, spans, _ = _strip_private(text)
        if spans:
            counts[PRIVATE_TYPE] = spans
    if enabled and text:
        text = _redact_secrets(text, counts)
    return text, counts


def rules_hit(text: str) -> dict[str, int]:
    """How often each rule of the table (by name, see ``RULE_KINDS``) fired on ``text``:
    which rule took a secret, where ``redact`` only says which type."""
    hits: dict[str, int] = {}
    _redact_secrets(_coerce(text), {}, hits)
    return hits
