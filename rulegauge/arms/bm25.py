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
:meth:`BM25Arm.prepare` (eager scoring, as bm25s does; :mod:`rulegauge.arms.termdoc` counts
the terms) and stored as postings with chunks numbered in chunk-id order
(:mod:`rulegauge.arms.postings`); each question's scores are its tokens' weights added
one token after another into one array of every chunk, and its exact top ``depth`` is
read from that array without sorting it (:meth:`~rulegauge.arms.postings.Postings.top`);
the hits come back as arrays of corpus rows, ranks and scores
(:class:`~rulegauge.arms.base.HitColumns`), never a Python object per hit. (MaxScore pruning was measured
and dropped: on Zipf-like text the ``depth``-th score is below the summed upper bounds of
a question's common terms, so it pruned little and cost more than it saved.) Every
floating-point step repeats rank-bm25's operations in rank-bm25's order (idf with
``math.log``, its running idf sum in first-occurrence order, the per-token sum in query
order), so scores equal ``BM25Okapi.get_scores`` to the bit and do not depend on hash
order or on which questions share a call.
Preset ``lucene`` (``[arms.bm25] preset = "lucene"``): Lucene's BM25 (Lucene >= 8,
``BM25Similarity``; bm25s's ``method="lucene"``) with Lucene's English analysis
(:func:`rulegauge.arms.analyzers.lucene_english`: possessives, 33 stop words, Porter)
and Anserini's k1 = 0.9, b = 0.4::

    idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))          (always > 0: no floor)
    score(d, q) = sum over query tokens t of
                  idf(t) * f(t,d) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

with ``|d|`` the exact token count after stop words (bm25s's convention; Lucene itself
stores it in one lossy byte) and an empty chunk of length 0. Every weight repeats bm25s's
float64 operations in its order (``math.log`` per df, then ``idf * tfc``), so scores
equal ``bm25s.BM25(method="lucene", dtype="float64")`` on the same tokens to the bit
(``tests/arms/test_bm25_lucene.py``). Omitting the ``(k1 + 1)`` factor scales every score
by one constant and changes no ranking.

