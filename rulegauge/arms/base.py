"""The arm interface: a search arm ranks corpus chunks for each question.

Arms register by name in :data:`ARMS`; a run instantiates each arm once with its
parameters from the config file, calls :meth:`Arm.prepare` with the corpus and
:meth:`Arm.search` with every question, and stores the hits in ``arm_ranks``.
Hits are ordered score descending, then chunk id ascending
(:func:`rulegauge.core.ordering.order`), ranks start at 1, and at most ``depth`` hits are
returned. An arm that has nothing for a question returns an empty tuple.

Preflight. An arm may also have ``preflight(corpus, questions, context) -> str | None``
(``context`` an :class:`ArmContext` whose ``run_dir`` is None): a
quick check that what it needs is there (an endpoint that answers, a database that
takes the connection, a named table), None when ready, else a message saying what
failed. :func:`preflight_arms` builds every arm of a run and calls it, before any
run folder exists; every problem is reported together (exit 2), naming the arm.
Arms without the method (``bm25``, ``dense``, ``boost``) are ready by construction, once the
extra an arm class declares (``extra = "dense"``: :mod:`rulegauge.core.extras`) is installed:
that is checked first, so a missing extra is exit 2 with its ``pip install`` before any folder.

Search time. The run times each arm's ``search`` (the ``search_latency`` table,
:mod:`rulegauge.metrics.latency`) and shares it evenly by the questions; an arm that times
each question's own call (``http``) says so with ``call_latencies() -> {question id: ms}``
after ``search`` (NaN: unknown), and those figures are kept instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from rulegauge.arms.results import ArmResult, Hit
from rulegauge.core import plugins
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.extras import require
from rulegauge.core.ordering import grouped_order, order
from rulegauge.core.registry import Registry, kind_check
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question


@dataclass(frozen=True)
class ArmContext:
    """What an arm may need besides the corpus: a cache folder, a progress hook, the
    engine its heavy work runs on (a name in :data:`rulegauge.core.engines.ENGINES`), the
    run's folder (None during preflight: no folder exists yet) for arms that journal
    their calls, the arm's name in the config, and every arm's parameters of the run's
    config (by config name), for arms that read another arm's replies (``http-ranks``)."""

    cache_dir: Path
    progress: Any = None  # callable(description, total) -> context manager yielding advance(n)
    engine: str = "local"
    run_dir: Path | None = None
    name: str = ""
    arm_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@runtime_checkable
class Arm(Protocol):
    name: ClassVar[str]

    def prepare(self, corpus: Corpus, context: ArmContext) -> None: ...

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]: ...

    def describe(self) -> dict[str, Any]:
        """Parameters, package and model versions, for the manifest."""
        ...


ARMS: Registry[type] = Registry("arm", group="rulegauge.arms", door=plugins.DOOR, accepts=kind_check(
    "an arm class", methods=("prepare", "search", "describe"), classes=True, ref="docs/plugins.md"))


def make_arm(name: str, params: Mapping[str, Any]) -> Any:
    """An instance of the arm named ``name`` in a config: ``kind`` (default the name)
    picks the class, the other parameters go to its constructor."""
    kw = dict(params)
    kind = str(kw.pop("kind", name))  # [arms.prod_fulltext] kind = "external"
    return ARMS.get(kind)(**kw)


def _preflight_one(name: str, params: Mapping[str, Any], corpus: Corpus,
                   questions: Sequence[Question], context: ArmContext) -> str | None:
    kind = str(params.get("kind", name))
    extra = getattr(ARMS.get(kind), "extra", None)  # declared on the arm class (core/extras)
    if extra is not None:
        require(extra, f"the {kind} arm")
    arm = make_arm(name, params)
    try:
        check = getattr(arm, "preflight", None)
        return check(corpus, questions, context) if callable(check) else None
    finally:
        close = getattr(arm, "close", None)
        if callable(close):
            close()


