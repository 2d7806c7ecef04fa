"""Shell-command analysis: argv unwrapping, the program a command runs, files it reads, files a patch touches."""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

from supermemory.transcripts.digest import _collapse

_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "ksh"}
_SHELL_FLAGS = {"-c", "-lc", "-cl", "-ic", "-ilc", "-lic"}
_WRAPPERS = {"sudo", "time", "env", "nice", "nohup", "command", "exec"}
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pnpm", "exec"), ("hatch", "run"), ("pdm", "run")}
_MULTI = {
    "npm", "yarn", "pnpm", "bun", "deno", "cargo", "go", "make", "git", "docker", "kubectl",
    "dotnet", "mvn", "gradle", "./gradlew", "npx", "bunx", "just", "task", "tox", "nox",
    "rake", "bundle", "mix", "swift", "zig", "terraform", "helm", "gh",
}
_READERS = {"cat", "head", "tail", "nl", "less", "more", "bat"}
_PATHISH_RE = re.compile(r"^[\w.~/@+-][\w.~/@+-]*$")


def _command_string(raw: Any) -> str | None:
    """A shell command from a string or an argv list (unwrapping ``bash -lc X``)."""
    if isinstance(raw, str):
        return raw.strip() or None
    if isinstance(raw, list) and raw and all(isinstance(x, str) for x in raw):
        prog = os.path.basename(raw[0])
        if prog in _SHELLS and len(raw) >= 3 and raw[1] in _SHELL_FLAGS:
            return " ".join(raw[2:]).strip() or None
        try:
            return shlex.join(raw).strip() or None
        except (TypeError, ValueError):
            return None
    return None


def _command_key(cmd: str) -> str:
    """The 'program' a command runs, so a later success of the same program can
    resolve an earlier failure (``cd x && python -m pytest -q`` → ``pytest``)."""
    segments = re.split(r"&&|\|\||;|\n", cmd)
    words: list[str] = []
    for seg in segments:
        seg = seg.split("|", 1)[0]
        toks = seg.split()
        while toks and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[0]):
            toks.pop(0)
        if not toks or toks[0] in ("cd", "pushd", "popd", "export", "source", ".", "set", "unset", "echo"):
            continue
        words = toks
        break
    if not words:
        return _collapse(cmd).lower()[:60]
    changed = True
    while changed and words:
        changed = False
        if words[0] in _WRAPPERS:
            words = words[1:]
            changed = True
        elif words[0] == "timeout" and len(words) > 1:
            words = words[2:] if re.match(r"^\d", words[1]) else words[1:]
            changed = True
        elif len(words) > 1 and (words[0], words[1]) in _RUNNERS:
            words = words[2:]
            changed = True
        elif len(words) > 2 and re.match(r"^(python|python3(\.\d+)?|py)$", os.path.basename(words[0])) and words[1] == "-m":
            words = words[2:]
            changed = True
    if not words:
        return _collapse(cmd).lower()[:60]
    prog = os.path.basename(words[0]) if words[0] != "./gradlew" else words[0]
    if prog in _MULTI and len(words) > 1 and not words[1].startswith("-"):
        return f"{prog} {words[1]}".lower()
    return prog.lower()


# A successful run of the step on the left necessarily ran the steps on the right (the same tool, whatever the
# project): `cargo test` compiles the crate as `cargo build` does, which type-checks it as `cargo check` does; `cargo
# clippy` runs `cargo check`; `go test` compiles the packages it tests as `go build` does. So its success clears their
# failures. Only relations that hold by the tool's definition belong here: `npm test` need not run `npm run build`,
# `dotnet test --no-build` builds nothing, and `go test` runs only part of `go vet`.
_COVERS = {
    "cargo test": ("cargo build", "cargo check"),
    "cargo build": ("cargo check",),
    "cargo clippy": ("cargo check",),
    "go test": ("go build",),
}


def covered_keys(key: str) -> tuple[str, ...]:
    """The program keys (`_command_key`) whose step a successful run of `key` necessarily re-ran (`_COVERS`)."""
    return _COVERS.get(key, ())


def shell_tokens(cmd: str) -> list[str] | None:
    """A shell command's words and operators (`&&`, `;`, `|`, parentheses as tokens of their own), or None when it is
    too long to be a command line (2000 characters) or does not parse (an unclosed quote)."""
    if len(cmd) > 2000:
        return None
    try:
        lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def _read_paths(cmd: str) -> list[str]:
    """Files a simple read-only command shows (cat/head/tail/nl/sed -n …)."""
    tokens = None if "*** Begin Patch" in cmd else shell_tokens(cmd)
    if tokens is None:
        return []
    out: list[str] = []
    segment: list[str] = []
    for tok in tokens + [";"]:
        if tok and all(c in "();<>|&" for c in tok):
            if tok in ("<", ">", ">>", "2>", "&>"):
                segment.append("\0redirect")
                continue
            out.extend(_segment_reads(segment))
            segment = []
        else:
            segment.append(tok)
    return out


def _segment_reads(tokens: list[str]) -> list[str]:
    clean: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok == "\0redirect":
            skip = True
            continue
        clean.append(tok)
    if not clean:
        return []
    prog = os.path.basename(clean[0])
    args = clean[1:]
    if prog == "sed":
        if "-n" not in args or any(a.startswith("-i") or a == "--in-place" for a in args):
            return []
        rest = [a for a in args if not a.startswith("-")]
        args = rest[1:]  # drop the sed script
    elif prog not in _READERS:
        return []
    paths = []
    for a in args:
        if a.startswith("-") or a.isdigit() or a in (".", ".."):
            continue
        if _PATHISH_RE.match(a) and ("/" in a or "." in a):
            paths.append(a)
    return paths


_PATCH_HEADER_RE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def _patch_files(patch: Any) -> list[str]:
    if not isinstance(patch, str):
        return []
    return [m.group(1) or m.group(2) for m in _PATCH_HEADER_RE.finditer(patch)]
