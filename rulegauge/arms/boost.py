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
corpus has one game, that game; otherwise the arm returns nothing for the
question and says why (``ArmResult.empty_reason``; counted in the manifest). When
every chunk is a rulebook chunk of one game (an imported collection, a single rulebook)
the priority set is the whole corpus and the arm is a lexical arm ranking by overlap: its
manifest entry then carries a ``warning`` saying so (:attr:`BoostArm.LEXICAL`).

Implementation: a binary term-chunk matrix of idf weights is built once per
corpus (:mod:`rulegauge.arms.termdoc`) and stored as postings
(:class:`rulegauge.arms.postings.Postings`, bm25's eager-scoring kernel): a question's
overlaps are its distinct terms' postings added, in ascending term id, into one array
reused by every question of a call. Each chunk's overlap is the float sum of its shared
terms' idfs in ascending term id (order of first occurrence in the corpus), so it is the
same in every process and equal to the sparse product ``queries @ weights`` the arm
used before (scipy adds in the query row's order, the same one: tested to the bit;
``benchmarks/bench_library.py`` at 300k chunks of 300 games: 86 -> 25 CPU-s for 10k
questions). The first version summed over a Python ``set`` of terms, whose order
follows ``PYTHONHASHSEED``, and its scores moved by ~1e-15 between runs, swapping
near-tied ranks. Hits come back as arrays of corpus rows
(:class:`~rulegauge.arms.results.HitColumns`), no record per hit.
"""


from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext, top_rows
from rulegauge.arms.postings import build_postings
from rulegauge.arms.results import ArmResult, HitColumns
from rulegauge.arms.termdoc import build
from rulegauge.core.errors import ConfigError
from rulegauge.core.text import tokenize
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

NO_GAME = ("questions carry no `game` and the gold set spans several games; give each "
           "question its `game`")
NO_PRIORITY = ("no rulebook of the question's game in the corpus, and no errata matched; check "
               "the question's `game` against the documents' games")


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
        self.matched: dict[str, tuple[str, ...]] = {}
        self.lexical = False  # prepare: every chunk a rulebook chunk of the one game

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        self._corpus = corpus
        # presence only: each chunk's distinct terms, in first-occurrence order
        tdm = build([list(dict.fromkeys(tokenize(c.search_text))) for c in corpus.chunks])
        self._vocab = tdm.vocab
        n = max(tdm.n_docs, 1)
        uniq, inverse = np.unique(tdm.df, return_inverse=True)
        idf = np.array([math.log(n / f) for f in uniq.tolist()])[inverse] if len(uniq) else np.zeros(0)
        # presence x idf, as postings; chunk numbers are chunk-id ranks (postings' order)
        self._postings, row_of = build_postings(tdm.with_data(idf[tdm.entry_terms()]),
                                                corpus.chunk_columns.ids.tolist())
        # corpus row -> chunk number: also each chunk's id rank (ids are unique), top_rows' tie key
        self._number = np.empty(len(row_of), dtype=np.int64)
        self._number[row_of] = np.arange(len(row_of), dtype=np.int64)
        # per chunk: its document (as an index into doc_ids), game and kind
        doc_ids = sorted({c.doc_id for c in corpus.chunks})
        code = {d: i for i, d in enumerate(doc_ids)}
        self._doc_ids = np.asarray(doc_ids, dtype=object)
        self._doc = np.array([code[c.doc_id] for c in corpus.chunks], dtype=np.int64)
        doc = corpus.doc_by_id
        games = np.array([doc[c.doc_id].game for c in corpus.chunks], dtype=object)
        kinds = np.array([doc[c.doc_id].kind for c in corpus.chunks], dtype=object)
        self._rulebook = {g: np.flatnonzero((games == g) & (kinds == "rulebook"))
                          for g in sorted({str(x) for x in games})}
        self._errata = {g: np.flatnonzero((games == g) & (kinds == "errata"))
                        for g in sorted({str(x) for x in games})}
        self._games = sorted({d.game for d in corpus.documents})
        self.lexical = bool(len(kinds)) and len(self._games) == 1 and bool((kinds == "rulebook").all())

    LEXICAL = ("every chunk is in a rulebook of the corpus's one game, so this arm ranks every chunk by "
               "idf overlap with the question: it acts as another lexical arm, not a doc-priority arm, "
               "and fusing it with bm25 counts lexical evidence twice (a collection that is not rulebooks: "
               "leave boost out of the grid)")
    """The manifest's ``warning`` when :attr:`lexical` (printed by ``rulegauge run``)."""

    def _game(self, q: Question) -> str | None:
        if q.game:
            return q.game
        return self._games[0] if len(self._games) == 1 else None

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._corpus is None:
            raise RuntimeError("boost arm: prepare() must run before search()")
        vocab, postings, number = self._vocab, self._postings, self._number
        none = np.zeros(0, dtype=np.int64)
        overlap = np.empty(postings.n_docs)  # by chunk number; reused by every question
        out = []
        for q in questions:
            # distinct terms, ascending term id: the order the sums are taken in
            postings.accumulate(overlap, sorted({vocab[t] for t in tokenize(q.question) if t in vocab}))
            game = self._game(q)
            errata = self._errata.get(game, none) if game is not None else none
            hit = errata[overlap[number[errata]] >= self.match_threshold]
            matched = np.unique(self._doc[hit])
            self.matched[q.question_id] = tuple(str(d) for d in self._doc_ids[matched])
            matched_chunks = errata[np.isin(self._doc[errata], matched)]
            rulebook = self._rulebook.get(game, none) if game is not None else none
            cand = np.concatenate([matched_chunks, rulebook])
            # errata first: lift matched errata above every chunk's overlap (the corpus's
            # highest; read only when some errata matched, the only chunks it moves)
            lift = (overlap.max(initial=0.0) + 1.0) if self.errata_first and len(matched_chunks) else 0.0
            score = np.concatenate([overlap[number[matched_chunks]] + lift, overlap[number[rulebook]] + 0.0])
            rows, top = top_rows(number, cand, score, depth)
            reason = None
            if not len(cand):
                reason = NO_GAME if game is None else NO_PRIORITY
            hits = HitColumns(self._corpus.chunk_columns, rows, np.arange(1, len(rows) + 1, dtype=np.int32),
                              top) if len(rows) else ()
            out.append(ArmResult(q.question_id, self.name, hits, reason))
        return out

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "match_threshold": self.match_threshold,
                "errata_first": self.errata_first,
                "questions_with_matched_errata": sum(1 for v in self.matched.values() if v),
                **({"warning": self.LEXICAL} if self.lexical else {})}
