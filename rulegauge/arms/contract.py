"""The arm contract: what an arm's results must be, checked where they enter a run.

``search(questions, depth)`` returns at most one :class:`~rulegauge.arms.results.ArmResult`
per question asked (none for a question it was not asked), and each result's hits are

* ranked 1..n in list order, without gaps or repeats (rank 0 means "not ranked" in the
  fusion planes: a hit ranked 0 would vanish from every fused list); an arm of order rule
  ``observed`` may skip and repeat ranks, never go below 1 or down;
* at most ``depth`` of them (the depth asked);
* distinct chunk ids of the corpus searched, or ids the result declares foreign
  (``ArmResult.foreign``: ids that match no chunk, kept at their ranks as non-relevant hits,
  :mod:`rulegauge.corpus.foreign`): a declared foreign id is no chunk of the corpus and is
  usable as an id (non-empty, bounded, no invisible characters);
* finite scores;
* of the declared types: ``search`` returns a list (or tuple) of :class:`ArmResult`, each
  result's hits a tuple of :class:`~rulegauge.arms.results.Hit` (a ``str`` chunk id, an
  integer rank, a real score) or a :class:`~rulegauge.arms.results.HitColumns` of aligned
  integer rows and ranks and real scores (:func:`shape_problems`, checked first: the other
  checks read those types);
* in the arm's declared order rule, :data:`ORDER_RULES`: ``score`` (the default, what
  :func:`rulegauge.arms.base.hits_from_scores` gives) is scores non-increasing along the
  ranks, equal scores in chunk-id order (:mod:`rulegauge.core.ordering`); ``given`` is the
  order a source gave (an ``http`` arm's service list), scores informational; ``observed`` is
  ranks seen elsewhere (an ``http-ranks`` arm's per-arm ranks of the service's fused list:
  1, 2, 5, 5 ...), non-decreasing, scores informational.

:func:`check_results` is called by the run on every arm's results before they are stored
(:mod:`rulegauge.pipeline.retrieval`): the first broken result stops the run with exit 2
naming the arm and the question. :mod:`rulegauge.testing.arms` runs the same checks on any
registered arm. Edge cases: an empty result is valid (the arm found nothing); a missing
question is valid (the run counts it as empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rulegauge.arms.results import ArmResult, Hit, HitColumns
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import shown
from rulegauge.corpus.chunk_columns import ChunkColumns
from rulegauge.corpus.foreign import foreign_id_problem

ORDER_RULES = ("score", "given", "observed")
_SHOWN = 3  # problems named per result


class ArmContractError(RulegaugeError):
    """An arm's results break the arm contract (module docstring); names arm and question."""


def order_rule(arm: Any) -> str:
    """The arm's declared order rule (class attribute ``order_rule``; ``score`` when absent)."""
    rule = str(getattr(arm, "order_rule", "score"))
    if rule not in ORDER_RULES:
        raise ArmContractError(f"arm {getattr(arm, 'name', arm)!r} declares order_rule {rule!r}; "
                               f"choose one of: {', '.join(ORDER_RULES)}")
    return rule