def preflight_arms(arms: Sequence[str], corpus: Corpus, questions: Sequence[Question],
                   context: ArmContext) -> None:
    """Build every arm named in ``arms`` (parameters from ``context.arm_params``) and run
    its ``preflight``; raise one :class:`ValidationError` naming each arm that is not
    ready (module docstring). Arms failing with the same message (arms that read another
    arm's replies) are reported once, the others named after it."""
    found: dict[str, list[str]] = {}  # message -> arms, in config order
    for name in arms:
        params = context.arm_params.get(name, {})
        try:  # a plug-in's own exception is a message naming it (core/plugins.guarded), as a RulegaugeError is
            with plugins.guarded("rulegauge.arms", str(params.get("kind", name)), f"as arm {name} (preflight)"):
                message = _preflight_one(name, params, corpus, questions, replace(context, name=name))
        except RulegaugeError as exc:
            message = str(exc)
        if message:
            found.setdefault(message, []).append(f"{name} ({params.get('kind', name)})")
    problems = [Problem(f"arm {names[0]}", message + (f" (the same for arm(s) {', '.join(names[1:])})"
                                                       if len(names) > 1 else ""))
                for message, names in found.items()]
    if problems:
        raise ValidationError(problems, "arm preflight failed; nothing was written")


def hits_from_scores(chunk_ids: Sequence[str], scores: np.ndarray, depth: int,
                     keep: np.ndarray | None = None) -> tuple[Hit, ...]:
    """Rank ``chunk_ids`` by ``scores`` (desc, then id asc) and keep the top ``depth``.

    ``keep`` is an optional boolean mask of eligible chunks (others never appear).
    """
    ids = np.asarray(chunk_ids, dtype=object)
    sc = np.asarray(scores, dtype=np.float64)
    if keep is not None:
        ids, sc = ids[keep], sc[keep]
    idx = order(sc, ids)[:depth]
    return tuple(Hit(str(ids[i]), r + 1, float(sc[i])) for r, i in enumerate(idx))


def top_rows(id_rank: np.ndarray, candidates: np.ndarray, scores: np.ndarray,
             depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``(chunk indices, scores)`` of the top ``depth`` candidates by score (desc, then
    chunk id asc), as :func:`hits_from_scores` orders them.

    ``candidates`` are chunk indices and ``scores`` their scores (aligned); ``id_rank`` is
    :func:`rulegauge.core.ordering.id_ranks` of the chunk ids (computed once per corpus). The
    ``depth`` best are found with ``argpartition`` and only they, plus every candidate tied
    with the last of them, are ordered exactly (:func:`rulegauge.core.ordering.grouped_order`),
    so the cost grows with the number of candidates, never with a sort of the corpus. NaN
    scores sort last.
    """
    cand = np.asarray(candidates, dtype=np.int64)
    sc = np.asarray(scores, dtype=np.float64)
    if len(cand) != len(sc):
        raise ValueError(f"candidates ({len(cand)}) and scores ({len(sc)}) differ in length")
    if depth <= 0 or len(cand) == 0:
        return cand[:0], sc[:0]
    if len(cand) > depth:
        key = np.where(np.isnan(sc), -np.inf, sc)
        kth = key[np.argpartition(-key, depth - 1)[depth - 1]]
        tied_or_better = key >= kth  # every tie at the cut goes to the exact order
        cand, sc = cand[tied_or_better], sc[tied_or_better]
    idx = grouped_order(np.zeros(len(cand), dtype=np.int64), sc, id_rank[cand])[:depth]
    return cand[idx], sc[idx]


def empty_counts(results: Sequence[ArmResult]) -> dict[str, Any]:
    """Manifest entry: questions with no hits, and how many of them per known reason.

    ``{"questions": n, "empty_questions": e, "empty_reasons": {reason: count}}``;
    reasons sorted by text; an empty result without a reason counts under none.
    """
    reasons: dict[str, int] = {}
    empty = 0
    for r in results:
        if not r.n_hits:
            empty += 1
            if r.empty_reason:
                reasons[r.empty_reason] = reasons.get(r.empty_reason, 0) + 1
    return {"questions": len(results), "empty_questions": empty,
            "empty_reasons": dict(sorted(reasons.items()))}


def empty_warning(arm: str, info: dict[str, Any]) -> str | None:
    """A warning when ``arm`` returned nothing for more than half its questions.

    ``info`` is the arm's manifest entry (:func:`empty_counts` keys). The message
    gives the count and the known reasons, most frequent first.
    """
    n, e = int(info.get("questions", 0)), int(info.get("empty_questions", 0))
    if n == 0 or 2 * e <= n:
        return None
    reasons = sorted(info.get("empty_reasons", {}).items(), key=lambda kv: (-kv[1], kv[0]))
    why = "; ".join(f"{count} question{'s' if count != 1 else ''}: {text}" for text, count in reasons) \
        or "reason not known"
    return (f"arm {arm} returned nothing for {e} of {n} questions: {why}. "
            f"For those questions every config fusing {arm} equals the config without it.")
