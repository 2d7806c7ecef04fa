"""Secret redaction: runs on every text before it is stored or indexed.

``redact(text)`` returns ``(clean_text, counts_by_type)``:

* ``<private>...</private>`` spans (case-insensitive, multi-line) are removed
  outright and counted under ``"private"``.  An unclosed ``<private>`` drops
  everything up to the end of the text.  Nested spans are removed up to their
  matching outer close tag, so nothing inside an outer span survives.
* Recognised secrets are replaced by ``[REDACTED:<type>]``.  Only the secret
  itself is replaced: the key of an assignment, the scheme/user/host of a URL
  and the ``Authorization: Bearer`` prefix are kept, so the text stays useful.

The rules are heuristics tuned to miss few real secrets while leaving ordinary
prose and code alone: hashes, UUIDs, lockfile checksums, data URIs, words such
as "password reset flow", identifiers such as ``token_count`` and placeholder
values such as ``password=${DB_PASSWORD}`` come back unchanged.

Everything is precompiled; each rule is skipped unless a cheap substring test
says it could match, and no regex can backtrack beyond a bounded window, so a
megabyte of text is processed in milliseconds.  ``redact`` never raises on a
``str`` (lone surrogates and NUL bytes included).
"""

from __future__ import annotations

import re
from typing import Callable, Optional

__all__ = ["redact", "REDACTION_TYPES", "PRIVATE_TYPE"]

PRIVATE_TYPE = "private"

#: Every type ``redact`` may report, in the order the rules run.
REDACTION_TYPES: tuple[str, ...] = (
    "private_key",
    "anthropic_key",
    "openai_key",
    "github_token",
    "gitlab_token",
    "slack_token",
    "stripe_key",
    "google_api_key",
    "npm_token",
    "aws_access_key",
    "jwt",
    "bearer_token",
    "url_password",
    "aws_secret_key",
    "password_assignment",
)

_MARKER_PREFIX = "[REDACTED:"


def _marker(kind: str) -> str:
    return f"{_MARKER_PREFIX}{kind}]"


# ---------------------------------------------------------------------------
# <private> spans
# ---------------------------------------------------------------------------

# An opening or closing tag; ``<private-notes>`` or ``<privateer>`` are other tags.
_PRIVATE_TAG = re.compile(r"<(/?)private(?![\w-])([^<>]{0,256})>", re.IGNORECASE)
# Removing a span can splice a new tag together ("<pri<private>x</private>vate>");
# a few passes make the result stable without risking quadratic time.
_PRIVATE_MAX_PASSES = 8


def _strip_private_once(text: str) -> tuple[str, int]:
    parts: list[str] = []
    pos = 0
    depth = 0
    start = 0
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
                start = m.start()
            depth += 1
    if depth:  # unclosed: drop to the end of the text
        parts.append(text[pos:start])
        pos = len(text)
        spans += 1
    if not spans:
        return text, 0
    parts.append(text[pos:])
    return "".join(parts), spans


def _strip_private(text: str) -> tuple[str, int]:
    total = 0
    for _ in range(_PRIVATE_MAX_PASSES):
        text, spans = _strip_private_once(text)
        if not spans:
            break
        total += spans
    return text, total


# ---------------------------------------------------------------------------
# PEM private keys (handled in code so that many BEGIN lines stay linear)
# ---------------------------------------------------------------------------

