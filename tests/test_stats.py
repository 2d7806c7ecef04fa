"""The one percentile definition: nearest rank, never interpolated."""
from __future__ import annotations

import pytest

from supermemory.stats import percentile


def test_percentile_is_the_nearest_rank_of_the_search_log_latencies():
    latencies = [rank + 0.1234 for rank in range(500, 0, -1)]       # 500.1234 … 1.1234 ms, unsorted
    assert percentile(latencies, 50, digits=3) == 250.123
    assert percentile(latencies, 95, digits=3) == 475.123
    assert percentile(latencies, 95) == 475.1234


@pytest.mark.parametrize("values, q, expected", [
    ([3.0, 1.0, 2.0], 50, 2.0),
    ([4, 1, 3, 2], 50, 2.0),                 # the lower middle of an even count, not 2.5
    ([1, 2, 3, 4, 5], 95, 5.0),              # ceil(4.75) = 5
    ([float(i) for i in range(1, 16)], 95, 15.0),   # ceil(14.25) = 15
    ([float(i) for i in range(1, 21)], 95, 19.0),   # exactly 19: no float noise pushes it to 20
    ([7, 8, 9], 0, 7.0),
    ([7, 8, 9], 100, 9.0),
    ([42], 95, 42.0),
])
def test_percentile_picks_the_ceil_rank_value(values, q, expected):
    got = percentile(values, q)
    assert got == expected and isinstance(got, float)


def test_percentile_of_nothing_is_none_and_q_outside_0_100_is_refused():
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    with pytest.raises(ValueError):
        percentile([1.0], -1)
