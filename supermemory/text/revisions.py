"""Where a change applies: the area a retirement is limited to, which only the memories of that area share.

A retirement said of one area ("jQuery is no longer used in the admin pages", "we no longer use Docker Compose in
CI", Redis 不再用于任务队列) retires the value there only, so it is about the older memories that state that area,
not those of another one ("The marketing site still uses jQuery") nor those that state the value with no area (still
true of the others: "We use jQuery" stands beside a retirement from the admin pages). Read by `store.supersession`.

And what a quantity is said of (`quantities`, `restates_quantity`): "The billing worker runs 4 replicas in production"
states 4 of the unit "replicas" for the subject "billing worker", so "Billing worker scaled to 6 replicas" is about it.
Likewise the period a text states of a subject (`periods`, `restates_period`: "Mei is on leave from … to …"), and one
statement of a longer text restated with another value (`swapped_in_a_statement`, read by `store.writes` as a possible
contradiction).
"""
from __future__ import annotations

import functools
import re

from supermemory.text import lexicons
from supermemory.text.tokenizer import tokenize
from supermemory.text.sentences import STATEMENT_END
from supermemory.text.traits import (_SIDE, _SIDE_CJK, _in_code, _side, _untitled, content_terms, date_words, statements,
                                     swapped_value)

_WHERE = r"(?:in|for|on|at|inside|within|from)"
_SCOPED = tuple(re.compile(p, re.IGNORECASE) for p in (
    rf"(?<!\S){_SIDE} (?:is|are|was|were|has been|have been) no longer (?:used|needed|in use|installed|run|called) "
    rf"{_WHERE} (?P<scope>{_SIDE})",
    rf"\b(?:no longer (?:use|uses|using|run|runs|need|needs|install|installs)|stop(?:ped)? using) {_SIDE}? {_WHERE} "
    rf"(?P<scope>{_SIDE})",
    rf"不再(?:使用|用)?于(?P<scope>{_SIDE_CJK})", rf"在(?P<scope>[^，。；、,;.在]{{1,12}}?)[中里上]?不再(?:使用|用|需要)",
    rf"不再(?:使用|用)(?!于){_SIDE_CJK}?(?:来|去)?(?:做|跑|进行|处理|执行)(?P<scope>{_SIDE_CJK})",
))


@functools.cache
def _everywhere() -> frozenset:
    """Areas that are the whole project ("no longer used in the codebase" retires the value everywhere), as index
    tokens (stemmed): what a scope's words are compared as (`lexicons/whole_project_words.txt`)."""
    return frozenset(t for word in lexicons.entries("whole_project_words") for t in tokenize(word))


def retirement_scopes(text: str) -> list[frozenset]:
    """The areas the text's retirements are limited to, each as its content words ("jQuery is no longer used in the
    admin pages" → [{admin, pages}]); [] for a retirement of the value itself ("logrus is no longer used", "… in the
    codebase") or no retirement at all."""
    scopes = []
    for pattern in _SCOPED:
        for m in pattern.finditer(text or ""):
            if _in_code(text, m.start(), m.end()):
                continue
            words = content_terms(tokenize(_side(m.group("scope"), leading=False))) - _everywhere()
            if words:
                scopes.append(words)
    return scopes


def in_scope(scopes: list[frozenset], words: frozenset) -> bool:
    """Does a memory with these content words state one of these areas (all of its words)? True without areas."""
    return not scopes or any(scope <= words for scope in scopes)


# A quantity stated of a subject (fresh-user run fu24, D1): "<subject> runs/has/uses/keeps/is N <unit>" or
# "<subject> (was) scaled/set/bumped/raised/lowered/increased/cut … to N <unit>", "we bumped <subject> to N <unit>".
# A newer text that states another N for the same subject and unit makes an older one that states exactly one N of
# that unit for that subject stale, whatever else the older one says ("…, autoscaling is disabled."), where a word
# for word restatement (`traits.restates_value`) sees two different sentences. The words are data
# (`lexicons/quantity_words.txt`, `_words`).
_NUMBER = r"(?P<num>\d+(?:\.\d+)?)(?![\w.:/-]*\d)"
_UNIT = r"(?P<unit>[a-zA-Z]{1,20})\b"
_AT_VERB = re.compile(rf"(?i)\b(?P<verb>[a-z]+)(?: (?:up|down|back))?(?: (?P<to>to|at|with))? {_NUMBER} ?{_UNIT}")
_CLAUSES = re.compile(r"[!?;:,()\n。！？；]|\.(?:\s|$)")
_LIST_STEP = re.compile(r"(?im)^\W*(?:step\s*)?\d+[.):]")
_SCOPE_AFTER = re.compile(r"(?i)^ *(?:of [a-z]+ )?(?:in|for|on|at|during|within|across) (?:the |a |an |each |every )?"
                          r"(?P<scope>[a-z][\w-]*(?: [a-z][\w-]*){0,2})")


