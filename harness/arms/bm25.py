"""The ``bm25`` arm: Okapi BM25 over chunks (rank-bm25's ``BM25Okapi``).

Scores follow Robertson & Zaragoza (2009) as implemented by rank-bm25 0.2.2::

    idf(t) = ln((N - n_t + 0.5) / (n_t + 0.5))
    score(d, q) = sum_t idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

The idf of a term found in more than half of the chunks is negative, and exactly
zero in exactly half: on a 7-page rulebook the game's central nouns ("policy",
"president") fall there. rank-bm25 replaces negative idfs with
``epsilon * mean(idf)`` but leaves the zeros. We floor *every* idf <= 0 to
``epsilon * mean(|idf|)`` (``idf_floor = "epsilon"``, the default), so a common
term still counts a little, never more than a rarer one and never against a
chunk; ``idf_floor = "rank_bm25"`` keeps the library's behaviour for comparison.
Only chunks with a positive score are returned (a full-text arm returns matches).
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from rank_bm25 import BM25Okapi

from harness.arms.base import ARMS, ArmContext, ArmResult, hits_from_scores
from harness.core.errors import ConfigError
from harness.core.text import Tokenizer
from harness.corpus.records import Corpus
from harness.goldset.records import Question

IDF_FLOORS = ("epsilon", "rank_bm25")


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
        self._bm25: Any = None
        self._ids: list[str] = []
        self.floored_terms = 0

    def _tokenizer(self, language: str | None) -> Tokenizer:
        return Tokenizer(stem_language=language if self.stem else None)

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        lang = {d.doc_id: d.language for d in corpus.documents}
        docs = [self._tokenizer(lang[c.doc_id])(c.text) or ["\u2205"] for c in corpus.chunks]
        self._ids = [c.chunk_id for c in corpus.chunks]
        if not docs:
            self._bm25 = None
            return
        bm = BM25Okapi(docs, k1=self.k1, b=self.b, epsilon=self.epsilon)
        if self.idf_floor == "epsilon":
            n = bm.corpus_size
            df = _doc_freqs(bm)
            orig = {t: float(np.log((n - f + 0.5) / (f + 0.5))) for t, f in df.items()}
            floor = self.epsilon * float(np.mean(np.abs(list(orig.values()))))
            low = [t for t, v in orig.items() if v <= 0]
            for t in low:
                bm.idf[t] = floor
            self.floored_terms = len(low)
        self._bm25 = bm

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        out = []
        for q in questions:
            if self._bm25 is None:
                out.append(ArmResult(q.question_id, self.name, ()))
                continue
            scores = self._bm25.get_scores(self._tokenizer(q.language)(q.question))
            out.append(ArmResult(q.question_id, self.name,
                                 hits_from_scores(self._ids, scores, depth, keep=scores > 0)))
        return out

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "package": "rank-bm25", "version": md.version("rank-bm25"),
                "k1": self.k1, "b": self.b, "epsilon": self.epsilon, "idf_floor": self.idf_floor,
                "stem": self.stem, "floored_terms": self.floored_terms}


def _doc_freqs(bm: Any) -> dict[str, int]:
    df: dict[str, int] = {}
    for freqs in bm.doc_freqs:
        for t in freqs:
            df[t] = df.get(t, 0) + 1
    return df
