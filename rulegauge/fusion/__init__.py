"""Rank fusion: the grid file of configs, the fusion methods and the vectorised kernel.

Modules, in pipeline order:

* ``records``   FusionConfig, RunConfig, canonical config ids
* ``grid_check`` typed reading of the grid file (problems collected)
* ``configs``   fusion grid file -> named configs (stable ids), the metric list
* ``planes``    dense (arms x questions x candidates) planes, each arm's lists in rank order
* ``method``    the fusion-method interface and the FUSION_METHODS registry
* ``normalise`` per-list score normalisations (min-max, z-score, sum, l2, ...)
* ``rrf`` ``combsum`` (comb_sum) ``combmnz`` (comb_mnz) ``hybrid`` ``relscore`` ``borda``
  ``isr``: one fusion method per module (docs/fusion.md)
* ``exact``     RRF's fused order on exact rational scores (ties by chunk id)
* ``order``     every other method's exact order
* ``matrix``    RankMatrix: every (question, chunk) with each arm's rank and score
* ``fuse``      one config's fused lists (Fused)
* ``kernel``    dense planes, per-config scores and exact candidate order for the sweep
"""

__all__ = ["borda", "comb_mnz", "comb_sum", "configs", "exact", "fuse", "grid_check", "grid_expand", "hybrid",
           "isr", "kernel", "matrix", "method", "normalise", "order", "planes", "records", "relscore", "rrf"]
