"""The one settings tree: every default, the rules each value must follow, and the check that applies them.

`DEFAULTS` is the only place a default lives (`Config.get` falls back to it; `RankConfig` is built
from its `ranking` section). `validate_settings` is the one check, used by `config --set`, by
loading the config file and by `doctor`.
"""
from __future__ import annotations

import copy
import json
import math
from typing import Any, Mapping, NamedTuple

DEFAULTS: dict[str, Any] = {
    "embedder": {
        "provider": "onnx",          # onnx | hash | openai
        "model": "bge-small-en-v1.5",
        "allow_hash_fallback": True,  # model missing: a store already pinned to `hash` keeps using it (warned); any other stays lexical-only
        "threads": 2,
        "openai_base_url": "http://127.0.0.1:8080/v1",
        "openai_model": "text-embedding-3-small",
        "openai_dimensions": 0,       # 0 = whatever the endpoint returns
        "openai_api_key_env": "SUPERMEMORY_EMBED_API_KEY",
        # bge's retrieval instruction is prepended to a query unless its best lexical matches read as
        # source code at least this much (mean text.code_share of the top 5); 0 = never, above 1 = always.
        # Prose sits at 0 (chat, science: 99th percentile <= 0.16), functions from 0.3 up (median 0.97); 0.1-0.4
        # gave code search the same figures and the prose sets did not move (bench/RESULTS.md).
        "query_instruction_code_below": 0.3,
        "query_instruction": "Represent this sentence for searching relevant passages: ",
        "query_blend": False,         # embed the query with and without the instruction, average both
    },
    "ranking": {
        "weights": {                  # priors added to the relevance log-odds (retrieval/relevance.py)
            "importance": 0.8,        # x (importance x confidence - 0.5)
            "recency": 0.3,
            "reinforcement": 0.2,
            "pinned": 0.3,
            "superseded": -0.5,       # a live `supersedes` link targets it: a newer memory says it changed
                                      # (its successor is lifted above it anyway; -1.0 cost chat sets R@5)
        },
        "temperature": 1.0,           # softmax over log-odds
        "half_life_days": 45.0,
        "mmr_lambda": 0.0,          # MMR diversity (0 = score order): it cost R@5 on every dev set
        "relevance_threshold": "auto",  # nothing relevant below it; "auto" = fitted (relevance.json), 0 = off
        "relevance_floor": 0.003,   # a hit below this relevance is left out, whatever the best one scores
        "vector_floor": 0.0,        # an extra cosine floor for hits without a lexical match (0 = none)
        "relative_cutoff": 0.01,    # drop hits below this share of the best attention (0 = off): filler lines
        "glossary": True,           # Chinese ↔ English software terms bridge queries and memories
        "candidates": 60,
        "match_max_df": 0.2,        # terms in more than this share of chunks are left out of FTS MATCH
        "chunk_softness": 0.05,     # a long function's cosine: log-mean-exp of its chunks' at this x code share (0 = best chunk)
        "window_share": 0.2,        # a memory's cosine moves this share of the way to its best two-sentence window's (0 = off)
    },
    "recall": {"default_limit": 8, "max_limit": 100, "max_tokens": 1500,
               "ram_vector_limit": 250_000,  # long-lived servers search up to this many chunks in RAM
               "intent": True},   # kind / status / time words in a query filter or list (retrieval/broad.py)
    "briefing": {"max_tokens": 900, "recent_days": 14},
    # `supersedes` links written by `remember` (store/supersession.py; fitted on bench/revision_pairs.jsonl):
    # the new text announces a change and an older memory is this close to it.
    "supersession": {
        "enabled": True,
        "cosine": 0.75,               # best chunk cosine that alone makes two memories one subject
        "cosine_with_overlap": 0.65,  # …or this cosine while the new text repeats `overlap` of the old words
        "overlap": 0.5,
        "min_overlap": 0.2,           # either way the new text repeats at least this share of the old words
        "overlap_cjk": 0.35,          # mostly-CJK text or no vectors: the words decide alone
        "max_links": 2,               # older memories one new memory may supersede
        "max_terms": 40,              # a revision restates a fact in a sentence or two: a text with more distinct
                                      # content words (a document, a passage, code) mentions a change, not one
    },
    "store": {
        "chunk_max_tokens": 260,
        "chunk_overlap_tokens": 48,
        "max_content_chars": 1_000_000,
        "write_embed_chunks": 32,     # chunks a write embeds before it answers (~0.1 s each); the rest of a
                                      # long text gets its vectors while the server idles or at maintenance
        "near_duplicate_similarity": 0.9,
        "negated_pair_similarity": 0.75,   # a pair this close that says the same words, one negated, may contradict
                                           # (`text.traits.negated_twin`): "uses REST" / "does not use REST" is 0.82
        "redact_secrets": True,
        "default_importance": 0.5,
    },
    "lifecycle": {
        "stale_days": 180,
        "importance_floor": 0.3,
        "purge_after_days": 30,
        "sweep_on_session_end": False,
        "session_versions_kept": 2,  # older versions of captured session memories are pruned
    },
    "search_log": {"enabled": True, "max_rows": 5000, "hash_queries": False},
    "capture": {"enabled": True, "max_chars": 6000},
    "mcp": {
        "max_response_bytes": 30_000,
        "max_frame_bytes": 8 * 1024 * 1024,
        "instructions_briefing": True,
        "instructions_briefing_tokens": 300,
    },
    "hooks": {"budget_seconds": 2.0, "briefing_tokens": 900},
    "export": {"dir": ""},
}


