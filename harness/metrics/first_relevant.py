"""The exact rank of a question's first relevant page beyond its selected top, without
ordering the question's whole list.

On the fast path (:mod:`harness.metrics.page_lists`) the top ``m`` candidates of each
question are in exact fused order; ``first_rel_rank`` needs the first relevant page even
when it lies beyond them. Its rank is one plus the number of distinct pages whose best
chunk comes before the question's first relevant chunk in exact order, and every
candidate scoring more than the float tolerance ``tol`` above another comes before it
in exact order. With ``t`` the best relevant score, the first relevant chunk in exact
order scores within ``tol`` of ``t``, so:

* a candidate scoring above ``t + tol`` comes before it (no relevant one does);
* a candidate scoring below ``t - tol`` comes after the chunk scoring ``t``, so after it;
* only the candidates within ``tol`` of ``t`` (the *cluster*) need the exact order: when
  all of them are relevant, none is ahead; otherwise the cluster alone is put in exact
  order (``Ordering.exact`` of :mod:`harness.metrics.page_lists` on a few columns) and
  its non-relevant candidates before the first relevant one are ahead too.

Pages, not chunks, are counted: every chunk ahead is not relevant, so its page differs
from the relevant page. The same ranks as ordering the whole list (tested with
deliberate ties, ``tests/metrics/test_first_relevant.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def first_relevant_ranks(s: np.ndarray, rel: np.ndarray, page: np.ndarray, tol: float,
                         exact: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """(G,) float rank of the first relevant page of each of G questions over its whole
    fused list (module docstring); inf for a question with no listed relevant candidate.

    ``s``/``rel``/``page``: (G, U) order keys (0.0: not listed), relevance and page code
    of the questions' candidate columns; ``exact(i, keys, cand)``: candidate columns
    ``cand`` of questions ``i`` (keys ``keys``) in exact fused order."""
    rel = rel & (s > 0)
    listed = rel.any(axis=1)
    t = np.where(rel, s, 0.0).max(axis=1)[:, None]
    ahead = s > t + tol
    cluster = (np.abs(s - t) <= tol) & (s > 0)
    hard = np.flatnonzero((cluster & ~rel).any(axis=1) & listed)
    if len(hard):  # exact order of the cluster alone: its columns first, the others keyed 0 (never listed)
        ch = cluster[hard]
        width = int(ch.sum(axis=1).max())
        cand = np.argsort(~ch, axis=1, kind="stable")[:, :width]
        sh = np.where(ch, s[hard], 0.0)
        ordered = exact(hard, sh, cand)
        in_cluster = np.take_along_axis(ch, ordered, 1)
        first = np.argmax(np.take_along_axis(rel[hard], ordered, 1) & in_cluster, axis=1)
        before = (np.arange(width)[None, :] < first[:, None]) & in_cluster
        mark = np.zeros(ch.shape, bool)
        np.put_along_axis(mark, ordered, before, 1)
        ahead[hard] |= mark
    pages = np.where(ahead, page, -1)
    pages.sort(axis=1)
    distinct = ((pages[:, 1:] != pages[:, :-1]) & (pages[:, 1:] >= 0)).sum(axis=1) + (pages[:, 0] >= 0)
    return np.where(listed, distinct + 1.0, np.inf)
