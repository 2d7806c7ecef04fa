"""The config file, read and validated into a `Config`; the data dir and namespace names come from `project_names`.

Configuration flows one way: environment and config file → `Config` → constructor kwargs.
Nothing below `Config` reads the environment.
"""
from __future__ import annotations

import copy
import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from supermemory.errors import ConfigError
from supermemory.jsonl import not_utf8
from supermemory.project_names import (  # noqa: F401  (re-exported: the names every module imports from here)
    ALL_NAMESPACES, DB_FILE, GLOBAL_NAMESPACE, data_dir, claim_for_write, hashed_namespace, looks_like_path,
    main_worktree, namespace_for_dir, normalize_namespace, path_from_file_uri, project_namespace, project_root)
from supermemory.settings import (DEFAULTS, SETTINGS, as_sentence, checked, coerce_value, deep_merge, sanitised, show_value,
                                  unknown_setting, validate_settings, without_retired)


KINDS = ("fact", "decision", "preference", "task", "gotcha", "note", "session")
TASK_STATUSES = ("open", "done", "dropped")
RELATIONS = ("refines", "contradicts", "depends-on", "supersedes", "related")

# Every tunable number lives here; the config file overrides any of them by dotted key.

@dataclass(frozen=True)
class Config:
    """Resolved settings for one process: paths plus the merged settings tree."""

    home: Path
    settings: dict = field(default_factory=lambda: copy.deepcopy(DEFAULTS))
    model_dir_override: Path | None = None
    explicit_namespace: str | None = None
    project_dir: Path | None = None
    problems: tuple = ()      # config file problems a lenient load worked around (their keys use defaults)

    @property
    def db_path(self) -> Path:
        return self.home / DB_FILE

    @property
    def config_path(self) -> Path:
        return self.home / "config.json"

    @property
    def model_dir(self) -> Path:
        return self.model_dir_override or self.home / "models" / "bge-small-en-v1.5"

    def get(self, dotted: str) -> Any:
        """Read a setting by dotted key, e.g. `ranking.temperature`; its default lives only in DEFAULTS.

        Raises:
            KeyError: no such setting (a typo in code, not a user error: user files are validated on load).
        """
        for tree in (self.settings, DEFAULTS):
            node: Any = tree
            for part in dotted.split("."):
                if not isinstance(node, dict) or part not in node:
                    break
                node = node[part]
            else:
                return node
        raise KeyError(f"unknown setting {dotted!r}")

    def section(self, name: str) -> dict:
        """A copy of one settings section, every key present (defaults from DEFAULTS)."""
        return deep_merge(DEFAULTS.get(name, {}), self.settings.get(name, {}))

    def default_namespace(self, *, record: bool = False) -> str:
        """The namespace used when the caller gives none, only looked up: reading must never claim a name, or
        a `stats` in /tmp would take `tmp` from the project that writes there first (`record` True claims it,
        as `claim_namespace` does at a write)."""
        if self.explicit_namespace:
            return self._pinned_namespace()
        return namespace_for_dir(self.project_dir or Path.cwd(), home=self.home, record=record)

    def _pinned_namespace(self) -> str:
        """SUPERMEMORY_NAMESPACE read as `--namespace` is: a path names a known project's root or is refused
        (ConfigError), never made a namespace (fresh-user run fu30 D3: `/tmp/x/projB` wrote to `tmp-x-projb`)."""
        value = self.explicit_namespace or ""
        if not looks_like_path(value):
            return normalize_namespace(value, allow_all=True)
        found, exact = project_namespace(value, home=self.home, project_dir=self.project_dir,
                                         current=namespace_for_dir(self.project_dir or Path.cwd(), home=self.home))
        if found is not None and exact:
            return found
        raise ConfigError(f"SUPERMEMORY_NAMESPACE={value.strip()!r}: namespaces are names, not paths, and this is not "
                          f"the root folder of a project this store knows" + (f"; did you mean {found!r}?" if found else ""))

    def claim_namespace(self, current: str) -> str:
        """The default namespace a write goes to, its claim recorded: a name is claimed by the first write under
        it, so the next project with the same folder name gets a hashed name of its own.

        :param current: the default namespace a look gave earlier (when the store opened). Another root may have
            claimed that name since: then this project's own hashed name is the answer, never the other's. A
            `current` this project does not derive (a namespace the caller named) is kept, and nothing claimed.
        """
        if self.explicit_namespace:
            return current
        return claim_for_write(self.project_dir or Path.cwd(), current, home=self.home)