Why not rank-bm25 itself: it scores one question at a time with a Python loop over
every chunk per query term (about 1 s per question at 50k chunks on the loaded
2-core machine: ``benchmarks/bench_arms.py``); it stays the reference in the tests.
"""

from __future__ import annotations

import importlib.metadata as md
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.analyzers import Analyzer, lucene_english
from rulegauge.arms.base import ARMS, ArmContext
from rulegauge.arms.postings import Postings, build_postings
from rulegauge.arms.results import ArmResult, HitColumns
from rulegauge.arms.termdoc import TermDocMatrix, build
from rulegauge.core.errors import ConfigError
from rulegauge.core.text import Tokenizer
from rulegauge.corpus.chunk_columns import ChunkColumns
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

IDF_FLOORS = ("epsilon", "rank_bm25")
PRESETS = {"okapi": (1.5, 0.75), "lucene": (0.9, 0.4)}
"""Scoring presets -> their (k1, b) when the grid gives none."""
EMPTY_DOC = "\u2205"
NO_TERM = "no query term occurs in the corpus"
NO_POSITIVE = "no chunk scores above 0 (every matching term has idf <= 0)"


@ARMS.register("bm25")
class BM25Arm:
    """Full-text arm. Params: preset (``okapi``: rank-bm25's BM25Okapi, the default;
    ``lucene``: Lucene's BM25 and English analysis), k1, b (the preset's when not given),
    epsilon and idf_floor (``okapi``), stem (``okapi``: Snowball per language), stemmer
    (``lucene``: porter, english or none)."""

    name: ClassVar[str] = "bm25"

    def __init__(self, k1: float | None = None, b: float | None = None, epsilon: float = 0.25,
                 idf_floor: str = "epsilon", *, stem: bool = False, preset: str = "okapi",
                 stemmer: str = "porter") -> None:
        if preset not in PRESETS:
            raise ConfigError(f"bm25: preset must be one of {', '.join(PRESETS)}, got {preset!r}")
        if idf_floor not in IDF_FLOORS:
            raise ConfigError(f"bm25: idf_floor must be one of {', '.join(IDF_FLOORS)}, got {idf_floor!r}")
        if preset == "lucene" and stem:
            raise ConfigError("bm25: stem is the okapi preset's; preset lucene stems with stemmer "
                              "(porter, english or none)")
        k1 = PRESETS[preset][0] if k1 is None else k1
        b = PRESETS[preset][1] if b is None else b
        if k1 < 0 or not 0 <= b <= 1 or epsilon < 0:
            raise ConfigError(f"bm25: need k1 >= 0, 0 <= b <= 1, epsilon >= 0 (got {k1}, {b}, {epsilon})")
        self.k1, self.b, self.epsilon, self.idf_floor, self.stem = k1, b, epsilon, idf_floor, stem
        self.preset = preset
        self._analyzer: Analyzer | None = lucene_english(stemmer) if preset == "lucene" else None
        self._postings: Postings | None = None
        self._vocab: dict[str, int] = {}
        self._idf = np.zeros(0)
        self._chunks = ChunkColumns.of(())
        self._row = np.zeros(0, dtype=np.int64)  # chunk number (chunk-id order) -> corpus row
        self.floored_terms = 0

    def _tokenizer(self, language: str | None) -> Callable[[str], list[str]]:
        if self._analyzer is not None:
            return self._analyzer  # one analysis whatever the language, as Lucene's
        return Tokenizer(stem_language=language if self.stem else None)

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        lang = {d.doc_id: d.language for d in corpus.documents}
        empty = [] if self._analyzer is not None else [EMPTY_DOC]  # bm25s: an empty chunk has length 0
        docs = [self._tokenizer(lang[c.doc_id])(c.search_text) or empty for c in corpus.chunks]
        self._postings, self._vocab = None, {}
        if not docs:
            return
        tdm = build(docs)
        self._idf = self._idfs(tdm)
        weights = tdm.with_data(self._entry_weights(tdm))
        self._chunks = corpus.chunk_columns
        self._postings, self._row = build_postings(weights, self._chunks.ids.tolist())
        self._vocab = tdm.vocab

    def _idfs(self, tdm: TermDocMatrix) -> np.ndarray:
        """Per-term idf after flooring, in term-id (first-occurrence) order."""
        n, df = tdm.n_docs, tdm.df
        if self.preset == "lucene":  # math.log per distinct df, as bm25s computes it
            uniq, inverse = np.unique(df, return_inverse=True)
            lucene: np.ndarray = np.array([math.log(1 + (n - f + 0.5) / (f + 0.5))
                                           for f in uniq.tolist()])[inverse]
            return lucene
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
        if self.preset == "lucene":  # bm25s's operations in its order: tfc, then idf * tfc
            tfc = tf / (self.k1 * ((1 - self.b) + self.b * dl / avgdl) + tf)
            lucene: np.ndarray = self._idf[tdm.entry_terms()] * tfc
            return lucene
        sat = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * dl / avgdl))
        weights: np.ndarray = self._idf[tdm.entry_terms()] * sat
        return weights

    def idf(self, term: str) -> float:
        """The idf the arm uses for ``term`` (0.0 for a term not in the corpus)."""
        t = self._vocab.get(term)
        return 0.0 if t is None else float(self._idf[t])

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        postings = self._postings
        if postings is None:
            return [ArmResult(q.question_id, self.name, (), "the corpus has no chunks")
                    for q in questions]
        vocab = self._vocab
        tokenizers: dict[str | None, Callable[[str], list[str]]] = {}
        scores = np.empty(postings.n_docs)  # reused by every question of this call
        rows: list[np.ndarray] = []
        values: list[np.ndarray] = []
        found: list[int] = []  # hits per question, -1: no term in the corpus
        for q in questions:
            tok = tokenizers.get(q.language)
            if tok is None:
                tok = tokenizers[q.language] = self._tokenizer(q.language)
            terms = [t for t in map(vocab.get, tok(q.question)) if t is not None]
            if not terms:
                found.append(-1)
                continue
            r, v = postings.top(postings.accumulate(scores, terms), terms, depth)
            if len(r):
                rows.append(r)
                values.append(v)
            found.append(len(r))
        return self._results(questions, rows, values, found)

    def _results(self, questions: Sequence[Question], rows: list[np.ndarray], values: list[np.ndarray],
                 found: list[int]) -> list[ArmResult]:
        """ArmResults with every question's hits as columns over the corpus's chunks
        (:class:`~rulegauge.arms.base.HitColumns`: corpus rows, ranks, scores; slices of arrays
        built once for the call). ``found[i]``: question i's hit count, -1 without a matching
        term; ``rows``/``values``: chunk numbers and scores of the questions with hits, in
        question order."""
        n_hits = [max(n, 0) for n in found]
        corpus_rows, scores, ranks = self._row[:0], np.zeros(0), np.zeros(0, dtype=np.int32)
        if rows:
            corpus_rows, scores = self._row[np.concatenate(rows)], np.concatenate(values)
            starts = np.repeat(np.cumsum([0, *n_hits[:-1]]), n_hits)
            ranks = (np.arange(1, len(scores) + 1) - starts).astype(np.int32)
        out: list[ArmResult] = []
        chunks, at = self._chunks, 0
        for q, n, f in zip(questions, n_hits, found, strict=True):
            if n:
                hits = HitColumns(chunks, corpus_rows[at:at + n], ranks[at:at + n], scores[at:at + n])
                out.append(ArmResult(q.question_id, self.name, hits))
            else:
                out.append(ArmResult(q.question_id, self.name, (), NO_TERM if f < 0 else NO_POSITIVE))
            at += n
        return out

    def describe(self) -> dict[str, Any]:
        if self._analyzer is not None:
            return {"arm": self.name, "implementation": "rulegauge.arms.bm25 on numpy postings",
                    "package": "numpy", "version": md.version("numpy"), "preset": self.preset,
                    "formula": "Lucene BM25 (bm25s method=lucene)", "k1": self.k1, "b": self.b,
                    **self._analyzer.describe(),
                    "dense_rows": 0 if self._postings is None else self._postings.n_dense}
        return {"arm": self.name, "implementation": "rulegauge.arms.bm25 on numpy postings",
                "package": "numpy", "version": md.version("numpy"),
                "formula": "rank-bm25 0.2.2 BM25Okapi",
                "k1": self.k1, "b": self.b, "epsilon": self.epsilon, "idf_floor": self.idf_floor,
                "stem": self.stem, "floored_terms": self.floored_terms,
                "dense_rows": 0 if self._postings is None else self._postings.n_dense}