@functools.cache
def _words() -> dict:
    """`lexicons/quantity_words.txt` by role: word sets, and `unsaid` as one pattern."""
    rows: dict[str, list[str]] = {}
    for role, entry in lexicons.table("quantity_words"):
        rows.setdefault(role, []).append(entry)
    out = {role: frozenset(" ".join(entries).split()) for role, entries in rows.items() if role != "unsaid"}
    out["unsaid"] = re.compile(rf"(?i)\b(?:{'|'.join(rows['unsaid'])})\b")
    return out


@functools.cache
def _verb_object() -> re.Pattern:
    """"<change verb> <object> to N <unit>": "we bumped <subject> to N <unit>"."""
    verbs = "|".join(sorted(_words()["change"]))
    return re.compile(rf"(?i)\b(?P<verb>{verbs}) (?P<obj>[^,;:()]{{1,60}}?) (?:up |down |back )?to {_NUMBER} ?{_UNIT}")


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSES.split(text or "") if c.strip()]


def _terms(words: str) -> frozenset:
    return content_terms(tokenize(words))


def _unit(word: str) -> str:
    """The index token of a unit word ("replicas" → "replica"); "" for a word that is no unit ("because")."""
    tokens = tokenize(word)
    if word.casefold() in _words()["not_unit"] or len(tokens) != 1 or not tokens[0].isalpha():
        return ""
    return tokens[0] if _terms(word) else ""


def _scope(words: str) -> frozenset:
    """The content words of a scope phrase up to its first word that is none ("production and 2 replicas" →
    {product}); none when it opens with a date ("on Dec 2 …", "on Monday"): a time, not a scope."""
    out = []
    for word in words.split():
        terms = _terms(word)
        if not terms or terms & date_words():
            break
        out.append(word)
    return _terms(" ".join(out))


def quantities(text: str) -> list[tuple[frozenset, str, str, frozenset]]:
    """The quantities the text states of a subject, as (subject words, unit, value, scope words: the content words of
    an "in …"/"for …"/"on …" phrase right after the unit; "per pod" is a rate, no scope), in text order: "The
    billing worker runs 4 replicas in production" → ({bill, worker}, "replica", "4", {product}). Read only in a
    clause that says it as so: not a plan ("may scale to 6"), a question, a negation ("never scale past 6"), a range
    or history ("went from 2 to 4 last year"), an addition ("also runs"), a list step ("Step 3: …") or an imperative
    ("Scale the worker to 6 …"); a subject that carries a number is a counted name ("widget 14"), no subject."""
    if not text or "?" in text or "？" in text or _LIST_STEP.search(text):
        return []
    out = []
    for clause in _clauses(text):
        if _words()["unsaid"].search(clause):
            continue
        found = []
        for m in _AT_VERB.finditer(clause):
            verb, unit = m.group("verb").casefold(), _unit(m.group("unit"))
            stated = verb in _words()["state"] and m.group("to") in (None, "at", "with")
            changed = verb in _words()["change"] and m.group("to") in ("to", "at")
            if unit and (stated or changed):
                found.append((clause[:m.start()], m, unit))
        for m in _verb_object().finditer(clause):    # "we bumped <subject> to N <unit>"; "Scale <subject> to …" bids
            unit, before = _unit(m.group("unit")), clause[:m.start()]
            if unit and before.strip() and not _terms(before):
                found.append((m.group("obj"), m, unit))
        for subject, m, unit in found:
            if re.search(r"\d", subject) or not _terms(subject):
                continue
            scope = _SCOPE_AFTER.match(clause[m.end():])
            out.append((_terms(subject), unit, m.group("num"),
                        _scope(scope.group("scope")) if scope else frozenset()))
    return out


def _count(text: str, unit: str) -> int:
    """How many numbers of this unit the text names ("4 replicas … 2 replicas": 2)."""
    return sum(1 for m in re.finditer(rf"{_NUMBER} ?{_UNIT}", text or "") if _unit(m.group("unit")) == unit)


