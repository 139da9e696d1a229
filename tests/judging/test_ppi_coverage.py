"""Coverage of the PPI intervals where users meet them: a planted judge errs on page grades,
the metric (nDCG@5 by ir_measures, :func:`rulegauge.judging.ppi_run.question_values`) turns
labels into per-question values, a random sample of questions has people's labels. Slow:
each draw scores 300 questions of two configs under the judge's labels (the quick
per-value simulation is in test_ppi.py)."""

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


@pytest.mark.parametrize(("error", "lenient"), [(0.2, False), (0.5, True)])
def test_label_level_coverage_is_at_least_94_percent(error: float, lenient: bool) -> None:
    rng = np.random.default_rng(2023)
    qs = [f"q{q}" for q in range(QUESTIONS)]
    rows = []
    for q in qs:  # c1 ranks the pages in order, c2 in a random order per question
        for cid, order in (("c1", np.arange(PAGES)), ("c2", rng.permutation(PAGES))):
            rows += [(q, cid, f"d#{p + 1}", r + 1) for r, p in enumerate(order)]
    lists = pd.DataFrame(rows, columns=["question_id", "config_id", "page_id", "page_rank"])
    truth = rng.choice(4, size=(QUESTIONS, PAGES), p=[0.55, 0.2, 0.15, 0.1])
    truth[:, 0] = np.maximum(truth[:, 0], rng.choice(4, QUESTIONS, p=[0.2, 0.2, 0.3, 0.3]))
    vh = question_values(lists, labels(truth), qs, "nDCG@5")
    targets = {"c1": vh.loc["c1"].mean(), "c1-c2": (vh.loc["c1"] - vh.loc["c2"]).mean()}
    covered = {(what, how): 0 for what in targets for how in ("ppi", "tuned", "classical")}
    for _ in range(DRAWS):
        wrong = rng.random(truth.shape) < error
        guess = np.minimum(truth + 1, 3) if lenient else rng.integers(0, 4, truth.shape)
        va = question_values(lists, labels(np.where(wrong, guess, truth)), qs, "nDCG@5")
        pick = np.zeros(QUESTIONS, dtype=bool)
        pick[rng.choice(QUESTIONS, SAMPLE, replace=False)] = True
        for what, target in targets.items():
            y = vh.loc["c1"] - (vh.loc["c2"] if what == "c1-c2" else 0)
            yhat = va.loc["c1"] - (va.loc["c2"] if what == "c1-c2" else 0)
            for how, iv in (("ppi", ppi_interval(y[pick], yhat[pick], yhat[~pick])),
                            ("tuned", ppi_interval(y[pick], yhat[pick], yhat[~pick], lam=None)),
                            ("classical", classical_interval(y[pick]))):
                covered[(what, how)] += iv.low <= target <= iv.high
    share = {k: v / DRAWS for k, v in covered.items()}
    assert min(share.values()) >= 0.94, share
