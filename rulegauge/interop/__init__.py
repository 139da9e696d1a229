"""Formats of other IR tools: TREC run files and qrels, in and out.

Modules, in pipeline order:

* ``trec``    TREC run / qrels files, read and written
* ``export``  a run exported (question set, padding, requirements qrels); ranx / ir_measures adapters
* ``qrels``   a gold set from a qrels file plus a questions file
* ``judgment_qrels`` judgments and gold sets as graded qrels, and qrels as judgments
* ``tracking`` a run's configs logged to MLflow (one MLflow run per config)
"""

__all__ = ["export", "judgment_qrels", "qrels", "tracking", "trec"]
