"""What a session leaves open: leftover-work notes and lists, deferrals, acknowledgements, and the final open ends."""

from __future__ import annotations

import functools
import re
from typing import Any

from supermemory.text import lexicons
from supermemory.transcripts.digest import (
    _clip, _collapse, _MAX_NOTES, MAX_INSTRUCTIONS, MAX_OPEN_ENDS, NOTE_CHARS, SessionDigest,
)


def _remember(seq: list, item: Any, bound: int) -> None:
    seq.append(item)
    if len(seq) > bound:
        del seq[: len(seq) - bound]


def _unresolved(st: dict) -> list[list]:
    """The well-formed entries of st["unresolved"], each `[key, line, edited since]` (a two-item entry of an
    older snapshot reads as not edited since)."""
    return [
        [u[0], u[1], len(u) > 2 and u[2] is True]
        for u in st["unresolved"]
        if isinstance(u, list) and len(u) in (2, 3) and isinstance(u[0], str) and isinstance(u[1], str)
    ]


# --------------------------------------------------------------------------- acknowledgements and deferrals

# A user turn made only of acknowledgements ("ok", "thanks", "never mind", "fine, skip it", 好的, 谢谢), agreements and
# deferrals ("leave that for next time", "later", "not now", 先放一放，下周再做), clause by clause
# (`text/lexicons/acknowledgements.txt`, `agreement_words.txt`, `deferral_phrases.txt`; fillers such as "please",
# "just", "so" allowed between them; Chinese units need no space between them).
_REPLY_FILLERS = r"please|pls|just|then|so|and|but|oh|ah|hmm+|well|also|actually|anyway|for now|那就|那|就|吧|啊|呀"
_REPLY_CLAUSE_SPLIT_RE = re.compile(r"[,.;:!?…—–()，。；：！？、（）～~]+|\s-\s")
_REPLY_MAX_CHARS = 120
_CJK = "\u3000-\u9fff"
_CJK_RE = re.compile(f"[{_CJK}]")


def _alternatives(name: str) -> str:
    """A lexicon's alternatives as one pattern: the English ones as whole words, the Chinese ones anywhere."""
    words = [e for e in lexicons.entries(name) if not _CJK_RE.search(e)]
    cjk = [e for e in lexicons.entries(name) if _CJK_RE.search(e)]
    return "|".join(([rf"\b(?:{'|'.join(words)})\b"] if words else []) + cjk)


