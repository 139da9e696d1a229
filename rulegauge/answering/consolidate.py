"""Consolidate and judge phases of answering: every journal of the run -> the answers of
each label, then (with a judge) the verdicts on reference facts.

Every label of the run is consolidated, also those answered earlier: a label without a
current answer (prompt and request hashes) for a pair it covers raises, naming the
command that answers it again. An answerer with ``covers`` answers the pairs it covers
(asked now: its verdicts; answered earlier: the coverage the manifest recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from rulegauge.answering.asking import is_current
from rulegauge.answering.frames import Key, ReadSet
from rulegauge.answering.journal import Journal, journal_path
from rulegauge.answering.plan import AnswerPlan
from rulegauge.core.errors import RulegaugeError

Progress = Callable[[str, int], Any]
Records = dict[str, list[dict[str, Any]]]  # label -> journaled answers, in read order


def coverage(plan: AnswerPlan, instances: Mapping[str, Any], reads: ReadSet) -> dict[str, set[Key]]:
    """The (question, config) pairs each label answers (module docstring)."""
    old = plan.previous.get("coverage", {})
    out = {}
    for label in plan.order:
        a = instances.get(label)
        covers = getattr(a, "covers", None) if a is not None else None
        if callable(covers):
            out[label] = {k for k, r in reads.requests.items() if covers(r)}
        elif a is None and label in old:
            kept = set(old[label])
            out[label] = {k for k in reads.requests if f"{k[0]}|{k[1]}" in kept}
        else:
            out[label] = set(reads.requests)
    return out


def consolidate(plan: AnswerPlan, covered: Mapping[str, set[Key]], reads: ReadSet) -> Records:
    """Each label's current journaled answers, in read order (raises when one is missing)."""
    records: Records = {}
    for label in plan.order:
        have = Journal(journal_path(plan.run.path, label)).load()
        wanted = {k: req for k, req in reads.requests.items() if k in covered[label]}
        missing = [k for k, req in wanted.items() if not is_current(have.get(k), req, plan.prompt)]
        if missing:
            raise RulegaugeError(f"answerer {label!r} (answered earlier in this run) has no current "
                               f"answer for {len(missing)} question/config pair(s), e.g. "
                               f"{missing[0]}; answer again with --answerer {label}")
        records[label] = [have[k] for k in wanted]
    return records


def coverage_patch(covered: Mapping[str, set[Key]], reads: ReadSet) -> dict[str, list[str]]:
    """The manifest's ``coverage``: the pairs of each label that answers only some."""
    return {label: sorted(f"{q}|{c}" for q, c in keys) for label, keys in covered.items()
            if len(keys) < len(reads.requests)}


def judge(plan: AnswerPlan, label: str, judge_answerer: Any, records: Records,
          progress: Progress | None) -> tuple[pd.DataFrame, Any, dict[str, Any]]:
    """The judge ``label`` on every answer: (the ``judge_verdicts`` table, verdicts by
    answer, the manifest's ``judge`` section)."""
    from rulegauge.answering.judge import describe as judge_describe  # deferred: judge prompts
    from rulegauge.answering.judge import judge_answers, verdicts_by_answer

    flat = pd.DataFrame([{"question_id": r["question_id"], "config_id": r["config_id"],
                          "answerer": label, "outcome": r["outcome"], "text": r["text"]}
                         for label in plan.order for r in records[label]],
                        columns=["question_id", "config_id", "answerer", "outcome", "text"])
    verdicts = judge_answers(judge_answerer, label, flat, plan.inputs.questions,
                             progress=progress, breaker_after=plan.breaker_after)
    described = {"answerer": label, "describe": judge_answerer.describe(),
                 "prompt": judge_describe()}
    return verdicts, verdicts_by_answer(verdicts), described
