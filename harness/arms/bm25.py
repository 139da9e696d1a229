"""The ``bm25`` arm: Okapi BM25 over chunks, on a sparse term-document matrix.

Scores follow Robertson & Zaragoza (2009) with the formulas of rank-bm25 0.2.2's
``BM25Okapi`` (the reference the tests compare against)::

    idf(t) = ln(N - n_t + 0.5) - ln(n_t + 0.5)
    score(d, q) = sum over query tokens t of
                  idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

A query token that occurs twice counts twice, as in rank-bm25. An empty chunk
counts as one token ``"∅"`` (rank-bm25 cannot take an empty document).

The idf of a term found in more than half of the chunks is negative, and exactly
zero in exactly half: on a 7-page rulebook the game's central nouns ("policy",
"president") fall there. rank-bm25 replaces negative idfs with
``epsilon * mean(idf)`` but leaves the zeros. We floor *every* idf <= 0 to
``epsilon * mean(|ln((N - n_t + 0.5) / (n_t + 0.5))|)`` (``idf_floor = "epsilon"``,
the default), so a common term still counts a little, never more than a rarer one
and never against a chunk; ``idf_floor = "rank_bm25"`` keeps the library's
behaviour for comparison. Only chunks with a positive score are returned (a
full-text arm returns matches).

Implementation: the per-(term, chunk) weights are computed once in
:meth:`BM25Arm.prepare` (eager scoring, as bm25s does; :mod:`harness.arms.termdoc`);
a batch of questions is scored by gathering its terms' weight rows and summing them
per chunk in one ``np.bincount`` (:func:`harness.arms.termdoc.gathered_scores`); a
question's candidates are the chunks at or above a lower bound of its ``depth``-th
score (:meth:`BM25Arm._candidates`), cut exactly by :func:`harness.arms.base.top_hits`.
(MaxScore pruning, reading only the rarer terms' postings, was measured and dropped: in
numpy its per-question work cost more than it saved, 1.27 against 1.09 CPU-ms per
question at 50k chunks.) Every floating-point step
repeats rank-bm25's operations in rank-bm25's order (idf with ``math.log``, its
running idf sum in first-occurrence order, the per-token sum in query order), so
scores equal ``BM25Okapi.get_scores`` to the bit and do not depend on hash order.
Why not rank-bm25 itself: it scores one question at a time with a Python loop over
every chunk per query term (about 1 s per question at 50k chunks on the loaded
2-core machine, 100x the sparse path: ``benchmarks/bench_arms.py``); it stays the
reference in the tests.
"""

from __future__ import annotations

import importlib.metadata as md
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from harness.arms.base import ARMS, ArmContext, ArmResult, top_hits
from harness.arms.termdoc import TermDocMatrix, batches, build, gathered_scores, query_matrix
from harness.core.errors import ConfigError
from harness.core.ordering import id_ranks
from harness.core.text import Tokenizer
from harness.corpus.records import Corpus
from harness.goldset.records import Question

IDF_FLOORS = ("epsilon", "rank_bm25")
EMPTY_DOC = "\u2205"
NO_TERM = "no query term occurs in the corpus"
NO_POSITIVE = "no chunk scores above 0 (every matching term has idf <= 0)"