@functools.cache
def _reply_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(any clause made only of reply words, a deferral in it, an acknowledgement in it), read on first use."""
    defer, ack, agree = ("|".join(lexicons.entries(name))
                         for name in ("deferral_phrases", "acknowledgements", "agreement_words"))
    unit = rf"(?:{defer}|{ack}|{agree}|{_REPLY_FILLERS})"
    gap = rf"(?:\s+|(?<=[{_CJK}])|(?=[{_CJK}]))"
    return (re.compile(rf"{unit}(?:{gap}{unit})*"), re.compile(_alternatives("deferral_phrases")),
            re.compile(_alternatives("acknowledgements")))


def _reply_kind(text: str) -> str | None:
    """"defer", "ack" or "agree" for a user turn that only defers, acknowledges / declines, or agrees; None for
    anything else (a request, a question, a turn that names what to do)."""
    t = text.strip().lower().replace("\u2019", "'")
    if not t or len(t) > _REPLY_MAX_CHARS or "\n" in t:
        return None
    whole, deferral, acknowledgement = _reply_patterns()
    clauses = [" ".join(re.sub(r"[^\w\s']", " ", c).split()) for c in _REPLY_CLAUSE_SPLIT_RE.split(t)]
    clauses = [c for c in clauses if c]
    if not clauses or not all(whole.fullmatch(c) for c in clauses):
        return None
    if any(deferral.search(c) for c in clauses):
        return "defer"
    return "ack" if any(acknowledgement.search(c) for c in clauses) else "agree"


def _not_a_request(st: dict, text: str) -> bool:
    """Whether a user turn acknowledges, declines or defers rather than asks (then it is no request and leaves no
    question of the assistant open). A bare agreement ("ok", "sure") that answers the assistant's question
    approves what it asked, so it stays a request; a deferral keeps what the assistant proposed (its last question,
    else its last sentence) as a deferred open end, unless a note has it already."""
    kind = _reply_kind(text)
    if kind is None or (kind == "agree" and _last_question(st["last_text"])):
        return False
    if kind == "defer":
        proposal = _last_question(st["last_text"]) or _last_sentence(st["last_text"])
        if (proposal and len(proposal) >= 8 and proposal not in st["notes"] and {"item": proposal} not in st["notes"]
                and proposal not in st["deferred"]):
            _remember(st["deferred"], proposal, _MAX_NOTES)
    if st["reply"] != "none":   # a request still unanswered before it stays unanswered
        st["reply"] = "answered"
    st["last_text"] = ""
    return True


# A user sentence that puts off a thing it names: "let's leave the data quality checks for next week", "park the
# refunds migration", "the dark mode toggle can wait (until next sprint)", "we'll handle the retries later",
# 数据质量检查那个先放一放 / 下周再做. The thing named is the deferred open end; a pronoun ("leave that for next
# time", 这个先放一放) names nothing (`_not_a_request` then keeps the assistant's proposal).
_WHEN_EN = (r"later|next (?:time|week|sprint|session|release|iteration|month|cycle|quarter)|tomorrow|"
            r"another (?:day|time|session)|some other time|the next (?:session|sprint|release|iteration)|"
            r"a later (?:session|sprint|release)|after the (?:release|launch|demo|sprint)|"
            r"(?:mon|tues|wednes|thurs|fri)day")
_LEAD_EN = (r"(?i)^(?:(?:ok|okay|so|and|but|then|alright|fine|also)\b[\s,]*)*"
            r"(?:(?:let'?s|let us|we(?:'ll| will| can| should)|i(?:'ll| will)|you can|please)\s+)?(?:just\s+)?")
_OBJ_EN = r"(?P<obj>[^,;:!?]{3,80}?)"
_CLAUSE_END = r"\s*(?:[,;.!]|$)"
_NAMED_DEFERRAL_RES = (
    re.compile(_LEAD_EN + rf"(?:leave|keep|save|push|move)\s+{_OBJ_EN}\s+(?:for|until|till|to)\s+(?:{_WHEN_EN})"
               + _CLAUSE_END),
    re.compile(_LEAD_EN + rf"(?:park|defer|postpone|shelve|punt on|put off|hold off on)\s+{_OBJ_EN}"
               rf"(?:\s+(?:for|until|till|to)\s+(?:{_WHEN_EN}))?" + _CLAUSE_END),
    re.compile(_LEAD_EN + rf"(?:do|handle|tackle|finish|look at|revisit|deal with|get to|come back to|address)\s+"
               rf"{_OBJ_EN}\s+(?:{_WHEN_EN}|in (?:the next|a later) session)" + _CLAUSE_END),
    re.compile(r"(?i)^(?:(?:ok|okay|so|and|but|alright|fine|also)\b[\s,]*)*" + _OBJ_EN +
               rf"\s+(?:can|could|will have to|has to|have to|must|should|may) wait"
               rf"(?:\s+(?:until|till|for)\s+(?:{_WHEN_EN}))?" + _CLAUSE_END),
    re.compile(r"^(?:好的?|行|嗯|那就|那|我们|咱们)?[，,\s]*(?:先|暂时)?把?(?P<obj>[^，,。；;！!？?：:]{2,40}?)"
               r"(?:那个|这个|那块|这块|那部分|这部分|的事情?|这件事|那件事)?(?:就|也|可以)?"
               r"(?:(?:先|暂时|暂且)?(?:放一放|放一下|放放|缓一缓|缓缓|搁置|搁一搁|往后放|推迟(?:到[^，,。；;]{1,8})?|"
               r"留到[^，,。；;]{1,8}|不急)|(?:先|暂时|暂且)不做|"
               r"(?:以后|回头|下次|下周|明天|晚点|之后|改天|下个迭代|下个版本|有空)再(?:说|做|弄|处理|搞|看|加))"
               r"[吧了啊]*\s*(?:[，,。；;！!～~]|$)"),
)
_NO_OBJECT_RE = re.compile(
    r"(?i)(?:it|that|this|those|these|them|the rest|everything else|all that|i|we|you|they)(?: one| part| bit| idea)?|"
    r"这个|那个|这些|那些|这|那|它|这块|那块|这部分|那部分|这件事|那件事|我们|咱们|你|我|其他的?|剩下的")


_SOONER_RE = re.compile(r"(?i)\b(?:instead of|rather than)\b|\bnow$")


def _named_deferral(sentence: str) -> str | None:
    """The thing a user sentence puts off by name (see `_NAMED_DEFERRAL_RES`), else None."""
    s = sentence.strip()
    if not s or _QUESTION_END_RE.search(s):
        return None
    for pattern in _NAMED_DEFERRAL_RES:
        m = pattern.search(s)
        if m:
            obj = _collapse(m.group("obj")).strip(" '\"“”‘’")
            if _SOONER_RE.search(obj):    # "let's do the watchdog now instead of tomorrow" brings it forward (fu37 D8)
                return None
            if len(obj) >= 2 and not _NO_OBJECT_RE.fullmatch(obj):
                return _clip(obj, NOTE_CHARS)
    return None


# --------------------------------------------------------------------------- notes and lists of leftover work

_TODO_CS_RE = re.compile(r"\b(?:TODO|FIXME|XXX|WIP)\b")
_TODO_CI_RE = re.compile(
    r"(?i)\bfollow[- ]?ups?\b|\bnext steps?\b|\bstill (?:need|needs|have|has) to\b|"
    r"\b(?:remaining|outstanding|open) (?:work|issues?|items?|tasks?|questions?|problems?)\b|"
    r"\bnot (?:yet )?(?:implemented|done|handled|supported|covered|addressed|fixed|tested)\b|"
    r"\bleft to do\b|\b(?:didn't|did not|couldn't|could not|haven't|have not) (?:get to|yet)\b|"
    r"\bknown (?:issues?|limitations?)\b|\bwork[- ]in[- ]progress\b|\b(?:for|until) later\b|"
    r"\b(?:leave|leaving|park|parking|defer|deferring|postpone|postponing|punt|save|saving|revisit|tackle|"
    r"address|handle|fix|finish|do|add|look into|deal with|come back to|circle back to)\b[^.;?!]{0,60}"
    r"(?<!\bor )(?<!\band )\blater\b"
)
# A sentence whose TODO is what it asks to do ("fix the TODO in x.py", "I resolved the FIXME") is no open end.
_DOING_TODO_RE = re.compile(
    r"(?i)\b(?:fix|implement|resolv|address|remov|handl|clean(?:ed|s|ing)? up|finish|complet|tackl)\w{0,4}\s+"
    r"(?:(?:the|this|that|these|those|all|each|every|any|our|my|your|remaining)\s+)?"
    r"(?:[\w.-]+\s+){0,2}?(?:TODO|FIXME|XXX)"
)
# A TODO comment of code pasted into a prompt outside a fence.
_CODE_TODO_RE = re.compile(r"(?m)^\s*(?:#|//|/\*|--|;)\s*(?:TODO|FIXME|XXX)\b.*$")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
_ITEM_RE = re.compile(r"^(?:[-*•+]\s+|\d+[.)]\s+|\d+[、．]\s*|[（(]\d+[)）]\s*)")
_BULLET_RE = re.compile(r"^(?:[-*•+]\s+|\d+[.)]\s+|\d+[、．]\s*|[（(]\d+[)）]\s*|#+\s+|>\s*)")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])\s*(?=\S)")
_QUESTION_END_RE = re.compile(r"(?:[?？]|[吗呢])[\s\"'”’)）]*$")
_MAX_LISTED = 5   # the items of one list under a label that become open ends


def _text_items(text: str) -> list[tuple[str, bool]]:
    """The text's non-empty lines outside code fences, bullets and emphasis taken off, each with whether it was an
    item of a bulleted or numbered list."""
    out = []
    for ln in _FENCE_RE.sub("\n", text).splitlines():
        ln = ln.strip()
        item = bool(_ITEM_RE.match(ln))
        ln = _BULLET_RE.sub("", ln).replace("**", "").replace("__", "").strip()
        if ln:
            out.append((ln, item))
    return out


def _text_lines(text: str) -> list[str]:
    return [ln for ln, _item in _text_items(text)]


@functools.cache
def _leftover_label_re() -> re.Pattern:
    """A sentence that starts with a label of leftover work and a colon (also the full-width ：) or dash ("Still to
    do: …", "Next steps:", "Remaining — …", 还没做完的：, 待办：; `text/lexicons/leftover_work_labels.txt`)."""
    labels = "|".join(lexicons.entries("leftover_work_labels"))
    return re.compile(rf"(?i)^(?:{labels})\s*(?:[:：]|[—–]|-\s)")


def _listed_after(lines: list[tuple[str, bool]], i: int) -> list[str]:
    """What a sentence ending in a colon at line `i` introduces: the list items right below it (at most
    `_MAX_LISTED`), else the one line below it."""
    following = lines[i + 1:]
    if not following:
        return []
    if not following[0][1]:
        return [following[0][0]]
    items = []
    for ln, item in following[:_MAX_LISTED]:
        if not item:
            break
        items.append(ln)
    return items


def _scan_notes(notes: list, text: str, *, questions: bool = True, deferred: list | None = None) -> None:
    """Collect TODO-ish statements of prose into `notes` (code blocks ignored; questions too unless `questions`): a
    sentence as a string; each item of the list a sentence ending in a colon introduces ("Still to do:\\n- a\\n- b",
    待办：…) as `{"item": text}`, shown without a label. With `deferred` (a user turn), a sentence that puts off a
    thing it names keeps that thing there instead."""
    lines = _text_items(text)
    taken = 0   # lines up to here were items of a list already kept
    for i, (ln, _item) in enumerate(lines):
        if i < taken:
            continue
        for sentence in _SENTENCE_RE.split(ln):
            thing = _named_deferral(sentence) if deferred is not None else None
            if thing is not None:
                if thing not in deferred:
                    _remember(deferred, thing, _MAX_NOTES)
                continue
            if not (_TODO_CS_RE.search(sentence) or _TODO_CI_RE.search(sentence)
                    or _leftover_label_re().match(sentence)):
                continue
            if _DOING_TODO_RE.search(sentence) or (not questions and sentence.rstrip().endswith("?")):
                continue
            if sentence.rstrip().endswith((":", "：")):   # "Next steps:" / 待办： → each item below it
                listed = _listed_after(lines, i)
                taken = i + 1 + len(listed)
                for entry in listed:
                    if questions or not _QUESTION_END_RE.search(entry):
                        _keep(notes, {"item": _clip(entry, NOTE_CHARS)})
                continue
            _keep(notes, _clip(sentence, NOTE_CHARS))


# Words a request or a revocation shares with a kept to-do or rule without naming its work ("now", "let's", "do",
# "the", "tomorrow", "always run").
_WORK_STOP = frozenset("""the a an and or to of in on at for with from by this that these those it its now then
    also just please let's lets let us we you i your our can could should would will do does did done make get go be
    is are todo fixme later tomorrow today next time still need needs instead than rather any all run use always
    never every before after about""".split())
_CLAUSE_SPLIT = re.compile(r"(?i),?\s+and\s+(?=we |i |you |also |still |then )|;\s*|,\s+(?=then |also |and )")


def work_words(text: str) -> set[str]:
    """The words that name the work in a to-do, a request or a rule: words of three letters or more (a path or
    identifier whole) that are not `_WORK_STOP`, and the two-character runs of Chinese text."""
    text = text.casefold()
    words = {w.strip("._/-") for w in re.findall(r"[a-z0-9_./-]{3,}", text)}
    return {w for w in words if len(w) >= 3 and w not in _WORK_STOP} | {
        run[i:i + 2] for run in re.findall(r"[\u4e00-\u9fff]{2,}", text) for i in range(len(run) - 1)}


def take_up(entries: list, request: str) -> None:
    """A to-do the user now asks for is no longer left open: the request stands for it ("TODO: also fix the refund
    path in shop/refunds.py, later" … "Now fix the refund path": fresh-user runs fu37 D8, fu38 D1). Each kept entry
    (a user's to-do or the assistant's note) whose clause holds two thirds of the request's work words, two at least
    (one, when the entry has other clauses that stay), loses that clause; an entry of one clause goes."""
    wanted = work_words(request)
    if not wanted:
        return
    need = max(1, -(-2 * len(wanted) // 3))
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        text = entry["item"] if isinstance(entry, dict) else entry
        if not isinstance(text, str):
            continue
        clauses = [c for c in _CLAUSE_SPLIT.split(text) if c.strip()]
        left = [c for c in clauses if not (len(wanted & work_words(c)) >= need
                                           and (need >= 2 or len(clauses) > 1))]
        if len(left) == len(clauses):
            continue
        if not left:
            del entries[index]
        else:
            rest = "; ".join(c.strip() for c in left)
            entries[index] = {"item": rest} if isinstance(entry, dict) else rest


def _keep(notes: list, note: str | dict) -> None:
    """Keep a note once: a sentence of 8 characters or more (2 in Chinese), a list item of any 2 or more."""
    if isinstance(note, dict):
        short = len(note["item"]) < 2
    else:
        short = len(note) < (2 if _CJK_RE.search(note) else 8)
    if not short and note not in notes:
        _remember(notes, note, _MAX_NOTES)


def _last_sentence(text: str) -> str | None:
    lines = _text_lines(text)
    sentences = _SENTENCE_RE.split(lines[-1]) if lines else []
    last = sentences[-1].strip() if sentences else ""
    return _clip(last, NOTE_CHARS) if last else None


def _last_question(text: str) -> str | None:
    lines = _text_lines(text)
    if not lines:
        return None
    sentences = _SENTENCE_RE.split(lines[-1])
    last = sentences[-1].strip() if sentences else ""
    if last.endswith(("?", "？")):
        return _clip(last, NOTE_CHARS)
    return None


# --------------------------------------------------------------------------- the open ends


def _shown(entry: Any, prefix: str) -> str | None:
    """How a kept note or to-do reads among the open ends: a list item bare, a sentence that starts with its own
    label ("Still to do: …") as written, any other with `prefix`."""
    if isinstance(entry, dict) and isinstance(entry.get("item"), str):
        return entry["item"]
    if not isinstance(entry, str):
        return None
    labelled = _leftover_label_re().match(entry) or entry.casefold().startswith(prefix.casefold())   # not "Note: Note:"
    return entry if labelled else prefix + entry


def _said_elsewhere(thing: str, entries: list) -> bool:
    """Whether a deferred thing is also in a note or list item (the assistant's 'Still to do' repeating it)."""
    key = re.sub(r"(?i)^the\s+", "", thing).casefold()
    texts = [e["item"] if isinstance(e, dict) else e for e in entries]
    return any(isinstance(t, str) and key in t.casefold() for t in texts)


def _finish(d: SessionDigest, st: dict) -> None:
    """Recompute the open ends from the folded state (deterministic)."""
    ends: list[str] = []
    if d.requests:
        last = d.requests[-1]
        if st["reply"] == "none":
            ends.append(f"Unanswered request: {last}")
        elif st["reply"] == "interrupted":
            ends.append(f"Interrupted while working on: {last}")
        else:
            question = _last_question(st["last_text"])
            if question:
                ends.append(f"Awaiting reply: {question}")
    ends.extend(filter(None, (_shown(ask, "To do: ") for ask in st["asks"][-5:])))
    for item in st["deferred"][-3:]:
        if isinstance(item, str) and not _said_elsewhere(item, st["notes"] + st["asks"]):
            ends.append(f"Deferred: {item}")
    errors = _unresolved(st)[-3:]
    ends.extend(f"Unresolved error: {line}" for _key, line, edited in errors if not edited)
    for todo in st["todos"][:5]:
        if isinstance(todo, str):
            ends.append(f"Unfinished todo: {todo}")
    ends.extend(filter(None, (_shown(note, "Note: ") for note in st["notes"][-5:])))
    ends.extend(f"Possibly fixed, not re-run: {line}" for _key, line, edited in errors if edited)
    seen: set[str] = set()
    unique = []
    for e in ends:
        if e not in seen:
            seen.add(e)
            unique.append(e)
    d.open_ends = unique[:MAX_OPEN_ENDS]
    d.instructions = [rule for rule in st["rules"] if isinstance(rule, str)][-MAX_INSTRUCTIONS:]