def restates_quantity(older: str, newer: str) -> bool:
    """Does `newer` state another value of a quantity `older` states, for the same subject and unit ("The billing
    worker runs 4 replicas in production (…), autoscaling is disabled." → "Billing worker scaled to 6 replicas on
    Dec 2 …")? Each text names exactly one number of that unit, `newer` states one quantity in all, a scope either
    states ("in staging", "for uploads"; production is none: it is what an unscoped quantity is said of) the other
    states too, and the two values differ. Either may be "title\nbody" with a title cut from the body
    (`traits._untitled`)."""
    older, newer = _untitled(older), _untitled(newer)
    mine = quantities(newer)
    if len(mine) != 1:
        return False
    subject, unit, value, scope = mine[0]
    if _count(newer, unit) != 1 or _count(older, unit) != 1:
        return False
    default = _words()["default_scope"]
    if scope - default and not scope - default <= _terms(older):
        return False
    return any(s == subject and u == unit and v != value and (theirs - default) <= _terms(newer)
               for s, u, v, theirs in quantities(older))


def quantity_values(text: str, unit: str) -> list[str]:
    """The values a text ("title\nbody" or body) states of this unit (`quantities`)."""
    return [value for _, u, value, _ in quantities(_untitled(text)) if u == unit]


def quantity_subject(text: str) -> tuple[frozenset, str] | None:
    """(subject words, unit) of the one quantity a text states (`restates_quantity`), None without exactly one."""
    mine = quantities(_untitled(text))
    return (mine[0][0], mine[0][1]) if len(mine) == 1 else None


# A period stated of a subject (fresh-user run fu25 D3): "Mei is on leave from 2026-12-14 to 2027-01-05" and "Mei's
# leave moved: she is now on leave from 2026-12-21 to 2027-01-10" give one subject two periods; both ends change,
# which `traits.replaced_numbers` reads as another fact.
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = (rf"(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?|"
         rf"\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}(?: \d{{4}})?)")
_PERIOD = re.compile(rf"(?i)\b(?:from (?P<a>{_DATE}) (?:to|until|till|through) (?P<b>{_DATE})|"
                     rf"between (?P<c>{_DATE}) and (?P<d>{_DATE}))")
_NOT = re.compile(r"(?i)\b(?:not|never|no longer|isn't|aren't|wasn't|won't)\b")   # a period denied is no period stated


def periods(text: str) -> list[tuple[frozenset, tuple[str, str]]]:
    """The date ranges a text states, each with the content words said before it in its sentence (its subject):
    "Mei is on leave from 2026-12-14 to 2027-01-05" → ({mei, leav}, ("2026-12-14", "2027-01-05")). A question or a
    denial states none (a plan does: "will be on leave from …")."""
    if not text or "?" in text or "？" in text:
        return []
    out = []
    for sentence in STATEMENT_END.split(text):
        if _NOT.search(sentence):
            continue
        for m in _PERIOD.finditer(sentence):
            ends = (m.group("a") or m.group("c"), m.group("b") or m.group("d"))
            out.append((_terms(sentence[:m.start()]) - date_words(), tuple(e.casefold() for e in ends)))
    return out


def restates_period(older: str, newer: str) -> bool:
    """Does `newer` give another period of the one subject `older` gives a period of ("Mei is on leave from
    2026-12-14 to 2027-01-05; Jonas covers …" → "Mei's leave moved: she is now on leave from 2026-12-21 to
    2027-01-10")? Each states exactly one, the two differ, the older one's subject words are all words of the newer
    text (which may say more: "Mei's leave moved"; "Jonas is on leave" is another subject), and the two subjects share
    one. Fewer words would take "The load test ran from …" for "The soak test now runs from …"."""
    older, newer = _untitled(older), _untitled(newer)
    mine, theirs = periods(newer), periods(older)
    if len(mine) != 1 or len(theirs) != 1 or mine[0][1] == theirs[0][1]:
        return False
    (subject, _), (their_subject, _) = mine[0], theirs[0]
    return bool(subject & their_subject) and their_subject <= _terms(newer)


def period_subject(text: str) -> frozenset:
    """The subject words of the one period a text states (`restates_period`); empty without exactly one."""
    mine = periods(_untitled(text))
    return mine[0][0] if len(mine) == 1 else frozenset()


def swapped_in_a_statement(first: str, second: str) -> bool:
    """Does a one-statement text say what one statement of a longer text says, but for one value (`swapped_value`:
    "…Pro plan; the max duration for /api/export is 60 seconds." / "The max duration for /api/export is 300
    seconds.", fresh-user run fu25 D4)? The longer text's other statements move its vector away from a copy's."""
    one, other = sorted((first, second), key=lambda text: len(statements(text)))
    many = statements(other)
    return len(statements(one)) == 1 and len(many) > 1 and any(swapped_value(part, one) for part in many)
