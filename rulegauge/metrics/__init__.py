"""Metrics: one metric object and registry, page lists built as metrics need them, statistics.

Modules, in pipeline order:

* ``family``      the metric object: families (facts, needs, computation) and metrics (family + cutoff)
* ``gold``        the gold side of page lists: relevance, requirements, grades, judged pages
* ``page_lists``  the one page-list builder: full fused lists or the fast top-m path
* ``first_relevant`` the first relevant page's exact rank beyond the top-m selection, without a full order
* ``ranking``     page-level ranking metrics, each declared on its computation (hit, recall, nDCG, Judged ...)
* ``info``        what interprets a metric asks: resolve, scope, aggregate; answer metric facts
* ``pages``       fused chunk lists -> the fused and metrics tables
* ``stats``       paired statistics over per-question values: permutation test, BCa bootstrap CI, Holm
* ``multiplicity`` the one multiplicity rule: family, Holm or Benjamini-Hochberg, flags
"""

__all__ = ["family", "first_relevant", "gold", "info", "multiplicity", "page_lists", "pages", "ranking", "stats"]
