"""Secret redaction: runs on every text before it is stored or indexed.

``redact(text)`` returns ``(clean_text, counts_by_type)``:

* ``<private>...</private>`` spans (case-insensitive, multi-line) are removed
  outright and counted under ``"private"``.  An unclosed ``<private>`` drops
  everything up to the end of the text.  Nested spans are removed up to their
  matching outer close tag, so nothing inside an outer span survives.
* Recognised secrets are replaced by ``[REDACTED:<type>]``.  Only the secret
  itself is replaced: the key of an assignment, the scheme/user/host of a URL
  and the ``Authorization: Bearer`` prefix are kept, so the text stays useful.
  Rules run most specific first (see ``REDACTION_TYPES``): an Anthropic key is
  never labelled ``openai_key``, ``GITHUB_TOKEN=ghp_...`` counts once as
  ``github_token``, and a JWT sent as a bearer token is labelled ``jwt``.

The rules are heuristics tuned to miss few real secrets while leaving ordinary
prose and code alone: hashes, UUIDs, lockfile checksums, data URIs, words such
as "password reset flow", identifiers such as ``token_count``, variables
(``password = os.environ["X"]``, ``f(password=password)``) and placeholder
values (``password=${DB_PASSWORD}``, ``token=None``) come back unchanged.

Speed: every regex is precompiled and starts with a literal, so the engine
skips ahead with a substring search; keyword assignments are located with
``str.find`` and matched on a lower-cased copy of the text; all quantifiers
are bounded, so the run time is linear.  A megabyte of ordinary code or prose
takes a few tens of milliseconds.  ``redact`` never raises on a ``str`` (lone
surrogates and NUL bytes included).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator, Optional

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
    password passwd pass pwd passphrase passcode secret token key apikey
    api_key api-key secret_key access_token auth_token
    """.split()
)
_KEYWORD_IN_VALUE = re.compile(r"passw(?:or)?d|passphrase|secret|token|api[_-]?key", re.IGNORECASE)
# "YOUR_API_KEY", "your-token-here", "<example>", "dummy", "replace-me"
_PLACEHOLDER_WORD = re.compile(
    r"your|example|placeholder|sample|dummy|changeme|replace[_-]?me|(?<![a-z])here(?![a-z])",
    re.IGNORECASE,
)
_CAMEL_IDENT = re.compile(r"_*[a-z]+[A-Z][A-Za-z]*|_+[A-Za-z]\w*")
# two or more words joined by "_" or "-": next_token, X-Auth-Token, my-client-secret
_JOINED_WORDS = re.compile(r"_*[A-Za-z][A-Za-z0-9]*(?:[_-]+[A-Za-z0-9]+)+_*")
_MASK = re.compile(r"[*xX.\u2022#?_:-]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_IDENT_ASSIGN = re.compile(r"[A-Za-z_$][\w.$]*=")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]{0,40}(?:\.[A-Za-z_$][\w$]{0,40})+")
_CALL = re.compile(r"[A-Za-z_$][\w.$:]*[(\[]")
_ENV_VAR = re.compile(r"[A-Z_][A-Z0-9_]*")
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


