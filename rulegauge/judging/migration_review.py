"""The review file of a gold-set migration: flagged labels as a pool the judging page serves.

``rulegauge goldset migrate`` holds out every question with a flagged label (unmatched,
ambiguous, changed). Its review file is a pool file (:mod:`rulegauge.judging.poolfile`):
per held-out question, the old edition's page(s) as its gold pages (``doc#page (old
edition)``, for reference) and each flagged label's candidate pages of the new edition as
the pages to judge, found by ``alignment`` (rank = the candidate's order: best
containment first). The pool names the *source* gold set (its SHA-256), so judgments made
on it (``rulegauge judge REVIEW``) are checked against it, and ``rulegauge goldset migrate
... --review JUDGMENTS`` carries each reviewed label to its candidates graded 2 or more
(:mod:`rulegauge.goldset.migrate`).
"""

from __future__ import annotations

from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.migrate import Migration
from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion

OLD_EDITION = " (old edition)"


def review_pool(m: Migration) -> Pool:
    """The pool of ``m``'s flagged labels (module docstring); empty when none is flagged."""
    docs = {d.doc_id: d for d in m.documents}
    questions, pages = [], []
    by_q: dict[str, list[str]] = {}
    for label in m.flagged:
        by_q.setdefault(label.question_id, [])
        for c in label.candidates:
            if c not in by_q[label.question_id]:
                by_q[label.question_id].append(c)
    for qid, cands in by_q.items():
        q = m.source.question_by_id[qid]
        gold = []
        for label in (x for x in m.flagged if x.question_id == qid):
            doc, page = split_page_key(label.old)
            gold.append((label.old + OLD_EDITION, 1, docs[doc].old_texts[page - 1]))
        questions.append(PoolQuestion(qid, q.question, q.language, tuple(gold)))
        for rank, c in enumerate(cands, start=1):
            doc, page = split_page_key(c)
            pages.append(PoolPage(qid, c, (FoundBy("migrate", "alignment", "alignment", rank),),
                                  docs[doc].new_texts[page - 1]))
    return Pool(m.source.name, m.source.path, m.source.sha256, ("migrate",), 0, (),
                tuple(questions), tuple(pages))