_PK_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
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
    password passwd pass pwd passphrase passcode secret token key apikey
    api_key api-key secret_key access_token auth_token
    """.split()
)
_KEYWORD_IN_VALUE = re.compile(
    r"passw(?:or)?d|passphrase|secret|token|api[_-]?key|your[_-]|placeholder|example",
    re.IGNORECASE,
)
_MASK = re.compile(r"[*xX.\u2022#?_-]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_DOTTED = re.compile(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)+")
_CALL = re.compile(r"[A-Za-z_$][\w.$]*[(\[]")
_ENV_VAR = re.compile(r"[A-Z_][A-Z0-9_]*")
_PERCENT = re.compile(r"%(?:\([\w.]+\))?[sdr]|%[A-Za-z_][\w]*%")
_SQL_PARAM = re.compile(r"[:@][A-Za-z_]\w*|\?")
_TEMPLATE = re.compile(r"\{\{|\$\{|\{[A-Za-z_][\w.]*\}")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/[\w.@-]+)+/?|~")
_ALPHA_WORD = re.compile(r"[A-Za-z_]+")


def _keep_value(value: str, *, quoted: bool, family: str) -> bool:
    """True when ``value`` is a placeholder, a reference or code, not a secret."""
    v = value.strip()
    if not v or v.startswith(_MARKER_PREFIX):
        return True
    low = v.lower()
    if low in _NOT_A_SECRET:
        return True
    first = v[0]
    if first in "<{":  # <your password>, {{ vault_password }}, {...}
        return True
    if first == "$":  # ${VAR}, $(cmd), $DB_PASSWORD, $password
        rest = v[1:]
        if not rest or rest[0] in "{(" or _ENV_VAR.fullmatch(rest) or _KEYWORD_IN_VALUE.search(rest):
            return True
    if _MASK.fullmatch(v) or _PERCENT.fullmatch(v) or _SQL_PARAM.fullmatch(v):
        return True
    if len(v) <= 2 and not v.isalnum():  # "|", ">-", "-"
        return True
    if _TEMPLATE.search(v) or _PATH.fullmatch(v):
        return True
    has_keyword = _KEYWORD_IN_VALUE.search(v) is not None
    if quoted:
        # "YOUR_API_KEY", "your-token-here", "db_password", "Forgot your password?"
        if has_keyword and (
            any(c.isspace() for c in v)
            or (_IDENT_LIKE.fullmatch(v) and (v.islower() or v.isupper() or any(c in v for c in "_-.")))
        ):
            return True
    else:
        # code: os.getenv("X"), config["db"], self.password, process.env.TOKEN, db_password
        if _CALL.match(v) or _DOTTED.fullmatch(v):
            return True
        if has_keyword and _IDENT_LIKE.fullmatch(v):
            return True
    if family == "token":
        # token counts, limits and words in prose ("unexpected token: import")
        if v.isdigit() or len(v) < 4:
            return True
        if not quoted and len(v) < 24 and _ALPHA_WORD.fullmatch(v):
            return True
    return False


# ---------------------------------------------------------------------------
# Regex rules
# ---------------------------------------------------------------------------

Check = Callable[["re.Match[str]", str], bool]


class _Rule:
    """One pattern.  ``lowered`` rules are written in lower case and matched
    against ``text.lower()`` (fast, case-sensitive scanning); the secret is
    still cut out of the original text by position."""

    __slots__ = ("kind", "regex", "regex_ci", "groups", "keep", "triggers", "lowered")

    def __init__(
        self,
        kind: str,
        pattern: str,
        *,
        triggers: tuple[str, ...] = (),
        groups: tuple[str, ...] = (),
        keep: Optional[Check] = None,
        lowered: bool = False,
    ) -> None:
        self.kind = kind
        self.regex = re.compile(pattern)
        # used on the original text if lowering ever changes its length
        self.regex_ci = re.compile(pattern, re.IGNORECASE) if lowered else self.regex
        self.groups = groups  # first group that matched is the secret; () = whole match
        self.keep = keep  # returns True to leave a match alone
        # for patterns without a literal prefix: one of these substrings must
        # be present for the (slower) scan to run at all
        self.triggers = triggers
        self.lowered = lowered


_B64URL = r"A-Za-z0-9_-"

# Value of an assignment: quoted (with optional Python string prefix) or bare.
# Lower-case only: it is used by lowered rules.
_VALUE = (
    r"(?:[rbuf]{1,2}(?=[\"']))?"
    r"(?:\"(?P<dq>(?:[^\"\\\r\n]|\\.){1,1024})"
    r"|'(?P<sq>(?:[^'\\\r\n]|\\.){1,1024})"
    r"|`(?P<bq>[^`\r\n]{1,1024})`"
    r"|(?P<uq>[^\s\"'`,;&)}\]]{1,1024}))"
)
_VALUE_GROUPS = ("dq", "sq", "bq", "uq")

# Every alternative starts with a literal and nothing precedes the group, so
# the regex engine can skip ahead to candidate first letters.
_PASSWORD_KW = r"passw(?:or)?d|passphrase|passcode|pwd|pass(?<![a-z]pass)"
_TOKEN_KW = (
    r"secret(?:[_.-]?access)?(?:[_.-]?key(?:[_.-]?base)?)?"
    r"|api[_.-]?key|private[_.-]?key|encryption[_.-]?key|signing[_.-]?key|master[_.-]?key"
    r"|token"
)
_KW = rf"(?P<kw>{_PASSWORD_KW}|{_TOKEN_KW})"
_SEPARATOR = r"[\"'`]?\]?[ \t]*(?:=>|[:?!]?={1,3}|:(?!:))[ \t]*"


def _family(kw: str) -> str:
    kw = kw.lower()
    return "password" if kw.startswith("pass") or kw == "pwd" else "token"


def _keep_assignment(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value, quoted=m.group("uq") is None, family=_family(m.group("kw")))


def _keep_xml(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value, quoted=True, family=_family(m.group("kw")))


def _keep_literal(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value, quoted=True, family="literal")


# Literal first, boundary check as a look-behind after it: a pattern that
# starts with a literal is scanned for with a fast substring search.
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "anthropic_key",
        rf"sk-ant-(?<![{_B64URL}]sk-ant-)[{_B64URL}]{{20,}}",
    ),
    _Rule(
        "openai_key",
        # a real key always has a digit somewhere; kebab-case words don't
        rf"sk-(?<![{_B64URL}]sk-)(?!ant-)(?:(?:proj|svcacct|admin)-)?"
        rf"(?=[{_B64URL}]{{0,300}}?[0-9])[{_B64URL}]{{20,}}",
    ),
    _Rule(
        "github_token",
        r"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{36,}",
    ),
    _Rule(
        "github_token",
        r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,}",
    ),
    _Rule(
        "gitlab_token",
        rf"gl(?<![{_B64URL}]gl)(?:pat|dt|rt|ptt)-[{_B64URL}]{{20,}}",
    ),
    _Rule(
        "slack_token",
        r"xox(?<![A-Za-z0-9]xox)[abeoprs]-[A-Za-z0-9-]{10,}",
    ),
    _Rule(
        "slack_token",
        r"xapp-(?<![A-Za-z0-9]xapp-)[0-9]-[A-Za-z0-9-]{10,}",
    ),
    _Rule(
        "slack_token",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/-]{8,})",
        groups=("s",),
    ),
    _Rule(
        "stripe_key",
        r"(?<![A-Za-z0-9_])[srp]k_(?:live|test)_[A-Za-z0-9]{24,}",
        triggers=("k_live_", "k_test_"),
    ),
    _Rule(
        "google_api_key",
        rf"AIza(?<![A-Za-z0-9_+/-]AIza)[{_B64URL}]{{35}}(?![{_B64URL}])",
    ),
    _Rule(
        "npm_token",
        r"npm_(?<![A-Za-z0-9_]npm_)[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    ),
    _Rule(
        "aws_access_key",
        r"A[KS]IA(?<![A-Za-z0-9+/]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9+/])",
        triggers=("AKIA", "ASIA"),
    ),
    _Rule(
        "jwt",
        rf"eyJ(?<![{_B64URL}]eyJ)[{_B64URL}]{{10,}}\.[{_B64URL}]{{10,}}\.[{_B64URL}]{{10,}}",
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
        "aws_secret_key",
        r"(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
        r"[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*[\"']?(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        triggers=("secret",),
        lowered=True,
        groups=("s",),
    ),
    _Rule(
        "password_assignment",
        _KW + _SEPARATOR + _VALUE,
        triggers=("pass", "pwd", "secret", "token", "key"),
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_assignment,
    ),
    _Rule(
        "password_assignment",
        # command-line flags: --password hunter2, --api-key "..."
        r"--(?<![\w-]--)(?:[a-z0-9]+-)*" + _KW + r"[ \t]+(?!-)" + _VALUE,
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_assignment,
    ),
    _Rule(
        "password_assignment",
        # <password>hunter2</password>, <db.password>...</db.password>
        r"<(?P<tag>[\w.:-]{0,40}?" + _KW + r")>(?P<xv>[^<\r\n]{1,1024})</(?P=tag)>",
        triggers=("</",),
        lowered=True,
        groups=("xv",),
        keep=_keep_xml,
    ),
)


def _apply(rule: _Rule, text: str, haystack: str, counts: dict[str, int], *, fold: bool = False) -> str:
    """Replace in ``text`` the secrets ``rule`` finds in ``haystack``: ``text``
    itself or a same-length lower-cased copy.  ``fold`` matches ``text``
    case-insensitively instead."""
    regex = rule.regex_ci if fold else rule.regex
    marker = _marker(rule.kind)
    parts: list[str] = []
    pos = 0
    for m in regex.finditer(haystack):
        name = None
        for g in rule.groups:
            if m.group(g) is not None:
                name = g
                break
        if name is None:  # the whole match is the secret
            start, end = m.span()
        else:
            start, end = m.span(name)
            if rule.keep is not None and rule.keep(m, text[start:end]):
                continue
        parts.append(text[pos:start])
        parts.append(marker)
        pos = end
    if not parts:
        return text
    parts.append(text[pos:])
    counts[rule.kind] = counts.get(rule.kind, 0) + len(parts) // 2
    return "".join(parts)


def _redact_secrets(text: str, counts: dict[str, int]) -> str:
    if "-----BEGIN " in text:
        text = _redact_private_keys(text, counts)
    lowered: Optional[str] = None
    for rule in _RULES:
        if rule.lowered:
            if lowered is None:
                lowered = text.lower()
            if rule.triggers and not any(t in lowered for t in rule.triggers):
                continue
            if len(lowered) == len(text):
                new = _apply(rule, text, lowered, counts)
            else:  # lower() expanded a character ("\u0130"): match case-insensitively
                new = _apply(rule, text, text, counts, fold=True)
        else:
            if rule.triggers and not any(t in text for t in rule.triggers):
                continue
            new = _apply(rule, text, text, counts)
        if new is not text:
            text = new
            lowered = None
    return text


def redact(text: str, *, enabled: bool = True, drop_private: bool = True) -> tuple[str, dict[str, int]]:
    """Return (clean_text, counts_by_type).

    ``drop_private`` removes ``<private>...</private>`` spans (counted as
    ``"private"``); ``enabled`` replaces recognised secrets by
    ``[REDACTED:<type>]``.  With ``enabled=False`` the text is otherwise
    returned unchanged.
    """
    if not isinstance(text, str):
        if text is None:
            text = ""
        elif isinstance(text, (bytes, bytearray, memoryview)):
            text = bytes(text).decode("utf-8", "replace")
        else:
            text = str(text)
    counts: dict[str, int] = {}
    if drop_private and "<" in text:
        text, spans = _strip_private(text)
        if spans:
            counts[PRIVATE_TYPE] = spans
    if enabled and text:
        text = _redact_secrets(text, counts)
    return text, counts
