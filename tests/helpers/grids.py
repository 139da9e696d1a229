"""Small grids the tests run on the sample."""

from __future__ import annotations

LEXICAL_GRID = """[defaults]
depth = 100
[grid]
method = "rrf"
k = [50, 60, 70]
arms = [["bm25", "boost"], ["bm25"], ["boost"]]
"""
"""Nine lexical configs (k 50/60/70 x three arm sets, no model): the service config's
neighbours along k and along the arms, for the power and one-rule tests."""
LEXICAL_SERVICE = "rrf_k60_bm25+boost"
"""The config of :data:`LEXICAL_GRID` the service would run (the centre of its neighbours)."""