def read_config_file(path: Path) -> dict:
    """The settings tree the user wrote in `path` (empty when there is no file), not yet validated.

    Raises:
        ConfigError: the file is unreadable, not JSON, or not a JSON object.
    """
    if not path.exists():
        return {}
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"config file {path}:{line}: {not_utf8(raw, exc)}") from None
    try:
        user = json.loads(text or "{}")
    except ValueError as exc:
        raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"config file {path} is not valid JSON: nested too deeply") from None
    if not isinstance(user, dict):
        raise ConfigError(f"config file {path} must hold a JSON object, not {show_value(user)}")
    return user


def load_config(env: Mapping[str, str] | None = None, *, home: Path | None = None,
                cwd: str | os.PathLike | None = None, strict: bool = True) -> Config:
    """Build the process Config from the environment and `<home>/config.json`.

    :param env: environment mapping (default `os.environ`).
    :param home: data dir override (default from `SUPERMEMORY_HOME`).
    :param cwd: project directory override (hooks pass the payload's `cwd`).
    :param strict: refuse a config file with problems (the CLI); False: every bad setting keeps
        its default and the problems are listed in `Config.problems` (hooks, the MCP server, doctor).
    Raises:
        ConfigError: (strict only) the config file is not valid JSON, or holds an unknown key, a
            value of the wrong type, out of range or outside its choices.
    """
    env = os.environ if env is None else env
    home = Path(home) if home else data_dir(env)
    path = home / "config.json"
    notes: list[str] = []
    try:
        user = read_config_file(path)
    except ConfigError as exc:
        if strict:
            raise
        user, notes = {}, [str(exc)]
    user, retired = without_retired(user)
    notes += [f"config file {path}: {note}" for note in retired]
    problems = validate_settings(user)
    if problems and strict:
        listed = (as_sentence(str(problems[0])) if len(problems) == 1 else f"{len(problems)} problems: "
                  + " ".join(f"({n}) {as_sentence(str(p))}" for n, p in enumerate(problems, 1)))
        raise ConfigError(f"config file {path}: {listed} Fix: edit the file, or set a valid value with "
                          "`supermemory config --set KEY=VALUE`")
    notes += [f"config file {path}: {problem}" for problem in problems]
    settings = sanitised(user, problems)
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
        problems=tuple(notes),
    )


def set_setting(config: Config, dotted: str, value: str) -> dict:
    """Persist one `key=value` into the config file and return the new user-level tree.

    The value is refused, and the file left as it was, when the key is unknown or the value does
    not fit it; problems elsewhere in the file do not block fixing this key.

    :param dotted: a setting (`recall.default_limit`) or a section (`ranking.weights`, value a JSON object).
    :param value: the text after `=`; JSON when it parses as JSON, else a string.
    Raises:
        ConfigError: unknown key, a value of the wrong type / range / choice, or a file that is not JSON.
    """
    dotted = dotted.strip()
    unknown = unknown_setting(dotted)
    if unknown:
        raise ConfigError(as_sentence(unknown) + " The config file was not changed")
    path = config.config_path
    user = read_config_file(path)
    parts = dotted.split(".")
    cursor = user
    for part in parts[:-1]:
        if not isinstance(cursor.get(part), dict):
            cursor[part] = {}
        cursor = cursor[part]
    cursor[parts[-1]] = coerce_value(value)
    refused = [p for p in validate_settings(user)
               if any(key == dotted or key.startswith(dotted + ".") for key in p.keys)]
    if refused:
        raise ConfigError(" ".join(as_sentence(str(p)) for p in refused) + " The config file was not changed")
    if dotted in SETTINGS:
        cursor[parts[-1]] = checked(dotted, cursor[parts[-1]])
    write_config_file(path, user)
    return user


def write_config_file(path: Path, user: dict) -> None:
    """Replace the config file with `user` in one step: a write that fails (a read-only file, a full
    disk) leaves the old file whole. The file keeps its mode, and a symlink keeps pointing at it.

    Raises:
        ConfigError: the file cannot be written (the message says it was not changed).
    """
    target = Path(os.path.realpath(path))
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        mode = target.stat().st_mode & 0o7777 if target.exists() else None
        try:
            with open(temp, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(user, indent=2, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, target)
        finally:
            if temp.exists():
                temp.unlink()
    except OSError as exc:
        raise ConfigError(f"cannot write config file {path}: {exc.strerror or exc}; it was not changed") from None
