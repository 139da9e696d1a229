"""Reference copies of the lexical arms as they were before the sparse rewrite.

``ReferenceBM25`` is the rank-bm25 ``BM25Okapi`` arm (both ``idf_floor`` modes) and
``ReferenceBoost`` the per-chunk Python loop of the first boost arm, kept verbatim
in behaviour so the tests can prove the sparse arms rank the same. Not library code:
the boost reference sums idf over a Python set (order follows ``PYTHONHASHSEED``),
which is exactly what the library no longer does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rulegauge.arms.base import hits_from_scores
from rulegauge.arms.results import ArmResult
from rulegauge.core.text import Tokenizer, tokenize
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question


class ReferenceBM25:
    """The bm25 arm on rank-bm25 (``get_scores`` per question)."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 idf_floor: str = "epsilon", stem: bool = False) -> None:
        self.k1, self.b, self.epsilon, self.idf_floor, self.stem = k1, b, epsilon, idf_floor, stem
        self.bm25 = None
        self.ids: list[str] = []
        self.floored_terms = 0

    def _tokenizer(self, language: str | None) -> Tokenizer:
        return Tokenizer(stem_language=language if self.stem else None)

    def prepare(self, corpus: Corpus) -> None:
        from rank_bm25 import BM25Okapi

        lang = {d.doc_id: d.language for d in corpus.documents}
        docs = [self._tokenizer(lang[c.doc_id])(c.text) or ["\u2205"] for c in corpus.chunks]
        self.ids = [c.chunk_id for c in corpus.chunks]
        if not docs:
            return
        bm = BM25Okapi(docs, k1=self.k1, b=self.b, epsilon=self.epsilon)
        if self.idf_floor == "epsilon":
            n = bm.corpus_size
            df: dict[str, int] = {}
            for freqs in bm.doc_freqs:
                for t in freqs:
                    df[t] = df.get(t, 0) + 1
            orig = {t: float(np.log((n - f + 0.5) / (f + 0.5))) for t, f in df.items()}
            floor = self.epsilon * float(np.mean(np.abs(list(orig.values()))))
            low = [t for t, v in orig.items() if v <= 0]
            for t in low:
                bm.idf[t] = floor
            self.floored_terms = len(low)
        self.bm25 = bm

    def scores(self, question: Question) -> np.ndarray:
        return self.bm25.get_scores(self._tokenizer(question.language)(question.question))

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        out = []
        for q in questions:
            if self.bm25 is None:
                out.append(ArmResult(q.question_id, self.name, ()))
                continue
            scores = self.scores(q)
            out.append(ArmResult(q.question_id, self.name,
                                 hits_from_scores(self.ids, scores, depth, keep=scores > 0)))
        return out


class ReferenceBoost:
    """The first boost arm: idf overlap summed over a Python set, a loop over every chunk."""

    name = "boost"

    def __init__(self, match_threshold: float = 4.0, errata_first: bool = True) -> None:
        self.match_threshold = match_threshold
        self.errata_first = errata_first
        self.matched: dict[str, tuple[str, ...]] = {}

    def prepare(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.tokens = [set(tokenize(c.text)) for c in corpus.chunks]
        df: dict[str, int] = {}
        for toks in self.tokens:
            for t in toks:
                df[t] = df.get(t, 0) + 1
        n = max(len(self.tokens), 1)
        self.idf = {t: math.log(n / f) for t, f in df.items()}

    def _game(self, q: Question) -> str | None:
        if q.game:
            return q.game
        games = {d.game for d in self.corpus.documents}
        return games.pop() if len(games) == 1 else None

    def overlap(self, question: Question) -> np.ndarray:
        qt = set(tokenize(question.question))
        return np.array([sum(self.idf[t] for t in qt & toks) for toks in self.tokens])

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        corpus = self.corpus
        kinds = np.array([corpus.doc_by_id[c.doc_id].kind for c in corpus.chunks], dtype=object)
        games = np.array([corpus.doc_by_id[c.doc_id].game for c in corpus.chunks], dtype=object)
        docs = np.array([c.doc_id for c in corpus.chunks], dtype=object)
        ids = [c.chunk_id for c in corpus.chunks]
        out = []
        for q in questions:
            overlap = self.overlap(q)
            game = self._game(q)
            in_game = games == game
            errata = in_game & (kinds == "errata")
            matched_docs = sorted({str(d) for d in docs[errata & (overlap >= self.match_threshold)]})
            self.matched[q.question_id] = tuple(matched_docs)
            is_matched = np.isin(docs, matched_docs)
            keep = (in_game & (kinds == "rulebook")) | is_matched
            lift = (overlap.max(initial=0.0) + 1.0) if self.errata_first else 0.0
            score = overlap + np.where(is_matched, lift, 0.0)
            out.append(ArmResult(q.question_id, self.name, hits_from_scores(ids, score, depth, keep)))
        return out


def outputs_across_hash_seeds(script: str, seeds: Sequence[str] = ("1", "2")) -> list[list[str]]:
    """The whitespace-split stdout of ``script`` (``{repo}`` filled in) run by a fresh
    Python per ``PYTHONHASHSEED`` in ``seeds``, for the lexical arms' determinism tests."""
    import os
    import subprocess
    import sys

    from tests.helpers.common import REPO

    outputs = []
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script.format(repo=str(REPO))], env=env,
                             capture_output=True, text=True, check=True, timeout=300)
        outputs.append(out.stdout.split())
    return outputs