# --- validation -------------------------------------------------------------------------------------
# Every key of DEFAULTS is a setting; its type is the type of its default. RULES adds the bounds and
# choices that matter; validate_settings is the one check (config --set, load_config, doctor).

class Rule(NamedTuple):
    """What a setting accepts beyond its type: bounds (numbers), choices and prefixes (strings)."""

    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    above: bool = False       # `lo` itself is excluded
    prefixes: tuple = ()
    real: bool = False        # any number, though the default is a whole one
    words: tuple = ()         # strings a numeric setting also accepts ("auto")


_SHARE = Rule(0, 1)
_COUNT = Rule(0)
_AT_LEAST_ONE = Rule(1)
_TOKENS = Rule(50, 100_000)   # what MemoryStore.briefing accepts as a budget

RULES: dict[str, Rule] = {
    "embedder.provider": Rule(choices=("onnx", "hash", "openai")),
    "embedder.model": Rule(choices=("bge-small-en-v1.5",)),
    "embedder.threads": Rule(1, 256),
    "embedder.openai_base_url": Rule(prefixes=("http://", "https://")),
    "embedder.openai_dimensions": _COUNT,
    "embedder.query_instruction_code_below": _COUNT,
    **{f"ranking.weights.{name}": Rule(-5, 5, real=True) for name in DEFAULTS["ranking"]["weights"]},
    "ranking.temperature": Rule(0, 10, above=True),
    "ranking.half_life_days": _COUNT,
    "ranking.mmr_lambda": _SHARE,
    "ranking.relevance_threshold": Rule(0, 1, words=("auto",)),
    "ranking.vector_floor": _SHARE,
    "ranking.relevance_floor": _SHARE,
    "ranking.relative_cutoff": _SHARE,
    "ranking.candidates": Rule(1, 10_000),
    "ranking.match_max_df": _SHARE,
    "ranking.chunk_softness": _SHARE,
    "ranking.window_share": _SHARE,
    "recall.default_limit": _AT_LEAST_ONE,
    "recall.max_limit": _AT_LEAST_ONE,
    "recall.max_tokens": _AT_LEAST_ONE,
    "recall.ram_vector_limit": _COUNT,
    "recall.intent": Rule(choices=(True, False)),
    "briefing.max_tokens": _TOKENS,
    "briefing.recent_days": Rule(0, real=True),
    "supersession.cosine": _SHARE,
    "supersession.cosine_with_overlap": _SHARE,
    "supersession.overlap": _SHARE,
    "supersession.min_overlap": _SHARE,
    "supersession.overlap_cjk": _SHARE,
    "supersession.max_links": Rule(1, 100),
    "supersession.max_terms": Rule(1, 100_000),
    "store.chunk_max_tokens": Rule(16, 100_000),
    "store.chunk_overlap_tokens": _COUNT,
    "store.max_content_chars": _AT_LEAST_ONE,
    "store.write_embed_chunks": _AT_LEAST_ONE,
    "store.near_duplicate_similarity": _SHARE,
    "store.negated_pair_similarity": _SHARE,
    "store.default_importance": _SHARE,
    "lifecycle.stale_days": Rule(0, 36_500, real=True),
    "lifecycle.importance_floor": _SHARE,
    "lifecycle.purge_after_days": Rule(0, 36_500, real=True),
    "lifecycle.session_versions_kept": _COUNT,
    "search_log.max_rows": _COUNT,
    "capture.max_chars": Rule(200),
    "mcp.max_response_bytes": Rule(1024),
    "mcp.max_frame_bytes": Rule(1024),
    "mcp.instructions_briefing_tokens": _TOKENS,
    "hooks.budget_seconds": Rule(0.05, 600),
    "hooks.briefing_tokens": _TOKENS,
}
# (smaller, larger, may be equal): settings that only make sense in this order.
_ORDERED = (("recall.default_limit", "recall.max_limit", True),
            ("store.chunk_overlap_tokens", "store.chunk_max_tokens", False))
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_BAD = object()


