"""Ranking metrics: one registry of metric facts, the computations, page lists.

Modules, in pipeline order:

* ``info``     the metric-info registry: direction, scope, aggregate, description, aliases
* ``ranking``  page-level ranking metric computations (hit, recall, P, MRR, nDCG, MAP ...)
* ``pages``    fused chunk lists -> page lists -> the fused and metrics tables
* ``stats``    paired statistics over per-question values: permutation test, BCa bootstrap CI, Holm
"""

__all__ = ["info", "pages", "ranking", "stats"]
