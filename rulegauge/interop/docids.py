"""The document ids an export writes: a page id, or an imported collection's own id.

A page is exported as its page id ``doc#page``, except a page of a collection document
(``goldset import-beir`` / ``import-trec``: loader format ``collection``, one page per
document of the collection), which is exported as the collection's own document id (its
``_id``), in the run files and in the qrels alike. So a TREC export of a run over an
imported collection is scored on the collection's own qrels (BEIR's
``qrels/test.tsv``, TREC's qrels) by ir_measures, trec_eval or ranx as it is, with no
mapping written by hand (pyserini's BEIR regressions do the same with their runs).

Which documents: the run's manifest names them (``corpus.collection_documents``, recorded
from the loader's ``labels_are_ids``: :func:`rulegauge.store.provenance.inputs_section`);
their ids are the ``page_label`` of the run's ``chunks``. A run made before the manifest
recorded them exports page ids, as it did then. Chunk-level run files keep chunk ids.

Refused before anything is written, each named: a collection id holding whitespace (a
TREC docid is one token) and one id on two pages (two collections sharing ids in one
gold set).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.corpus.records import page_keys
from rulegauge.store.baseline import Side
from rulegauge.store.provenance import COLLECTION_DOCUMENTS


def collection_docids(run: Side) -> dict[str, str]:
    """Page id -> the collection's document id, for every page of a collection document
    of ``run`` (module docstring); empty when the run has none."""
    docs = (run.manifest.get("corpus") or {}).get(COLLECTION_DOCUMENTS) or []
    if not docs or not run.has_table("chunks"):
        return {}
    arrow = getattr(run, "arrow", None)  # a run folder reads three columns, not every chunk's text
    columns = ["doc_id", "page", "page_label"]
    chunks = arrow("chunks", columns).to_pandas() if arrow else run.table("chunks")[columns]
    chunks = chunks[chunks["doc_id"].isin(set(docs))].drop_duplicates(["doc_id", "page"])
    pages = page_keys(chunks["doc_id"].to_numpy(), chunks["page"].to_numpy())
    out = {str(p): str(label) for p, label in zip(pages, chunks["page_label"], strict=True)
           if isinstance(label, str) and label}
    problems = [Problem(f"page {p}", f"its collection id {i!r} holds whitespace, which a TREC docid "
                        "cannot") for p, i in out.items() if any(c.isspace() for c in i)]
    first: dict[str, str] = {}
    for page, docid in sorted(out.items()):
        if docid in first:
            problems.append(Problem(f"page {page}", f"its collection id {docid!r} is also page "
                                    f"{first[docid]}'s: two collections of the gold set share ids"))
        first.setdefault(docid, page)
    if problems:
        raise ValidationError(problems, "cannot export this run under its collection's ids")
    return out


def renamed(ids: pd.Series, docids: Mapping[str, str]) -> pd.Series:
    """``ids`` with every page id of :func:`collection_docids` replaced by its collection id."""
    if not docids:
        return ids
    mapped = ids.map(docids)  # a dict lookup per row, vectorised; NaN where not a collection page
    return mapped.where(mapped.notna(), ids)
