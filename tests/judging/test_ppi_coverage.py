"""Coverage of the PPI intervals where users meet them: a planted judge errs on page grades,
the metric (nDCG@5 by ir_measures, :func:`rulegauge.judging.ppi_run.question_values`) turns
labels into per-question values, a random sample of questions has people's labels. Slow:
each draw scores 300 questions of two configs under the judge's labels (the quick
per-value simulation is in test_ppi.py).

The draws' values are scored all at once by :func:`ndcg_at_5` (numpy, the same nDCG@5:
linear gain, log2 discount, ideal from every graded page) instead of one
:func:`question_values` call per draw (ir_measures: ~25 ms a draw, 800 draws). The test checks
that the two agree on the true labels and on the first draws' judge labels, so the
intervals are built from the metric's own values; the draws (same generator, same order of
calls) and so the coverage counts are those the per-draw loop gave."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rulegauge.goldset.labels import LabelSet
from rulegauge.judging.ppi import classical_interval, ppi_interval
from rulegauge.judging.ppi_run import question_values

pytestmark = pytest.mark.slow
QUESTIONS, PAGES, SAMPLE, DRAWS = 300, 8, 60, 400


def labels(grades: np.ndarray) -> LabelSet:
    return LabelSet("planted", "judgments",
                    {(f"q{q}", f"d#{p + 1}"): int(grades[q, p])
                     for q in range(QUESTIONS) for p in range(PAGES)},
                    frozenset(), frozenset(f"q{q}" for q in range(QUESTIONS)))


def ndcg_at_5(grades: np.ndarray, order: np.ndarray) -> np.ndarray:
    """nDCG@5 of each question (last two axes: question x page) when its pages are ranked by
    ``order`` (question x rank -> page): gain = grade, discount log2(rank + 1), ideal = the
    question's grades sorted; 0 where no page is relevant (as :func:`question_values`)."""
    discount = 1.0 / np.log2(np.arange(2, 7))
    ranked = np.take_along_axis(grades, np.broadcast_to(order, grades.shape), axis=-1)[..., :5]
    ideal = -np.sort(-grades, axis=-1)[..., :5]
    dcg, idcg = ranked @ discount, ideal @ discount
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)


@pytest.mark.parametrize(("error", "lenient"), [(0.2, False), (0.5, True)])
def test_label_level_coverage_is_at_least_94_percent(error: float, lenient: bool) -> None:
    rng = np.random.default_rng(2023)
    qs = [f"q{q}" for q in range(QUESTIONS)]
    rows = []
    orders = {"c1": np.tile(np.arange(PAGES), (QUESTIONS, 1)), "c2": np.empty((QUESTIONS, PAGES), int)}
    for i, q in enumerate(qs):  # c1 ranks the pages in order, c2 in a random order per question
        orders["c2"][i] = rng.permutation(PAGES)
        for cid in ("c1", "c2"):
            rows += [(q, cid, f"d#{p + 1}", r + 1) for r, p in enumerate(orders[cid][i])]
    lists = pd.DataFrame(rows, columns=["question_id", "config_id", "page_id", "page_rank"])
    truth = rng.choice(4, size=(QUESTIONS, PAGES), p=[0.55, 0.2, 0.15, 0.1])
    truth[:, 0] = np.maximum(truth[:, 0], rng.choice(4, QUESTIONS, p=[0.2, 0.2, 0.3, 0.3]))
    vh = question_values(lists, labels(truth), qs, "nDCG@5")
    judged, picks = np.empty((DRAWS, QUESTIONS, PAGES), int), np.zeros((DRAWS, QUESTIONS), dtype=bool)
    for d in range(DRAWS):  # the generator's calls in the per-draw loop's order: the same draws
        wrong = rng.random(truth.shape) < error
        guess = np.minimum(truth + 1, 3) if lenient else rng.integers(0, 4, truth.shape)
        judged[d] = np.where(wrong, guess, truth)
        picks[d, rng.choice(QUESTIONS, SAMPLE, replace=False)] = True
    va = {cid: ndcg_at_5(judged, order) for cid, order in orders.items()}  # draw x question
    for cid, order in orders.items():  # the metric's own values: truth and the first draws
        assert np.allclose(ndcg_at_5(truth, order), vh.loc[cid].to_numpy(), rtol=0, atol=1e-12)
        for d in range(3):
            got = question_values(lists, labels(judged[d]), qs, "nDCG@5").loc[cid].to_numpy()
            assert np.allclose(va[cid][d], got, rtol=0, atol=1e-12)
    targets = {"c1": vh.loc["c1"].mean(), "c1-c2": (vh.loc["c1"] - vh.loc["c2"]).mean()}
    covered = {(what, how): 0 for what in targets for how in ("ppi", "tuned", "classical")}
    for d in range(DRAWS):
        pick = picks[d]
        for what, target in targets.items():
            y = (vh.loc["c1"] - (vh.loc["c2"] if what == "c1-c2" else 0)).to_numpy()
            yhat = va["c1"][d] - (va["c2"][d] if what == "c1-c2" else 0)
            for how, iv in (("ppi", ppi_interval(y[pick], yhat[pick], yhat[~pick])),
                            ("tuned", ppi_interval(y[pick], yhat[pick], yhat[~pick], lam=None)),
                            ("classical", classical_interval(y[pick]))):
                covered[(what, how)] += iv.low <= target <= iv.high
    share = {k: v / DRAWS for k, v in covered.items()}
    assert min(share.values()) >= 0.94, share
