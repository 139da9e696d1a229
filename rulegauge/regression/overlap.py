"""Overlap between two runs without judgments: RBO and Jaccard of each question's top k.

For one config pair, each question both sides have gets the RBO_ext@k (persistence
``p``) and the Jaccard@k of its two fused lists (:mod:`rulegauge.metrics.overlap`): the
chunk ids of the ``fused`` table in ``fused_rank`` order, cut at k, the ids the service
returns. A question nothing was retrieved for has an empty list (two empty lists agree:
1.0). The pair's summary is the median and the mean over the questions, and the
questions that moved most (lowest RBO first). No relevance judgment is read, so the
questions may be unlabelled (a query log: ``unlabelled: true`` in the gold set).

A side must hold its fused lists to depth k for the config: a full run stores the configs
``manifest.fused_rows`` lists, to its ``depth`` (0: whole lists); a baseline keeps the
top :data:`rulegauge.store.baseline.BASELINE_FUSED_TOP` of every list (``baseline.fused_top``;
a baseline saved before it kept only relevant pages and has no overlap: re-save it).
:func:`pair_overlap` raises :class:`OverlapUnavailable` naming the side otherwise.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.overlap import check_overlap_params, jaccard, rbo_ext
from rulegauge.regression.pairing import ConfigPair
from rulegauge.store.baseline import Side

LOWEST = 5  # questions named as the ones that moved most


class OverlapUnavailable(RulegaugeError):
    """A side does not hold the fused lists an overlap needs (config or depth)."""


@dataclass(frozen=True)
class QuestionOverlap:
    """One question: RBO_ext@k and Jaccard@k of its two top-k lists (sizes ``base_n``,
    ``candidate_n`` <= k)."""

    question_id: str
    rbo: float
    jaccard: float
    base_n: int
    candidate_n: int


@dataclass(frozen=True)
class PairOverlap:
    """RBO_ext@``depth`` (persistence ``p``) and Jaccard@``depth`` of one config pair,
    per question (``questions``, id order) and summarised (NaN when no question)."""

    config: ConfigPair
    depth: int
    p: float
    questions: tuple[QuestionOverlap, ...]
    rbo_median: float
    rbo_mean: float
    jaccard_median: float
    jaccard_mean: float
    scope: str = "every question both runs have"

    @property
    def rbo_name(self) -> str:
        return f"RBO(p={self.p:g})@{self.depth}"

    @property
    def jaccard_name(self) -> str:
        return f"Jaccard@{self.depth}"

    @property
    def n(self) -> int:
        return len(self.questions)

    def lowest(self, k: int = LOWEST) -> tuple[QuestionOverlap, ...]:
        """The ``k`` questions with the lowest RBO (then Jaccard, then id)."""
        return tuple(sorted(self.questions, key=lambda q: (q.rbo, q.jaccard, q.question_id))[:k])

    def describe_lowest(self, k: int = LOWEST) -> str:
        """``bw-07 0.31, bw-12 0.55`` (RBO, rounded for people)."""
        return ", ".join(f"{q.question_id} {q.rbo:.3g}" for q in self.lowest(k) if q.rbo < 1.0) or "none"


def stored_depth(side: Side, config: str) -> int | None:
    """The depth to which ``side`` holds the fused list of ``config``: None for whole
    lists, 0 for none (module docstring)."""
    baseline = side.manifest.get("baseline")
    if isinstance(baseline, dict):
        return int(baseline.get("fused_top") or 0)
    if not side.has_table("fused"):
        return 0
    rows = side.manifest.get("fused_rows")
    if isinstance(rows, dict) and rows.get("configs") is not None:
        if config not in rows["configs"]:
            return 0
        return int(rows.get("depth") or 0) or None
    return None  # a run that does not say: the lists it holds are whole


def _need(side: Side, which: str, config: str, depth: int) -> None:
    have = stored_depth(side, config)
    if have is None or have >= depth:
        return
    if isinstance(side.manifest.get("baseline"), dict):
        fix = ("it was saved before baselines kept the top of every list: re-save it "
               "(rulegauge baseline save RUN NAME --overwrite)" if have == 0 else
               f"a baseline keeps the top {have} of every list")
    else:
        fix = ("rulegauge run stores fused lists of the configs --fused-config names, to "
               "--fused-depth" if have == 0 else f"its fused lists were cut at {have} (--fused-depth)")
    raise OverlapUnavailable(f"overlap@{depth}: the {which} {side.run_id} holds no fused list of "
                             f"{config} to depth {depth}; {fix}")


class FusedLists:
    """A side's ``fused`` table read once (the columns lists need), for many config pairs."""

    def __init__(self, side: Side) -> None:
        self.side = side
        self._frame: pd.DataFrame | None = None

        self._by_config: dict[str, pd.DataFrame] = {}

    def rows(self, config: str) -> pd.DataFrame | None:
        """The config's rows (question, chunk, rank) in question and rank order; None when
        the side holds none."""
        if self._frame is None:
            fused = self.side.table("fused")
            self._frame = fused[["question_id", "config_id", "chunk_id", "fused_rank"]].astype(
                {"question_id": str, "config_id": str, "chunk_id": str}).sort_values(
                ["config_id", "question_id", "fused_rank"], kind="stable")
            self._by_config = {str(c): g for c, g in self._frame.groupby("config_id", sort=False)}
        return self._by_config.get(config)


