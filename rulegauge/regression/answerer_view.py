"""One answerer of a side, seen under a common label: for gating answerer against answerer.

``rulegauge gate`` compares a candidate *answerer* with a baseline answerer, in
the same run or across runs, by giving each side a view (:class:`AnswererView`)
whose ``answers``, ``answer_metrics`` and ``citations`` keep only that side's
answerer, relabelled :data:`GATED`; every other table is the side's own. The
comparison (``rulegauge.regression.compare``) then pairs the two answerers question
by question like any two runs.

Answer statistics never run over error rows: :func:`answerer_views` drops, from
both views, every answer metric of a question (and config) where either
answerer's outcome is ``error``, except the ``error`` metric itself (the error
rate stays gateable); the count left out is :attr:`AnswererView.excluded`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from rulegauge.core.errors import RulegaugeError

GATED = "gated"
_TABLES = ("answers", "answer_metrics", "citations", "judge_verdicts")


class AnswererView:
    """A side whose answer tables hold one answerer, relabelled :data:`GATED`."""

    def __init__(self, side: Any, label: str, drop: set[tuple[str, str]] | None = None) -> None:
        self._side, self.label = side, label
        self.manifest = side.manifest
        self.run_id = side.run_id
        self._drop = drop or set()
        self.excluded = 0
        if not side.has_table("answer_metrics"):
            raise RulegaugeError(f"run {side.run_id} has no answers (answerer {label!r} wanted)")
        have = sorted(set(side.table("answer_metrics")["answerer"]))
        if label not in have:
            raise RulegaugeError(f"answerer {label!r} is not in run {side.run_id}; it has: "
                               f"{', '.join(have) or '(none)'}")

    def has_table(self, name: str) -> bool:
        return bool(self._side.has_table(name))

    def table(self, name: str) -> pd.DataFrame:
        df: pd.DataFrame = self._side.table(name)
        if name not in _TABLES or "answerer" not in df.columns:
            return df
        df = df[df["answerer"] == self.label].assign(answerer=GATED)
        if name == "answer_metrics" and self._drop:
            keys = list(zip(df["question_id"], df["config_id"], strict=True))
            gone = pd.Series([k in self._drop for k in keys], index=df.index) & (
                df["metric"] != "error")
            df = df[~gone]
        out: pd.DataFrame = df.reset_index(drop=True)
        return out


def _errors(side: Any, label: str) -> set[tuple[str, str]]:
    if not side.has_table("answers"):
        return set()
    a = side.table("answers")
    a = a[(a["answerer"] == label) & (a["outcome"] == "error")]
    return set(zip(a["question_id"], a["config_id"], strict=True))


def answerer_views(base: Any, base_label: str, candidate: Any, cand_label: str,
                   base_config: str | None = None, cand_config: str | None = None
                   ) -> tuple[AnswererView, AnswererView, int]:
    """Views of both sides and the number of questions left out for an error row.

    Error rows are matched by question id across configs when the configs differ
    (``base_config``/``cand_config`` resolved ids), else by (question, config)."""
    eb, ec = _errors(base, base_label), _errors(candidate, cand_label)
    qids = {q for q, _ in eb} | {q for q, _ in ec}
    configs = {c for _, c in eb | ec} | {x for x in (base_config, cand_config) if x}
    if base.has_table("answers"):
        configs |= set(base.table("answers")["config_id"])
    if candidate.has_table("answers"):
        configs |= set(candidate.table("answers")["config_id"])
    drop = {(q, c) for q in qids for c in configs}
    vb, vc = AnswererView(base, base_label, drop), AnswererView(candidate, cand_label, drop)
    return vb, vc, len(qids)
