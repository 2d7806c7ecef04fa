"""Parse the time forms users type (`7d`, `last_week`, `2026-11-30`) and format timestamps."""
from __future__ import annotations

import datetime as dt
import re

from supermemory.errors import InvalidInputError

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|h|d|w|mo|y)\s*(?:ago)?\s*$", re.I)
_UNIT_SECONDS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}
_NAMED_DAYS = {"today": 0, "yesterday": 1, "last_week": 7, "last-week": 7, "last_month": 30,
               "last-month": 30, "last_year": 365, "last-year": 365}


def parse_when(value: str | float | int | None, now: float) -> float | None:
    """A point in time as epoch seconds, from ISO dates/times or relative forms like `7d`.

    Raises:
        InvalidInputError: the value is none of the accepted forms.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        raise InvalidInputError(f"not a time: {value!r}")
    text = value.strip().lower()
    if text in _NAMED_DAYS:
        midnight = dt.datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
        return (midnight - dt.timedelta(days=_NAMED_DAYS[text])).timestamp()
    match = _RELATIVE.match(text)
    if match:
        return now - float(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInputError(
            f"cannot read time {value!r}: use an ISO date (2026-11-30), or 7d / 24h / 2w / last_week") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed.timestamp()


def iso(ts: float | None, *, exact: bool = False) -> str | None:
    """Epoch seconds → ISO 8601 UTC with seconds precision, or to the microsecond when `exact` (an export: an import
    gives the times back as they were, and a busy store's writes of one second keep their order); None stays None."""
    if ts is None:
        return None
    moment = dt.datetime.fromtimestamp(ts, tz=dt.timezone.utc)
    return moment.isoformat(timespec="microseconds" if exact and moment.microsecond else "seconds").replace("+00:00", "Z")


def from_iso(text: str | None) -> float | None:
    """ISO 8601 → epoch seconds (None stays None)."""
    if text in (None, ""):
        return None
    return dt.datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