def top_lists(side: Side, config: str, depth: int, questions: Collection[str],
              fused_lists: FusedLists | None = None) -> dict[str, list[str]]:
    """Question -> the chunk ids of its top ``depth`` in fused order (every question of
    ``questions``; an empty list where nothing was retrieved)."""
    mine = (fused_lists or FusedLists(side)).rows(config)
    if mine is None:  # never an empty list per question: that would read as agreement
        raise OverlapUnavailable(f"run {side.run_id} holds no fused row of config {config}")
    rows = mine[mine["fused_rank"] <= depth]
    lists: dict[str, list[str]] = {str(q): [] for q in questions}
    for qid, chunk in zip(rows["question_id"], rows["chunk_id"], strict=True):
        if qid in lists:
            lists[qid].append(chunk)
    return lists


def shared_questions(base: Side, candidate: Side) -> list[str]:
    """The question ids both sides have (their ``questions`` tables, else ``metrics``)."""
    def ids(side: Side) -> set[str]:
        name = "questions" if side.has_table("questions") else "metrics"
        return set(side.table(name)["question_id"].astype(str))

    return sorted(ids(base) & ids(candidate))


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else float("nan")


def pair_overlap(base: Side, candidate: Side, pair: ConfigPair, depth: int = 10, p: float = 0.9,
                 questions: Sequence[str] | None = None, scope: str = "",
                 lists: tuple[FusedLists, FusedLists] | None = None) -> PairOverlap:
    """RBO and Jaccard of ``pair`` between the two sides over ``questions`` (default: every
    question both have); raises :class:`OverlapUnavailable` when a side lacks the lists.
    ``lists``: the two sides' fused tables already read (several pairs of one comparison)."""
    check_overlap_params(p, depth)
    _need(base, "base", pair.base, depth)
    _need(candidate, "candidate", pair.candidate, depth)
    qids = sorted(questions) if questions is not None else shared_questions(base, candidate)
    fb, fc = lists or (FusedLists(base), FusedLists(candidate))
    lb = top_lists(base, pair.base, depth, qids, fb)
    lc = top_lists(candidate, pair.candidate, depth, qids, fc)
    per_q = tuple(QuestionOverlap(q, rbo_ext(lb[q], lc[q], p, depth), jaccard(lb[q], lc[q], depth),
                                  len(lb[q]), len(lc[q])) for q in qids)
    rbo, jac = [q.rbo for q in per_q], [q.jaccard for q in per_q]
    return PairOverlap(pair, depth, p, per_q, _median(rbo), _mean(rbo), _median(jac), _mean(jac),
                       scope or "every question both runs have")


def comparison_overlap(base: Side, candidate: Side, pairs: Sequence[ConfigPair], depth: int = 10,
                       p: float = 0.9) -> tuple[tuple[PairOverlap, ...], tuple[str, ...]]:
    """(the overlap of every pair whose lists both sides hold, a note per pair left out)."""
    out, notes = [], []
    fb = FusedLists(base)
    one = getattr(base, "path", None) is not None and getattr(base, "path", None) == getattr(
        candidate, "path", None)  # one run on both sides (compare --reference): read it once
    fc = fb if one else FusedLists(candidate)
    qids = shared_questions(base, candidate)
    for pair in pairs:
        try:
            out.append(pair_overlap(base, candidate, pair, depth, p, qids, lists=(fb, fc)))
        except OverlapUnavailable as exc:
            notes.append(f"{pair.label}: {exc}")
    return tuple(out), tuple(notes)


def overlap_frame(overlaps: Sequence[PairOverlap]) -> pd.DataFrame:
    """One row per config pair: n, median and mean RBO and Jaccard, the lowest questions."""
    return pd.DataFrame([{
        "config": o.config.label, "n": o.n, f"median {o.rbo_name}": o.rbo_median,
        f"mean {o.rbo_name}": o.rbo_mean, f"median {o.jaccard_name}": o.jaccard_median,
        f"mean {o.jaccard_name}": o.jaccard_mean, "lowest RBO": o.describe_lowest()}
        for o in overlaps])
