"""The ``boost`` arm: the service's doc-priority arm.

For a question about game G it ranks only chunks of *priority documents*:

1. errata documents of G that the query matched, then
2. the base rulebook(s) of G (documents of kind ``rulebook``).

An errata document is *matched* when some chunk of it shares query terms whose
summed idf (``ln(N / df)`` over all chunks, default tokenizer) reaches
``match_threshold`` (default 4.0: about two uncommon terms). Unmatched errata,
expansions, FAQs and community texts are never carried by this arm.

Order: matched errata chunks first (the service lets errata supersede the
rulebook), then rulebook chunks; within each group by the same idf-weighted
overlap with the query, descending, then chunk id ascending. Every chunk of a
priority document is ranked (overlap 0 included) up to the depth, which is why
on a small rulebook nearly every rulebook chunk gets this arm's vote, as in
production. The question's game is ``Question.game``; when it is unset and the
corpus has one game, that game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from harness.arms.base import ARMS, ArmContext, ArmResult, hits_from_scores
from harness.core.errors import ConfigError
from harness.core.text import tokenize
from harness.corpus.records import Corpus
from harness.goldset.records import Question


@ARMS.register("boost")
class BoostArm:
    """Doc-priority arm. Params: match_threshold, errata_first."""

    name: ClassVar[str] = "boost"

    def __init__(self, match_threshold: float = 4.0, *, errata_first: bool = True) -> None:
        if match_threshold < 0:
            raise ConfigError(f"boost: match_threshold must be >= 0, got {match_threshold}")
        self.match_threshold = match_threshold
        self.errata_first = errata_first
        self._corpus: Corpus | None = None
        self._idf: dict[str, float] = {}
        self._tokens: list[set[str]] = []
        self.matched: dict[str, tuple[str, ...]] = {}

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        self._corpus = corpus
        self._tokens = [set(tokenize(c.text)) for c in corpus.chunks]
        df: dict[str, int] = {}
        for toks in self._tokens:
            for t in toks:
                df[t] = df.get(t, 0) + 1
        n = max(len(self._tokens), 1)
        self._idf = {t: math.log(n / f) for t, f in df.items()}

    @staticmethod
    def _game(q: Question, corpus: Corpus) -> str | None:
        if q.game:
            return q.game
        games = {d.game for d in corpus.documents}
        return games.pop() if len(games) == 1 else None

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._corpus is None:
            raise RuntimeError("boost arm: prepare() must run before search()")
        corpus = self._corpus
        kinds = np.array([corpus.doc_by_id[c.doc_id].kind for c in corpus.chunks], dtype=object)
        games = np.array([corpus.doc_by_id[c.doc_id].game for c in corpus.chunks], dtype=object)
        docs = np.array([c.doc_id for c in corpus.chunks], dtype=object)
        ids = [c.chunk_id for c in corpus.chunks]
        out = []
        for q in questions:
            qt = set(tokenize(q.question))
            overlap = np.array([sum(self._idf[t] for t in qt & toks) for toks in self._tokens])
            game = self._game(q, corpus)
            in_game = games == game
            errata = in_game & (kinds == "errata")
            matched_docs = sorted({str(d) for d in docs[errata & (overlap >= self.match_threshold)]})
            self.matched[q.question_id] = tuple(matched_docs)
            is_matched = np.isin(docs, matched_docs)
            keep = (in_game & (kinds == "rulebook")) | is_matched
            # errata first: lift matched errata above every rulebook chunk's overlap
            lift = (overlap.max(initial=0.0) + 1.0) if self.errata_first else 0.0
            score = overlap + np.where(is_matched, lift, 0.0)
            out.append(ArmResult(q.question_id, self.name, hits_from_scores(ids, score, depth, keep)))
        return out

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "match_threshold": self.match_threshold,
                "errata_first": self.errata_first,
                "questions_with_matched_errata": sum(1 for v in self.matched.values() if v)}
