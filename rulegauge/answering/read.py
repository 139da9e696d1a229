"""The answering read: candidate pool -> re-rank -> floors -> the passages answered from.

Algorithm (one question, one fusion config)
-------------------------------------------
1. **Pool**: the config's fused rows in ``fused_rank`` order (decided on exact scores,
   chunk id ascending: :func:`rulegauge.fusion.exact.fused_row_order`; float scores of
   exact ties may differ in the last bit),
   first ``pool`` (80) rows. A foreign hit among them (an id that matches no chunk of the
   corpus, :mod:`rulegauge.corpus.foreign`) takes its place in those rows, as the service
   would read it, but is not a candidate: its text is not in the run.
2. **Re-rank**: the registered re-ranker (:mod:`rulegauge.answering.rerankers`)
   scores the pool; ordering by that score (descending, chunk id ascending) gives
   ``rerank_rank`` 1..P. The first ``final`` (8) are selected, slot ``reranker``.
3. **Floors**, in ``options.floors`` order. A floor yields *demands*, each a set of
   pool chunks that satisfies it plus the chunk to insert otherwise (the
   best-re-ranked of the set). For each demand: if a selected chunk satisfies it,
   the best-re-ranked such chunk becomes *held* (it keeps slot ``reranker``);
   otherwise the demanded chunk replaces the selected chunk with the worst
   ``rerank_rank`` that is not held, and is itself held with slot
   ``floor:<name>``. When every selected chunk is held, the floor's remaining
   demands are dropped.
4. **Read order**: the selected chunks ordered by ``rerank_rank``; ``read_at`` is
   1..n, and is the number the answer cites as ``[n]``.

Registered floors (:data:`FLOORS`)
----------------------------------
* ``base_rulebook``: one slot for a rulebook (kind ``rulebook``) of the
  question's game.
* ``errata``: one slot per *surviving* errata document of the question's game:
  an errata document with a chunk in the pool carried by ``options.errata_arm``
  (``boost``, the arm that forwards the errata the query matched); the slot goes
  to its best-re-ranked such chunk. With ``errata_arm=None`` every pooled errata
  chunk counts as carried. A config without that arm arms no errata floor, as in
  the service, where the floor needs the ids the boost arm forwarded.
* ``per_book``: when the pool spans more than one book of the question's game
  (documents of kind rulebook, expansion or errata), one slot per book.

The question's game is ``Question.game``; when it is None, the game of the
corpus when it holds one game, else the game of the fused #1 passage. A floor
with nothing in the pool to place is not armed and changes nothing. An empty
fused list gives an empty read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rulegauge.answering.rerankers import RERANKERS, Candidate, make_reranker
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import count_problem
from rulegauge.core.ordering import order
from rulegauge.core.registry import Registry
from rulegauge.corpus.foreign import foreign_flags
from rulegauge.corpus.records import Chunk, Document
from rulegauge.fusion.exact import fused_row_order
from rulegauge.goldset.records import Question

BOOK_KINDS = ("rulebook", "expansion", "errata")
RERANKER_SLOT = "reranker"


@dataclass(frozen=True)
class ReadOptions:
    """Pool size, final size, re-ranker name and floors (in the order applied)."""

    pool: int = 80
    final: int = 8
    reranker: str = "fused"
    floors: tuple[str, ...] = ("base_rulebook", "errata", "per_book")
    errata_arm: str | None = "boost"

    def __post_init__(self) -> None:
        problems = []
        for name, value in (("pool", self.pool), ("final", self.final)):
            problem = count_problem("pool", value)
            if problem:  # the pool is read for every question and config
                problems.append(Problem("read options", problem.replace("pool", name, 1)))
        if self.reranker not in RERANKERS:
            problems.append(Problem("read options", f"unknown reranker {self.reranker!r}; "
                                    f"choose one of: {', '.join(RERANKERS.names())}"))
        for f in self.floors:
            if f not in FLOORS:
                problems.append(Problem("read options", f"unknown floor {f!r}; "
                                        f"choose from: {', '.join(FLOORS.names())}"))
        if len(set(self.floors)) != len(self.floors):
            problems.append(Problem("read options", f"floors repeat: {self.floors}"))
        if problems:
            raise ValidationError(problems, "invalid answering read options")

    def describe(self) -> dict[str, object]:
        return {"pool": self.pool, "final": self.final, "reranker": self.reranker,
                "floors": list(self.floors), "errata_arm": self.errata_arm}


@dataclass(frozen=True)
class ReadRow:
    """One passage of the answering read, in read order (``read_at`` = its ``[n]``)."""

    read_at: int
    chunk_id: str
    doc_id: str
    doc_kind: str
    page: int
    heading: str
    fused_rank: int
    fused_score: float
    rerank_rank: int
    rerank_score: float
    carried_by: str
    slot: str


@dataclass(frozen=True)
class Demand:
    """Satisfied when any chunk of ``satisfied_by`` is selected; else insert ``pick``."""

    satisfied_by: frozenset[str]
    pick: str


@dataclass(frozen=True)
class FloorContext:
    game: str | None
    ranked: tuple[Candidate, ...]  # the pool in re-rank order
    errata_arm: str | None = "boost"


Floor = Callable[[FloorContext], tuple[Demand, ...]]
FLOORS: Registry[Floor] = Registry("floor")


def _best_of(cands: Sequence[Candidate]) -> Demand:
    return Demand(frozenset(c.chunk_id for c in cands), cands[0].chunk_id)


@FLOORS.register("base_rulebook")
def base_rulebook_floor(ctx: FloorContext) -> tuple[Demand, ...]:
    """One slot for the rulebook of the question's game."""
    books = [c for c in ctx.ranked if c.doc_kind == "rulebook" and c.game == ctx.game]
    return (_best_of(books),) if books else ()


