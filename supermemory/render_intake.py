"""The text views of `backfill` and `import-rules`, the commands that take in what is already on disk.

`backfill` reads past sessions, `import-rules` the CLAUDE.md / AGENTS.md files; only the CLI shows these views.
"""
from __future__ import annotations


def render_backfill(result: dict) -> str:
    """The backfill summary: one row per project (found / captured / updated / unchanged / skipped
    and why), folders that no longer exist, unreadable files, lines skipped, the command to run."""
    dry = result.get("dry_run")
    head = ("project", "found", "new" if dry else "captured", "grown" if dry else "updated",
            "up to date" if dry else "unchanged", "skipped", "MB")
    rows = [head] + [(r["namespace"], str(r["found"]), str(r["captured"]), str(r["updated"]), str(r["unchanged"]),
                      str(r["skipped"]), f"{r['bytes'] / 1e6:.1f}") for r in result["projects"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows] if result["projects"] else []   # no header over an empty table
    lines += _selection_notes(result.get("selection") or {}, result["projects"])
    for r in result["projects"]:
        for reason, n in sorted(r["reasons"].items()):
            lines.append(f"  {r['namespace']}: {n} skipped: {reason}")
    for moved in result.get("missing_folders", []):
        lines.append(f"folder gone, filed under '{moved['namespace']}' by its name: {', '.join(moved['paths'])}")
    for item in result.get("unreadable", []):
        lines.append(f"skipped {item['path']}: {item['reason']}")
    counts = result.get("lines") or {}
    odd = [f"{counts[k]} {label}" for k, label in (("malformed", "malformed lines"), ("too_long", "over-long lines"),
                                                   ("unknown_type", "lines of record types not read"),
                                                   ("partial_tail", "files ending in an unfinished line"),
                                                   ("private_open", "sessions read only up to a <private> tag never "
                                                                    "closed (close it with </private>)"))
           if counts.get(k)]
    if odd:
        lines.append("skipped: " + ", ".join(odd))
    total = (f"{result['sessions']} sessions in {result['files']} files ({result['bytes'] / 1e6:.1f} MB)")
    if dry:
        lines.append(f"dry run: {total}; {result['captured']} new, {result['updated']} grown would be captured."
                     + (" Run `supermemory backfill` to capture them." if result["captured"] + result["updated"] else ""))
    else:
        lines.append(f"{total}: {result['captured']} captured, {result['updated']} updated, "
                     f"{result['unchanged']} unchanged, {result['skipped']} skipped in {result['seconds']:.1f} s")
    return "\n".join(lines)


def _selection_notes(sel: dict, projects: list) -> list[str]:
    """Why a backfill found what it found, so an empty table never stands alone: no transcript matched the project
    (or its folder does not exist), none was active since the date, or none is on disk where it looked."""
    notes = []
    if sel.get("project"):
        where = f"the project {sel['project']} (namespace '{sel['project_namespace']}')"
        if not sel.get("project_matched"):
            notes.append(f"no transcript matched {where}: no Claude Code or Codex session on disk ran in it")
        elif not sel.get("project_exists"):
            notes.append(f"note: the folder {sel['project']} does not exist; its {sel['project_matched']} sessions on "
                         f"disk are still taken, filed under '{sel['project_namespace']}'")
    elif not sel.get("on_disk", 1) and not projects:
        looked = " and ".join(sel.get("roots") or []) or "no folder (none of the default ones exists)"
        notes.append(f"no Claude Code or Codex transcript found (looked in {looked})")
    if sel.get("since") and not sel.get("since_matched") and (sel.get("project_matched") or sel.get("on_disk")):
        notes.append(f"no session active since {sel['since']} (its last timestamp, or its file's modification "
                     "time when it has none)")
    return notes


def render_import_rules(result: dict, *, errors: bool = True) -> str:
    """`supermemory import-rules` as text: per file its namespace and rules created / changed / unchanged / removed;
    a dry run says so first and words the counts as what a real run would do, so it cannot pass for one.

    :param errors: list the files that could not be read (the CLI reports them on stderr instead).
    """
    dry = result.get("dry_run")
    lines = []
    if dry and result["files"]:
        todo = result["created"] + result["changed"] + result["removed"]
        lines.append(f"dry run: would add {result['created']}, change {result['changed']}, remove {result['removed']} "
                     f"({result['unchanged']} unchanged); nothing written"
                     + (". Run it again without --dry-run to import them." if todo else "."))
    for f in result["files"]:
        if f.get("error"):
            if errors:
                lines.append(f"error: {f['error']}")   # the message names the file
            continue
        long_note = f", {f['long_paragraphs']} long paragraphs left out" if f["long_paragraphs"] else ""
        counts = (f"would add {f['created']}, change {f['changed']}, remove {f['removed']}; {f['unchanged']} unchanged"
                  if dry else f"{f['created']} new, {f['changed']} changed, {f['unchanged']} unchanged, "
                              f"{f['removed']} removed")
        lines.append(f"{f['path']} → {f['namespace']}: {f['rules']} rules ({counts}{long_note})")
    for m in result.get("missing", []):
        lines.append(f"{m['path']}: {m['reason']}")
    return "\n".join(lines) or ("" if result["files"] else "no CLAUDE.md or AGENTS.md found")
