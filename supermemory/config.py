"""Defaults, the data dir, the config file and namespace resolution.

Configuration flows one way: environment and config file → `Config` → constructor kwargs.
Nothing below `Config` reads the environment.
"""
from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from supermemory.errors import InvalidInputError

GLOBAL_NAMESPACE = "global"
ALL_NAMESPACES = "*"
KINDS = ("fact", "decision", "preference", "task", "gotcha", "note", "session")
TASK_STATUSES = ("open", "done", "dropped")
RELATIONS = ("refines", "contradicts", "depends-on", "supersedes", "related")

# Every tunable number lives here; the config file overrides any of them by dotted key.
DEFAULTS: dict[str, Any] = {
    "embedder": {
        "provider": "onnx",          # onnx | hash | openai
        "model": "bge-small-en-v1.5",
        "allow_hash_fallback": True,  # model missing → hash vectors, with a loud warning
        "threads": 2,
        "openai_base_url": "http://127.0.0.1:8080/v1",
        "openai_model": "text-embedding-3-small",
        "openai_dimensions": 0,       # 0 = whatever the endpoint returns
        "openai_api_key_env": "SUPERMEMORY_EMBED_API_KEY",
        # bge's retrieval instruction is prepended to a query whose best lexical match covers less
        # than this share of it (questions worded unlike their answer); 0 = never, above 1 = always.
        "query_instruction_below": 0.3,
    },
    "ranking": {
        "weights": {
            "lexical": 0.25,
            "vector": 0.60,
            "importance": 0.04,
            "recency": 0.03,
            "reinforcement": 0.02,
            "pinned": 0.03,
            "superseded": -0.1,       # a similar candidate announces this one changed ("no longer …")
        },
        "adaptive_lexical": True,     # shift weight to the signal that has evidence for this query
        "temperature": 0.1,
        "half_life_days": 45.0,
        "mmr_lambda": 0.4,
        "vector_floor": 0.0,        # 0 → calibrated per-embedder floor (MemoryStore._default_floor)
        "lexical_floor": 0.15,      # query coverage a lexical hit needs to bypass the cosine floor
        "vector_base": -1,          # cosine the vector feature maps to 0; -1 = this query's background
        "coverage_mix": 1.0,        # lexical feature = bm25 share x query coverage
        "relative_cutoff": 0.02,    # drop hits below this share of the best attention
        "vector_margin": 0.025,     # query gate: best cosine must beat the background by this much
        "query_coverage": 0.3,      # query gate: …or the best lexical hit covers this share of the query
        "query_coverage_cjk": 0.2,  # query gate coverage for all-CJK queries (cosines carry no meaning)
        "confident_cosine": 0.8,    # query gate: …or some cosine is at least this high
        "unknown_name_coverage": 0.6,  # query gate when none of the query's names is in any memory
        "glossary": True,           # Chinese ↔ English software terms bridge queries and memories
        "vague_gate": True,         # query gate: a query naming nothing specific ("how do I test it") gets nothing
        "disjoint_gate": True,      # query gate: a query sharing no word with any memory needs a confident cosine
        "supersede_overlap": 0.3,   # stale: a revising candidate repeats this share of its words
        "supersede_cosine": 0.75,   # …and is this close in meaning
        "supersede_cosine_asked": 0.65,  # both, when the query asks what is current ("do we still …")
        "supersede_overlap_asked": 0.2,
        "candidates": 60,
        "match_max_df": 0.2,        # terms in more than this share of chunks are left out of FTS MATCH
    },
    "recall": {"default_limit": 8, "max_limit": 100, "max_tokens": 1500,
               "ram_vector_limit": 250_000},  # long-lived servers search up to this many chunks in RAM
    "briefing": {"max_tokens": 900, "recent_days": 14},
    "store": {
        "chunk_max_tokens": 260,
        "chunk_overlap_tokens": 48,
        "max_content_chars": 1_000_000,
        "near_duplicate_similarity": 0.9,
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


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The data directory: `SUPERMEMORY_HOME`, else `~/.supermemory`."""
    env = os.environ if env is None else env
    home = env.get("SUPERMEMORY_HOME")
    return Path(home).expanduser() if home else Path.home() / ".supermemory"


def _deep_merge(base: dict, override: Mapping) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _coerce(text: str) -> Any:
    """Turn a `--set key=value` string into a JSON value when it parses as one."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Config:
    """Resolved settings for one process: paths plus the merged settings tree."""

    home: Path
    settings: dict = field(default_factory=lambda: copy.deepcopy(DEFAULTS))
    model_dir_override: Path | None = None
    explicit_namespace: str | None = None
    project_dir: Path | None = None

    @property
    def db_path(self) -> Path:
        return self.home / "memory.db"

    @property
    def config_path(self) -> Path:
        return self.home / "config.json"

    @property
    def model_dir(self) -> Path:
        return self.model_dir_override or self.home / "models" / "bge-small-en-v1.5"

    def get(self, dotted: str, default: Any = None) -> Any:
        """Read a setting by dotted key, e.g. `ranking.temperature`."""
        node: Any = self.settings
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def section(self, name: str) -> dict:
        return copy.deepcopy(self.settings.get(name, {}))

    def default_namespace(self) -> str:
        """Namespace for writes and reads when the caller gives none."""
        if self.explicit_namespace:
            return normalize_namespace(self.explicit_namespace, allow_all=True)
        return namespace_for_dir(self.project_dir or Path.cwd())


def load_config(env: Mapping[str, str] | None = None, *, home: Path | None = None,
                cwd: str | os.PathLike | None = None) -> Config:
    """Build the process Config from the environment and `<home>/config.json`.

    :param env: environment mapping (default `os.environ`).
    :param home: data dir override (default from `SUPERMEMORY_HOME`).
    :param cwd: project directory override (hooks pass the payload's `cwd`).
    Raises:
        InvalidInputError: the config file is not valid JSON.
    """
    env = os.environ if env is None else env
    home = Path(home) if home else data_dir(env)
    settings = copy.deepcopy(DEFAULTS)
    path = home / "config.json"
    if path.exists():
        try:
            user = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"config file {path} is not valid JSON: {exc}") from exc
        if not isinstance(user, dict):
            raise InvalidInputError(f"config file {path} must hold a JSON object")
        settings = _deep_merge(settings, user)
    if env.get("SUPERMEMORY_EMBED_PROVIDER"):
        settings["embedder"]["provider"] = env["SUPERMEMORY_EMBED_PROVIDER"]
    model_dir = env.get("SUPERMEMORY_MODEL_DIR")
    project = cwd or env.get("SUPERMEMORY_PROJECT_CWD") or env.get("CLAUDE_PROJECT_DIR")
    return Config(
        home=home,
        settings=settings,
        model_dir_override=Path(model_dir).expanduser() if model_dir else None,
        explicit_namespace=env.get("SUPERMEMORY_NAMESPACE") or None,
        project_dir=Path(project) if project else None,
    )


def set_setting(config: Config, dotted: str, value: str) -> dict:
    """Persist one `key=value` into the config file and return the new user-level tree.

    Raises:
        InvalidInputError: unknown key (typos must not silently do nothing).
    """
    parts = dotted.split(".")
    node: Any = DEFAULTS
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            raise InvalidInputError(f"unknown setting {dotted!r}; see `supermemory config`")
        node = node[part]
    path = config.config_path
    user: dict = {}
    if path.exists():
        user = json.loads(path.read_text(encoding="utf-8") or "{}")
    cursor = user
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = _coerce(value)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(user, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return user


_NS_BAD = re.compile(r"[^a-z0-9._\-]+")


def normalize_namespace(name: str, *, allow_all: bool = False) -> str:
    """Lower-case slug of a namespace name; `*` only where reading everything is allowed.

    Raises:
        InvalidInputError: empty or not a string.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("namespace must be a non-empty string")
    name = name.strip()
    if name == ALL_NAMESPACES:
        if allow_all:
            return name
        raise InvalidInputError("namespace '*' can be read from but not written to")
    slug = _NS_BAD.sub("-", name.casefold()).strip("-.")
    if not slug:
        raise InvalidInputError(f"namespace {name!r} has no usable characters")
    return slug[:64]


def project_root(start: Path) -> Path:
    """Nearest ancestor holding `.git` (the project), else the directory itself."""
    start = Path(start).expanduser()
    try:
        start = start.resolve()
    except OSError:
        pass
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def namespace_for_dir(directory: str | os.PathLike) -> str:
    """Namespace of a project directory: the slug of its project root's folder name."""
    root = project_root(Path(directory))
    name = root.name or "root"
    try:
        return normalize_namespace(name)
    except InvalidInputError:
        return "root"