def _is_dotted_name(v: str) -> bool:
    """self.password, process.env.API_KEY, rust_openssl.hpke.X -- not ya29.<random>."""
    if not _DOTTED.fullmatch(v):
        return False
    for seg in v.split("."):
        if len(seg) > 16 and not (_is_wordy(seg) or _is_camel_words(seg)):
            if len(_DIGIT.findall(seg)) * 5 >= len(seg):
                return False
    return True


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
    if first == "$":  # ${VAR}, $(cmd), $DB_PASSWORD, $password
        rest = v[1:]
        if not rest or rest[0] in "{(" or _ENV_VAR.fullmatch(rest) or _KEYWORD_IN_VALUE.search(rest):
            return True
    if len(v) <= 2 and not v.isalnum():  # "|", ">-"
        return True
    if _MASK.fullmatch(v) or _SQL_PARAM.fullmatch(v) or _COLOR.fullmatch(v):
        return True
    if _PERCENT.search(v) or _TEMPLATE.search(v) or _PATH.fullmatch(v):
        return True
    if "..." in v or "\u2026" in v or "***" in v:  # elided: "hf_...", "sk-...", "hf_***"
        return True
    if v.isdigit() and (family == "token" or len(v) <= 3):
        return True
    if _PLACEHOLDER_WORD.search(v):
        return True
    has_keyword = _KEYWORD_IN_VALUE.search(v) is not None
    if has_keyword and _ENV_VAR.fullmatch(v):  # names a variable: "DB_PASSWORD", API_TOKEN
        return True
    if has_keyword and (_JOINED_WORDS.fullmatch(v) or _CAMEL_IDENT.fullmatch(v)):
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
        if len(v) < 4 or "*" in v or _is_dotted_name(v):
            return True
        if _SPACE.search(v) and low.split(None, 1)[0] not in ("bearer", "basic", "token"):
            return True
        if _is_wordy(v) and (
            len(v) < 8 or ("_" in v and not has_keyword) or _is_camel_words(v) or _CAMEL_IDENT.fullmatch(v)
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
        if rest[:1] == "|" or _is_camel_words(v):  # annotations: "key: PrivateKeyTypes | None"
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
    still cut out of the original text by position."""

    __slots__ = ("kind", "regex", "regex_ci", "groups", "keep", "triggers", "lowered", "stems")

    def __init__(
        self,
        kind: str,
        pattern: str,
        *,
        triggers: tuple[str, ...] = (),
        groups: tuple[str, ...] = (),
        keep: Optional[Check] = None,
        lowered: bool = False,
        stems: tuple[str, ...] = (),
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
        # if set, every match starts at one of these substrings: candidates are
        # found with str.find and tried with regex.match (much faster than a
        # regex scan for a pattern with no literal prefix)
        self.stems = stems


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
_KEY_KW = "key(?:%s)" % "|".join(
    "(?<=%s%skey)" % (prefix, re.escape(joint))
    for prefix in ("api", "private", "encryption", "signing", "master")
    for joint in ("", "_", ".", "-")
)
_TOKEN_KW = r"secret(?:[_.-]?access)?(?:[_.-]?key(?:[_.-]?base)?)?|token|" + _KEY_KW
_KW = rf"(?P<kw>{_PASSWORD_KW}|{_TOKEN_KW})"
# a quoted key may close a subscript: env["DB_PASSWORD"] = ...; a bare
# [token] is a variable used as an index.  "==" and "!=" are comparisons.
_SEPARATOR = r"(?:[\"'`]\]?)?(?P<sep>[ \t]*(?:=>|[:?]?=(?!=)|:(?!:))[ \t]*)"


def _family(kw: str) -> str:
    kw = kw.lower()
    return "password" if kw.startswith("pass") or kw == "pwd" else "token"


def _keep_xml(m: "re.Match[str]", value: str) -> bool:
    return _keep_value(value.strip(), quoted=True, family=_family(m.group("kw")))


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
        r"xox(?<![A-Za-z0-9]xox)[abeprs]-[A-Za-z0-9-]{10,}",
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
        stems=_KW_STEMS,
        lowered=True,
        groups=_VALUE_GROUPS,
        keep=_keep_assignment,
    ),
    _Rule(
        "password_assignment",
        # command-line flags: --password hunter2, --api-key "..."
        r"--(?<![\w-]--)(?:[a-z0-9]+-)*" + _KW + r"(?P<sep>[ \t]+)(?!-)" + _VALUE,
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


def _stem_matches(regex: "re.Pattern[str]", haystack: str, stems: tuple[str, ...]) -> Iterator["re.Match[str]"]:
    """Like regex.finditer(haystack) for a pattern whose matches all start at one of ``stems``."""
    starts: list[int] = []
    for stem in stems:
        i = haystack.find(stem)
        while i != -1:
            starts.append(i)
            i = haystack.find(stem, i + 1)
    starts.sort()
    end = 0
    for i in starts:
        if i < end:
            continue
        m = regex.match(haystack, i)
        if m is not None:
            end = m.end()
            yield m


def _apply(rule: _Rule, text: str, haystack: str, counts: dict[str, int], *, fold: bool = False) -> str:
    """Replace in ``text`` the secrets ``rule`` finds in ``haystack``: ``text``
    itself or a same-length lower-cased copy.  ``fold`` matches ``text``
    case-insensitively instead."""
    regex = rule.regex_ci if fold else rule.regex
    marker = _marker(rule.kind)
    parts: list[str] = []
    pos = 0
    if rule.stems and not fold:
        matches: Iterable["re.Match[str]"] = _stem_matches(regex, haystack, rule.stems)
    else:
        matches = regex.finditer(haystack)
    for m in matches:
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
