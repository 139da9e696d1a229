"""Rank fusion: the grid file of configs and the vectorised fusion of stored arm ranks.

Modules, in pipeline order:

* ``configs``  fusion grid file -> named configs (stable ids), the metric list
* ``fuse``     fusion methods registry (weighted RRF), RankMatrix, Fused
"""

__all__ = ["configs", "fuse"]
