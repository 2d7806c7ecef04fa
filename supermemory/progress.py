"""Live progress on stderr for long CLI work (seeding, embedding, backfill).

One line redrawn in place on a terminal, a line at every tenth of the work elsewhere, so logs show it moving too.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


def progress_printer(label: str, *, stream: TextIO | None = None, min_total: int = 1,
                     clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """A `progress(done, total)` callback for long CLI work: on a terminal one line redrawn in place
    (count, percent, rate, ETA); elsewhere a line at every tenth, so logs show it moving too.
    Totals under `min_total` stay silent (a short write needs no progress)."""
    started = clock()
    shown = {"step": -1}

    def report(done: int, total: int) -> None:
        out = stream or sys.stderr
        if total < min_total:
            return
        elapsed = max(clock() - started, 1e-9)
        rate = done / elapsed
        eta = (total - done) / rate if rate > 0 else 0.0
        line = f"{label}: {done}/{total} ({done * 100 // max(total, 1)}%, {rate:.1f}/s, ETA {eta:.0f} s)"
        _show_progress(out, line, done, total, shown)
    return report


def _show_progress(out: TextIO, line: str, done: int, total: int, shown: dict) -> None:
    """One progress line: redrawn in place on a terminal, elsewhere written at every tenth of the work."""
    if getattr(out, "isatty", lambda: False)():
        out.write("\r" + line + ("\n" if done >= total else ""))
    else:
        step = done * 10 // max(total, 1)
        if step == shown["step"]:
            return
        shown["step"] = step
        out.write(line + "\n")
    out.flush()


def backfill_progress(*, stream: TextIO | None = None,
                      clock: Callable[[], float] = time.monotonic) -> Callable[[int, int, int, int], None]:
    """A `progress(sessions done, sessions, bytes done, bytes)` callback for `supermemory backfill`:
    sessions, MB and an ETA from the byte rate; redrawn in place on a terminal, every tenth elsewhere."""
    started = clock()
    shown = {"step": -1}

    def report(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
        out = stream or sys.stderr
        if total <= 0:
            return
        elapsed = max(clock() - started, 1e-9)
        rate = done_bytes / elapsed
        eta = (total_bytes - done_bytes) / rate if rate > 0 else 0.0
        line = (f"backfill: {done}/{total} sessions · {done_bytes / 1e6:.1f}/{total_bytes / 1e6:.1f} MB · "
                f"{rate / 1e6:.1f} MB/s · ETA {eta:.0f} s")
        _show_progress(out, line, done, total, shown)
    return report
