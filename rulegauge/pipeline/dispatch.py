"""Which source ``rulegauge run`` takes: a stored run (``--from``) or a gold set.

Kept apart from :mod:`rulegauge.pipeline.lifecycle` so the lifecycle never imports its
sources (they import it): no circle inside the package.
"""

from __future__ import annotations

from functools import partial

from rulegauge.pipeline.lifecycle import execute
from rulegauge.pipeline.options import Progress, RunOptions, RunResult


def run_from(options: RunOptions, progress: Progress | None = None) -> RunResult:
    """``rulegauge run``: the stored-run source when ``options.source_run`` is given (``--from``;
    the corpus, arm and model code are never imported), else the gold-set source."""
    if options.source_run is not None:
        from rulegauge.pipeline.rescore import StoredRunSource  # deferred: no corpus or model code

        return execute(options, StoredRunSource.load, progress)
    from rulegauge.pipeline.retrieval import GoldsetSource  # deferred: corpus, arms, models

    return execute(options, partial(GoldsetSource.load, progress=progress), progress)
