"""The answer-metric rows of a run: the ``answer_metrics`` table plus its measured metrics.

Definition: :func:`answer_metric_frame` is the long frame every reader of answer metrics
takes (side by side, compare, gate): the stored ``answer_metrics`` rows, and, for each
*measured* answer metric (:attr:`rulegauge.metrics.family.MetricFamily.measured`, e.g.
``latency_ms``), one row per answer whose value is the ``answers`` table's column of the
same name. A measured metric is wall time, not a function of the run's inputs, so it is
kept out of ``answer_metrics``: two runs of the same inputs then have equal
``answer_metrics`` tables (``../shared/tools/same_tables.py`` skips timing columns,
not rows), while gates and side-by-side means still see it as a metric.

Edge cases: a run whose ``answer_metrics`` already holds a measured metric's rows (a
scored rulings run records the page's own total time there) keeps them and gets none
added; a run without an ``answers`` table (rulings) gets no measured rows; ``answerable``
of an added row is its question's, read from the stored rows (every answer has them).
"""

from __future__ import annotations

from typing import Protocol

import pandas as pd

from rulegauge.metrics.family import METRICS

KEYS = ["question_id", "config_id", "answerer"]


class Tables(Protocol):
    """What is read: a run or a comparison side."""

    def has_table(self, name: str) -> bool: ...

    def table(self, name: str) -> pd.DataFrame: ...


def measured_answer_metrics() -> list[str]:
    """The measured answer metrics, in declaration order (their facts loaded first: a
    command that reads a run, ``rulegauge answerers``, has not asked for them yet)."""
    from rulegauge.answering import metric_facts  # noqa: F401  declares latency_ms and the others

    return [name for name, f in METRICS.items() if f.kind == "answer" and f.measured]


def answer_metric_frame(run: Tables) -> pd.DataFrame:
    """``answer_metrics`` plus one row per answer for each measured metric (module docstring)."""
    stored = run.table("answer_metrics")
    if not run.has_table("answers"):
        return stored
    answers = run.table("answers")
    present = set(stored["metric"])
    answerable = stored.drop_duplicates("question_id").set_index("question_id")["answerable"]
    extra = [pd.DataFrame({**{k: answers[k].to_numpy() for k in KEYS}, "metric": name,
                           "value": answers[name].astype("float64").to_numpy(),
                           "answerable": answers["question_id"].map(answerable).to_numpy()})
             for name in measured_answer_metrics() if name not in present and name in answers.columns]
    if not extra:
        return stored
    return pd.concat([stored, *extra], ignore_index=True)[list(stored.columns)]