@FLOORS.register("errata")
def errata_floor(ctx: FloorContext) -> tuple[Demand, ...]:
    """A slot per errata document of the question's game that survived into the pool."""
    by_doc: dict[str, list[Candidate]] = {}
    for c in ctx.ranked:
        carried = ctx.errata_arm is None or ctx.errata_arm in c.carried_by.split("+")
        if c.doc_kind == "errata" and c.game == ctx.game and carried:
            by_doc.setdefault(c.doc_id, []).append(c)
    return tuple(_best_of(cands) for cands in by_doc.values())  # dicts keep re-rank order


@FLOORS.register("per_book")
def per_book_floor(ctx: FloorContext) -> tuple[Demand, ...]:
    """One slot per book when the pool spans several books of the question's game."""
    by_doc: dict[str, list[Candidate]] = {}
    for c in ctx.ranked:
        if c.doc_kind in BOOK_KINDS and c.game == ctx.game:
            by_doc.setdefault(c.doc_id, []).append(c)
    if len(by_doc) < 2:
        return ()
    return tuple(_best_of(cands) for cands in by_doc.values())  # dicts keep re-rank order


def question_game(question: Question, documents: Mapping[str, Document],
                  pool: Sequence[Candidate]) -> str | None:
    """The game the floors serve (see module docstring)."""
    if question.game:
        return question.game
    games = {d.game for d in documents.values()}
    if len(games) == 1:
        return next(iter(games))
    return pool[0].game if pool else None


def _is_null(x: object) -> bool:
    """None, NaN and pandas' NA/NaT (what a nullable rank column holds when unranked)."""
    return x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and x != x)


def carried_by(row: Mapping[str, object], arms: Sequence[str]) -> str:
    """Arms (in config order) whose ``rank_<arm>`` is not null, joined with ``+``."""
    return "+".join(a for a in arms if not _is_null(row.get(f"rank_{a}")))


