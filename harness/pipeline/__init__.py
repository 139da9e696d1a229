"""The retrieval pipeline: `harness run` and its scoring path.

Modules, in pipeline order:

* ``sweep``        the scoring path: every config -> per-question metrics (exact, top-k)
* ``grid_tables``  `metrics` and `fused` tables of a grid; grid-size limit, fused-row budget
* ``options``      what a run takes and gives (options, result, metric list, scoring step)
* ``retrieval``    `harness run`: gold set -> corpus -> arms -> fusion -> metrics -> run dir
* ``rescore``      `harness run --from RUN`: a new grid over stored arm ranks
* ``search_service`` the reference search service (`harness serve-search`) over the harness's arms
"""

__all__ = ["grid_tables", "options", "rescore", "retrieval", "search_service", "sweep"]
