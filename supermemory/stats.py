"""The one percentile definition (nearest rank) for every p50 / p95 the package reports."""
from __future__ import annotations

import math
from typing import Iterable


def percentile(values: Iterable[float], q: float, *, digits: int | None = None) -> float | None:
    """Nearest-rank percentile: the ceil(q/100 * n)-th smallest value (the smallest for q = 0).

    Always one of the values, never an interpolation, so p50 of an even count is the lower middle.

    :param values: the sample, in any order.
    :param q: the percentile, 0 to 100 (50 for the median, 95 for p95).
    :param digits: round the result to this many decimal places (None: as is).
    :returns: the value as a float, or None when `values` is empty.
    Raises:
        ValueError: `q` is outside 0..100.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, not {q}")
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q * len(ordered) / 100))
    value = float(ordered[rank - 1])
    return round(value, digits) if digits is not None else value