def _arrays(result: ArmResult, chunks: ChunkColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(corpus rows, ranks, scores) of the result's hits, and the problems of ids not in ``chunks``
    (their rows are -1)."""
    f = result.found
    if isinstance(f, HitColumns):
        rows = np.asarray(f.rows, np.int64)
        if f.chunks is not chunks and f.chunks is not chunks.corpus \
                and not np.array_equal(f.chunks.ids, chunks.base.ids):
            return rows, np.asarray(f.ranks), np.asarray(f.scores, np.float64), ["hits index another corpus"]
        bad = (rows < 0) | (rows >= len(f.chunks))
        return (np.where(bad, -1, rows), np.asarray(f.ranks), np.asarray(f.scores, np.float64),
                [f"{int(bad.sum())} corpus rows out of range"] if bad.any() else [])
    row_of = chunks.row_of
    rows = np.fromiter((row_of.get(h.chunk_id, -1) for h in f), np.int64, len(f))
    unknown = [h.chunk_id for h in f if h.chunk_id not in row_of]
    problems = [f"chunk ids not in the corpus: {', '.join(map(repr, unknown[:_SHOWN]))}"
                + (f" and {len(unknown) - _SHOWN} more" if len(unknown) > _SHOWN else "")] if unknown else []
    return (rows, np.fromiter((h.rank for h in f), np.int64, len(f)),
            np.fromiter((h.score for h in f), np.float64, len(f)), problems)


_REAL = (int, float, np.integer, np.floating)


def _hit_problem(i: int, h: Any) -> str | None:
    if not isinstance(h, Hit):
        return f"hit {i} is {shown(h)}, not a Hit"
    if not isinstance(h.chunk_id, str):
        return f"hit {i} has chunk id {shown(h.chunk_id)}, not a str"
    if isinstance(h.rank, bool) or not isinstance(h.rank, (int, np.integer)):
        return f"hit {i} has rank {shown(h.rank)}, not an integer"
    if isinstance(h.score, bool) or not isinstance(h.score, _REAL):
        return f"hit {i} has score {shown(h.score)}, not a number"
    return None


def shape_problems(result: Any) -> list[str]:
    """What is wrong with the types of one returned result (module docstring), [] when nothing is."""
    if not isinstance(result, ArmResult):
        return [f"a result is {shown(result)}, not an ArmResult"]
    f = result.found
    if isinstance(f, HitColumns):
        arrays = {"rows": f.rows, "ranks": f.ranks, "scores": f.scores}
        if not all(isinstance(a, np.ndarray) and a.ndim == 1 for a in arrays.values()):
            return ["HitColumns rows, ranks and scores must be 1-d numpy arrays"]
        if not len(f.rows) == len(f.ranks) == len(f.scores):
            return [f"HitColumns of {len(f.rows)} rows, {len(f.ranks)} ranks and {len(f.scores)} scores"]
        kinds = {n: a.dtype.kind for n, a in arrays.items()}
        if kinds["rows"] not in "iu" or kinds["ranks"] not in "iu" or kinds["scores"] not in "iuf":
            return [f"HitColumns dtypes {', '.join(f'{n} {a.dtype}' for n, a in arrays.items())}: rows and "
                    "ranks must be integers, scores real"]
        return []
    if not isinstance(result.foreign, frozenset) or not all(isinstance(i, str) for i in result.foreign):
        return [f"foreign is {shown(result.foreign)}, not a frozenset of ids"]
    if not isinstance(f, (tuple, list)):
        return [f"hits are {shown(f)}, not a tuple of Hit"]
    for i, h in enumerate(f, start=1):
        why = _hit_problem(i, h)
        if why is not None:
            return [why]
    return []


def result_problems(result: ArmResult, chunks: ChunkColumns, depth: int, rule: str = "score") -> list[str]:
    """What is wrong with one result (module docstring), [] when nothing is."""
    shape = shape_problems(result)
    if shape:
        return shape
    rows, ranks, scores, problems = _arrays(result, chunks)
    n = len(rows)
    if n > depth:
        problems.append(f"{n} hits, more than the depth asked ({depth})")
    want = np.arange(1, n + 1)
    if rule == "observed":
        if n and (ranks.min() < 1 or (np.diff(ranks) < 0).any()):
            at = int(np.flatnonzero((ranks < 1) | (np.r_[0, np.diff(ranks)] < 0))[0])
            problems.append(f"ranks must be >= 1 and never go down; hit {at + 1} has rank {int(ranks[at])}")
    elif not np.array_equal(ranks, want):
        at = int(np.flatnonzero(ranks != want)[0])
        problems.append(f"ranks must be 1..{n} in list order without gaps; hit {at + 1} has rank {int(ranks[at])}")
    problems += _foreign_problems(result, rows, chunks)
    uniq, counts = np.unique(rows[rows >= 0], return_counts=True)
    if (counts > 1).any():
        problems.append(f"chunk {str(chunks.ids[uniq[counts > 1][0]])!r} is ranked more than once")
    if not np.isfinite(scores).all():
        at = int(np.flatnonzero(~np.isfinite(scores))[0])
        problems.append(f"hit {at + 1} has a score that is not finite ({float(scores[at])!r})")
    elif rule == "score" and n > 1 and not problems:
        ids = chunks.ids[rows].astype(str)
        up = scores[1:] > scores[:-1]
        tie_wrong = (scores[1:] == scores[:-1]) & (ids[1:] < ids[:-1])
        if (up | tie_wrong).any():
            at = int(np.flatnonzero(up | tie_wrong)[0]) + 1
            problems.append(f"hit {at + 1} breaks the order rule 'score' (scores descending, equal scores "
                            f"by chunk id): {ids[at - 1]!r} {scores[at - 1]!r} before {ids[at]!r} {scores[at]!r}")
    return problems


def _foreign_problems(result: ArmResult, rows: np.ndarray, chunks: ChunkColumns) -> list[str]:
    """A hit outside the corpus that the result does not declare foreign, a declared foreign
    id that is a chunk of the corpus, or one that cannot be an id (module docstring)."""
    n = chunks.n_corpus
    outside = [str(chunks.ids[r]) for r in rows if r >= n]
    undeclared = [i for i in outside if i not in result.foreign]
    out = [f"chunk ids not in the corpus: {', '.join(map(repr, undeclared[:_SHOWN]))} (declare them "
           "in ArmResult.foreign to keep them as foreign hits)"] if undeclared else []
    row_of = chunks.base.row_of
    inside = sorted(i for i in result.foreign if i in row_of)
    if inside:
        out.append(f"declares foreign the chunk id(s) {', '.join(map(repr, inside[:_SHOWN]))} of the corpus")
    out += [p for p in (foreign_id_problem(i) for i in outside if i in result.foreign) if p][:_SHOWN]
    return out


def results_problems(results: Sequence[ArmResult], question_ids: Sequence[str], chunks: ChunkColumns,
                     depth: int, rule: str = "score") -> list[tuple[str, str]]:
    """``(question id, problem)`` of every broken result, in result order (``?``: a returned
    value that is not a result, or not a list of them, names no question)."""
    if not isinstance(results, (list, tuple)):
        return [("?", f"search returned {shown(results)}, not a list of ArmResult")]
    asked, seen = set(question_ids), set()
    out: list[tuple[str, str]] = []
    for r in results:
        if not isinstance(r, ArmResult) or not isinstance(r.question_id, str):
            why = shape_problems(r) or [f"its question id is {shown(r.question_id)}, not a str"]
            out.append(("?", why[0]))
            continue
        if r.question_id not in asked:
            out.append((r.question_id, "a result for a question the arm was not asked"))
        elif r.question_id in seen:
            out.append((r.question_id, "a second result for the question"))
        seen.add(r.question_id)
        out += [(r.question_id, p) for p in result_problems(r, chunks, depth, rule)]
    return out


def check_results(arm: str, results: Sequence[ArmResult], question_ids: Sequence[str], chunks: ChunkColumns,
                  depth: int, rule: str = "score") -> None:
    """Raise :class:`ArmContractError` naming ``arm`` and the first questions whose results
    break the contract (module docstring); nothing when every result keeps it."""
    found = results_problems(results, question_ids, chunks, depth, rule)
    if found:
        named = "; ".join(p if q == "?" else f"question {q}: {p}" for q, p in found[:_SHOWN])
        more = f" (and {len(found) - _SHOWN} more problems)" if len(found) > _SHOWN else ""
        raise ArmContractError(f"arm {arm} broke the arm contract (docs/plugins.md): {named}{more}")
