"""How many training rows the search phases use, from the run's time limit.

Short runs cannot afford to cross-validate every idea on all rows: with ``--time-limit 120``
Phase 1 has about a dozen seconds. The search therefore trains on a seeded subsample whose size
grows with the time limit, and finalization removes the subsampling block, so the submitted
model is fit on every training row. Long runs (the default hour) keep ``subsample_limit``.
"""

from __future__ import annotations

from events.domain import PipelineConfig

# Rows per second of time limit: 120 s -> 3,600 rows, 10 min -> 18,000, an hour -> the cap.
ROWS_PER_SECOND = 30
MIN_SEARCH_ROWS = 2000


def search_rows(config: PipelineConfig) -> int:
    by_time = max(MIN_SEARCH_ROWS, int(config.time_limit_seconds * ROWS_PER_SECOND))
    return min(int(config.subsample_limit), by_time)