def build_pool(fused_rows: pd.DataFrame, chunks: Mapping[str, Chunk],
               documents: Mapping[str, Document], size: int,
               arms: Sequence[str] | None = None) -> tuple[Candidate, ...]:
    """The first ``size`` fused rows (fused order) as :class:`Candidate` records."""
    if fused_rows.empty:
        return ()
    if arms is None:
        arms = [c[len("rank_"):] for c in fused_rows.columns if c.startswith("rank_")]
    idx = fused_row_order(fused_rows["fused_rank"].to_numpy(np.int64),
                          fused_rows["chunk_id"].astype(str).to_numpy())[:size]
    idx = idx[~foreign_flags(fused_rows)[idx]]  # in the pool's rows, but no text to read (module docstring)
    missing = sorted({str(fused_rows["chunk_id"].iloc[i]) for i in idx} - set(chunks))
    if missing:
        raise RulegaugeError(f"fused rows name chunks missing from the chunks table: "
                           f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    out = []
    for i in idx:
        row = fused_rows.iloc[i]
        ch = chunks[str(row["chunk_id"])]
        doc = documents.get(ch.doc_id)
        if doc is None:
            raise RulegaugeError(f"chunk {ch.chunk_id} names unknown document {ch.doc_id!r}")
        out.append(Candidate(ch.chunk_id, ch.doc_id, doc.kind, doc.game, ch.page, ch.heading,
                             ch.text, int(row["fused_rank"]), float(row["fused_score"]),
                             carried_by(row, arms)))
    return tuple(out)


def answering_read(question: Question, fused_rows: pd.DataFrame, chunks: Mapping[str, Chunk],
                   documents: Mapping[str, Document], options: ReadOptions | None = None,
                   arms: Sequence[str] | None = None) -> tuple[ReadRow, ...]:
    """The passages the answerer reads for ``question`` (algorithm in the module docstring).

    ``fused_rows`` are the ``fused`` table rows of one question and one config;
    ``arms`` are the config's arms (for ``carried_by``; default: every ``rank_*``
    column); ``options`` default to :class:`ReadOptions` defaults. Inputs are not
    modified.
    """
    options = options or ReadOptions()
    pool = build_pool(fused_rows, chunks, documents, options.pool, arms)
    if not pool:
        return ()
    scores = np.asarray(make_reranker(options.reranker).score(question.question, pool),
                        dtype=np.float64)
    if scores.shape != (len(pool),):
        raise RulegaugeError(f"reranker {options.reranker!r} returned {scores.shape} scores "
                           f"for {len(pool)} candidates")
    idx = order(scores, [c.chunk_id for c in pool])
    ranked = tuple(pool[i] for i in idx)
    rank_of = {c.chunk_id: r + 1 for r, c in enumerate(ranked)}
    score_of = {pool[i].chunk_id: float(scores[i]) for i in range(len(pool))}
    slots = {c.chunk_id: RERANKER_SLOT for c in ranked[: options.final]}
    held: set[str] = set()
    ctx = FloorContext(question_game(question, documents, pool), ranked, options.errata_arm)
    for name in options.floors:
        for demand in FLOORS.get(name)(ctx):
            present = [cid for cid in slots if cid in demand.satisfied_by]
            if present:
                held.add(min(present, key=rank_of.__getitem__))
                continue
            free = [cid for cid in slots if cid not in held]
            if not free:
                break
            del slots[max(free, key=rank_of.__getitem__)]
            slots[demand.pick] = f"floor:{name}"
            held.add(demand.pick)
    by_id = {c.chunk_id: c for c in ranked}
    rows = []
    for n, cid in enumerate(sorted(slots, key=rank_of.__getitem__), start=1):
        c = by_id[cid]
        rows.append(ReadRow(n, cid, c.doc_id, c.doc_kind, c.page, c.heading, c.fused_rank,
                            c.fused_score, rank_of[cid], score_of[cid], c.carried_by, slots[cid]))
    return tuple(rows)


def context_recall(rows: Sequence[ReadRow], question: Question) -> float:
    """Requirements with at least one page in the read / requirements.

    0.0 for a question with no requirement (unanswerable); such questions are
    excluded from context-recall means by the metric's scope.
    """
    if not question.requirements:
        return 0.0
    pages = {(r.doc_id, r.page) for r in rows}
    covered = sum(1 for req in question.requirements
                  if any((ref.doc_id, ref.page) in pages for ref in req))
    return covered / len(question.requirements)
