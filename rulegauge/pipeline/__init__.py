"""The retrieval pipeline: `rulegauge run` and its scoring path.

Modules, in pipeline order:

* ``sweep``        the scoring path: every config -> per-question metrics (exact, top-k)
* ``forked``       an ordered map over forked worker processes (the configs whose rows are not stored)
* ``fused_rows``   the `fused` table's rows cut to the stored depth from the scoring kernel, as Arrow
* ``grid_tables``  `metrics` and `fused` tables of a grid (one pass); grid-size limit, fused-row budget
* ``options``      what a run takes and gives (options and result records only)
* ``run_checks``   a run's options checked against its grid, before any folder exists
* ``stages``       named lifecycle stages a product (answering) plugs into: preflight, after_score, at_status
* ``lifecycle``    the one run lifecycle every source goes through (manifest, scoring,
                   fused rows, answering on the engine, status)
* ``retrieval``    the gold-set source: corpus -> arms -> `arm_ranks`
* ``arm_frame``    one arm's results as its `arm_ranks` rows (by corpus row, from columns)
* ``rescore``      the stored-run source (`--from RUN`): copied tables, a new grid
* ``search_service`` the reference search service (`rulegauge serve-search`) over rulegauge's arms
"""

__all__ = ["arm_frame", "dispatch", "forked", "fused_rows", "grid_tables", "lifecycle", "options", "rescore",
           "retrieval", "run_checks", "search_service", "stages", "sweep"]