def _leaves(tree: Mapping, prefix: str = ""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _sections(tree: Mapping, prefix: str = ""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield f"{prefix}{key}"
            yield from _sections(value, f"{prefix}{key}.")


SETTINGS: dict[str, Any] = dict(_leaves(DEFAULTS))   # dotted key → default, every known setting
SECTIONS: tuple = tuple(_sections(DEFAULTS))          # dotted keys that hold settings (ranking.weights)
assert set(RULES) <= set(SETTINGS), set(RULES) - set(SETTINGS)


class SettingProblem(NamedTuple):
    """One invalid setting: the message to show and the dotted keys it concerns."""

    message: str
    keys: tuple

    def __str__(self) -> str:
        return self.message


def show_value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def as_sentence(text: str) -> str:
    return text if text.endswith((".", "?")) else text + "."


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _integer(key: str) -> bool:
    return isinstance(SETTINGS[key], int) and not isinstance(SETTINGS[key], bool) and not RULES.get(key, Rule()).real


def _numeric(key: str) -> bool:
    default = SETTINGS[key]
    return (isinstance(default, (int, float)) and not isinstance(default, bool)) or bool(RULES.get(key, Rule()).words)


def expected(key: str) -> str:
    """What setting `key` accepts, in words ("an integer >= 1", "one of onnx, hash, openai")."""
    default, rule = SETTINGS[key], RULES.get(key, Rule())
    if isinstance(default, bool):
        return "true or false"
    if rule.choices:
        return "one of " + ", ".join(rule.choices)
    if isinstance(default, str) and not rule.words:
        return "a string" + (" starting with " + " or ".join(rule.prefixes) if rule.prefixes else "")
    noun = "an integer" if _integer(key) else "a number"
    words = "".join(f' or "{word}"' for word in rule.words)
    if rule.lo is not None and rule.hi is not None:
        if rule.above:
            return f"{noun} above {_number(rule.lo)} and at most {_number(rule.hi)}{words}"
        return f"{noun} from {_number(rule.lo)} to {_number(rule.hi)}{words}"
    if rule.lo is not None:
        return f"{noun} {'>' if rule.above else '>='} {_number(rule.lo)}{words}"
    return noun + words


def checked(key: str, value: Any) -> Any:
    """`value` as setting `key` holds it (bool words become booleans), or `_BAD`."""
    default, rule = SETTINGS[key], RULES.get(key, Rule())
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        word = value.strip().lower() if isinstance(value, str) else None
        return True if word in _TRUE else False if word in _FALSE else _BAD
    if isinstance(value, str) and value in rule.words:
        return value
    if _numeric(key):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return _BAD
        if _integer(key):
            if isinstance(value, float) and not value.is_integer():
                return _BAD
            value = int(value)
        if rule.lo is not None and (value < rule.lo or (rule.above and value == rule.lo)):
            return _BAD
        if rule.hi is not None and value > rule.hi:
            return _BAD
        return value
    if not isinstance(value, str) or (rule.choices and value not in rule.choices):
        return _BAD
    if rule.prefixes and not value.startswith(rule.prefixes):
        return _BAD
    return value


# Settings that existed and were taken out: a config file that still sets one keeps working (the value is
# ignored and `doctor` says so) instead of being refused. Key → what replaced it.
RETIRED: dict[str, str] = {
    "embedder.query_instruction_below": "the query instruction now follows whether the best lexical matches "
                                        "read as code: embedder.query_instruction_code_below",
    "ranking.weights.lexical": "the relevance model weighs lexical evidence itself (retrieval/relevance.json); "
                               "ranking.weights holds only the priors",
    "ranking.weights.vector": "the relevance model weighs vector evidence itself (retrieval/relevance.json); "
                              "ranking.weights holds only the priors",
}


def without_retired(tree: Mapping) -> tuple[dict, list[str]]:
    """The settings tree with retired keys taken out, and one note for each key taken out."""
    if not isinstance(tree, Mapping):
        return tree, []
    tree, notes = copy.deepcopy(dict(tree)), []
    for dotted, replacement in RETIRED.items():
        parent, _, leaf = dotted.rpartition(".")
        found, node = _lookup(tree, parent)
        if found and isinstance(node, dict) and leaf in node:
            del node[leaf]
            notes.append(f"setting {dotted!r} was retired and is ignored ({replacement}); remove it from the file")
    return tree, notes


def unknown_setting(dotted: str) -> str | None:
    """None for a known key (a setting or a section), else a message naming the nearest known keys."""
    if dotted in SETTINGS or dotted in SECTIONS:
        return None
    if dotted in RETIRED:
        return f"setting {dotted!r} was retired; {RETIRED[dotted]}"
    import difflib

    ancestors = {dotted.rsplit(".", n)[0] for n in range(1, dotted.count(".") + 1)}
    known = [key for key in (*SETTINGS, *SECTIONS) if key not in ancestors]
    parent, _, leaf = dotted.rpartition(".")
    siblings = [key.rpartition(".")[2] for key in known if key.rpartition(".")[0] == parent]
    close: list[str] = []
    for cutoff in (0.8, 0.6):  # a near-exact typo names one key; a looser match up to three; the
        # last part within its own section first (shared prefixes make every full key look alike)
        close = [f"{parent}.{key}" if parent else key
                 for key in difflib.get_close_matches(leaf, siblings, n=3, cutoff=cutoff)
                 ] or difflib.get_close_matches(dotted, known, n=3, cutoff=cutoff)
        if close:
            break
    if close:
        hint = "did you mean " + (close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]) + "?"
    else:
        parent = dotted.rpartition(".")[0]
        if parent in SECTIONS:
            node = DEFAULTS
            for part in parent.split("."):
                node = node[part]
            hint = f"{parent} holds {', '.join(node)}"
        else:
            hint = f"the sections are {', '.join(DEFAULTS)}"
    return f"unknown setting {dotted!r}; {hint}"


def _walk(user: Mapping, defaults: Mapping, prefix: str, problems: list) -> None:
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        if key not in defaults:
            message = unknown_setting(dotted)
            if "." in str(key) and (dotted in SETTINGS or dotted in SECTIONS):
                head, _, tail = str(key).partition(".")
                message = (f"setting {dotted!r} is written as one key; nest it instead: "
                           f'{{"{head}": {{"{tail}": ...}}}}')
            problems.append(SettingProblem(message, (dotted,)))
            continue
        default = defaults[key]
        if isinstance(default, dict):
            if isinstance(value, Mapping):
                _walk(value, default, dotted + ".", problems)
            else:
                problems.append(SettingProblem(
                    f"{dotted} = {show_value(value)}: expected an object holding {', '.join(default)}", (dotted,)))
        elif checked(dotted, value) is _BAD:
            problems.append(SettingProblem(
                f"{dotted} = {show_value(value)}: expected {expected(dotted)} (default {show_value(default)})", (dotted,)))


def _lookup(tree: Mapping, dotted: str) -> tuple[bool, Any]:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def validate_settings(tree: Mapping) -> list[SettingProblem]:
    """Every problem in a settings tree (the config file's, partial or whole): unknown keys, wrong
    types, values out of range or outside their choices, settings in the wrong order.

    :param tree: nested settings as in config.json; keys left out keep their defaults.
    :returns: the problems, empty when the tree is valid.
    """
    if not isinstance(tree, Mapping):
        return [SettingProblem(f"the settings must be a JSON object, not {show_value(tree)}", ("",))]
    problems: list[SettingProblem] = []
    _walk(tree, DEFAULTS, "", problems)
    flagged = {key for problem in problems for key in problem.keys}
    for small, large, equal_ok in _ORDERED:
        if flagged & {small, large, small.rpartition(".")[0], large.rpartition(".")[0]}:
            continue
        values = []
        for key in (small, large):
            found, value = _lookup(tree, key)
            values.append(checked(key, value) if found else SETTINGS[key])
        if values[0] > values[1] or (values[0] == values[1] and not equal_ok):
            relation = "above" if equal_ok else "not below"
            problems.append(SettingProblem(f"{small} = {show_value(values[0])} is {relation} {large} = "
                                           f"{show_value(values[1])}", (small, large)))
    return problems


def sanitised(user: Mapping, problems: list[SettingProblem]) -> dict:
    """DEFAULTS overridden by every valid setting of `user`; the keys with a problem keep their default."""
    bad = {key for problem in problems for key in problem.keys}
    settings = copy.deepcopy(DEFAULTS)
    for dotted in SETTINGS:
        parts = dotted.split(".")
        if any(".".join(parts[:n]) in bad for n in range(1, len(parts) + 1)):
            continue
        found, value = _lookup(user, dotted)
        if found:
            node = settings
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = checked(dotted, value)
    return settings


def deep_merge(base: dict, override: Mapping) -> dict:
    """`base` with `override` laid over it, nested sections merged key by key."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def coerce_value(text: str) -> Any:
    """Turn a `--set key=value` string into a JSON value when it parses as one."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
