"""The retrieval pipeline: `harness run` and fast metric sweeps.

Modules, in pipeline order:

* ``retrieval``  `harness run`: gold set -> corpus -> arms -> fusion -> metrics -> run dir
* ``sweep``      metric-only sweeps over large config grids (exact, top-k)
"""

__all__ = ["retrieval", "sweep"]