@ARMS.register("bm25")
class BM25Arm:
    """Full-text arm. Params: k1, b, epsilon, idf_floor, stem (Snowball per language)."""

    name: ClassVar[str] = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 idf_floor: str = "epsilon", *, stem: bool = False) -> None:
        if idf_floor not in IDF_FLOORS:
            raise ConfigError(f"bm25: idf_floor must be one of {', '.join(IDF_FLOORS)}, got {idf_floor!r}")
        if k1 < 0 or not 0 <= b <= 1 or epsilon < 0:
            raise ConfigError(f"bm25: need k1 >= 0, 0 <= b <= 1, epsilon >= 0 (got {k1}, {b}, {epsilon})")
        self.k1, self.b, self.epsilon, self.idf_floor, self.stem = k1, b, epsilon, idf_floor, stem
        self._tdm: TermDocMatrix | None = None
        self._weights: Any = None
        self._idf = np.zeros(0)
        self._ids: list[str] = []
        self._id_rank = np.zeros(0, dtype=np.int64)
        self.floored_terms = 0

    def _tokenizer(self, language: str | None) -> Tokenizer:
        return Tokenizer(stem_language=language if self.stem else None)

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        lang = {d.doc_id: d.language for d in corpus.documents}
        docs = [self._tokenizer(lang[c.doc_id])(c.text) or [EMPTY_DOC] for c in corpus.chunks]
        self._ids = [c.chunk_id for c in corpus.chunks]
        self._id_rank = id_ranks(self._ids) if self._ids else np.zeros(0, dtype=np.int64)
        if not docs:
            self._tdm = None
            return
        tdm = build(docs)
        self._idf = self._idfs(tdm)
        self._weights = tdm.with_data(self._entry_weights(tdm))
        self._tdm = tdm

    def _idfs(self, tdm: TermDocMatrix) -> np.ndarray:
        """Per-term idf after flooring, in term-id (first-occurrence) order."""
        n, df = tdm.n_docs, tdm.df
        # math.log per distinct df, as rank-bm25 computes it (np.log may differ in the last bit)
        uniq, inverse = np.unique(df, return_inverse=True)
        raw = np.array([math.log(n - f + 0.5) - math.log(f + 0.5) for f in uniq.tolist()])[inverse]
        idf = raw.copy()
        if self.idf_floor == "rank_bm25":
            total = 0.0
            for v in raw.tolist():  # rank-bm25's running sum, first-occurrence order
                total += v
            eps = self.epsilon * (total / len(raw))
            idf[raw < 0] = eps
            self.floored_terms = int((raw < 0).sum())
        else:
            orig = np.log((n - df + 0.5) / (df + 0.5))
            floor = self.epsilon * float(np.mean(np.abs(orig)))
            low = orig <= 0
            idf[low] = floor
            self.floored_terms = int(low.sum())
        return idf

    def _entry_weights(self, tdm: TermDocMatrix) -> np.ndarray:
        """idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl)) per entry."""
        avgdl = int(tdm.doc_len.sum()) / tdm.n_docs  # int / int, as rank-bm25
        tf = np.asarray(tdm.counts.data, dtype=np.float64)
        dl = tdm.doc_len[tdm.entry_docs()]
        sat = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * dl / avgdl))
        weights: np.ndarray = self._idf[tdm.entry_terms()] * sat
        return weights

    def idf(self, term: str) -> float:
        """The idf the arm uses for ``term`` (0.0 for a term not in the corpus)."""
        if self._tdm is None or term not in self._tdm.vocab:
            return 0.0
        return float(self._idf[self._tdm.vocab[term]])

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        tdm = self._tdm
        if tdm is None:
            return [ArmResult(q.question_id, self.name, (), "the corpus has no chunks")
                    for q in questions]
        tokens = [self._tokenizer(q.language)(q.question) for q in questions]
        queries = query_matrix(tdm.vocab, tokens, per_occurrence=True)
        df = tdm.df
        out = []
        for rows in batches(queries, self._weights):
            dense = gathered_scores(queries, self._weights, rows)
            for row, scores in zip(rows, dense, strict=True):
                terms = queries.indices[queries.indptr[row]:queries.indptr[row + 1]]
                cand = self._candidates(scores, terms, df, depth)
                hits = top_hits(self._ids, self._id_rank, cand, scores[cand], depth)
                reason = None
                if not hits:
                    reason = NO_TERM if len(terms) == 0 else NO_POSITIVE
                out.append(ArmResult(questions[row].question_id, self.name, hits, reason))
        return out

    def _candidates(self, scores: np.ndarray, terms: np.ndarray, df: np.ndarray, depth: int) -> np.ndarray:
        """Chunks that can be in the top ``depth``: positive and at least the ``depth``-th
        largest score among the chunks of one query term (the rarest with ``depth`` chunks;
        its chunks are distinct, so ``depth`` chunks score that much), a lower bound of the
        ``depth``-th score over all chunks."""
        if depth <= 0 or len(terms) == 0:
            return np.zeros(0, dtype=np.int64)
        counts = df[terms]
        enough = counts >= depth
        if enough.any():
            t = int(terms[enough][np.argmin(counts[enough])])
            lo, hi = self._weights.indptr[t], self._weights.indptr[t + 1]
            posting = scores[self._weights.indices[lo:hi]]
            kth = float(np.partition(posting, len(posting) - depth)[len(posting) - depth])
            if kth > 0:
                return np.flatnonzero(scores >= kth)
        return np.flatnonzero(scores > 0)

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "implementation": "harness.arms.bm25 on scipy.sparse",
                "package": "scipy", "version": md.version("scipy"),
                "formula": "rank-bm25 0.2.2 BM25Okapi",
                "k1": self.k1, "b": self.b, "epsilon": self.epsilon, "idf_floor": self.idf_floor,
                "stem": self.stem, "floored_terms": self.floored_terms}

