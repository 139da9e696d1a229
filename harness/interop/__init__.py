"""Formats of other IR tools: TREC run files and qrels, in and out.

Modules, in pipeline order:

* ``trec``    TREC run / qrels files, read and written
* ``export``  a run exported (question set, padding, requirements qrels); ranx / ir_measures adapters
* ``qrels``   a gold set from a qrels file plus a questions file
"""

__all__ = ["export", "qrels", "trec"]
