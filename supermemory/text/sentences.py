"""Where a sentence ends: one reading for summaries, windows and the statements the supersession rules compare."""
from __future__ import annotations

import re

# The full stop of an abbreviation that runs on inside a sentence ("e.g.", "i.e.", "vs.", "cf.", "incl.", "approx.")
# ends none (fresh-user run fu36 D7: a summary "… with the crate name as scope, e.g."); put right after a full stop.
RUNS_ON = "".join(rf"(?<!\b{a})" for a in (r"[eE]\.g\.", r"[iI]\.e\.", r"[vV]s\.", r"[cC]f\.", r"[iI]ncl\.",
                                            r"[aA]pprox\."))
# Sentence ends, English and Chinese alike (summaries, two-sentence windows): '；' (like ';') joins clauses of one
# sentence, so a Chinese summary keeps the clause after it as an English one keeps the clause after ';'.
SENTENCE_END = re.compile(rf"(?<=[.!?]){RUNS_ON}\s+|(?<=[。！？])|\n+")
# Statement ends (`text.traits.statements`, `text.revisions`): sentences and the clauses ';' and '；' join.
STATEMENT_END = re.compile(rf"[!?;\n。！？；]|\.{RUNS_ON}(?:\s|$)")
