"""Which questions a slice holds: a policy's ``[slices.NAME]`` selectors applied to the
questions both runs share, and a side seen through those questions only.

:func:`select` reads the candidate's ``questions`` table (its gold set is the newer; the
base's when the candidate has none) and the unlabelled ids its manifest records
(``goldset.unlabelled``), keeps the questions both sides share
(:func:`rulegauge.regression.overlap.shared_questions`) and every selector given: ``tag``
(in the question's tags), ``game``, ``language``, ``answerable``, ``labelled``, ``questions``
(ids, each of which must be shared). An empty selection is bad input.
:class:`QuestionView` restricts every table of a side with a ``question_id`` column to the
slice's questions, so a slice is compared and gated by the same code as the whole set
(:mod:`rulegauge.regression.slices`) and summed up by the same code in a baseline's
expected numbers (:mod:`rulegauge.regression.expected`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.overlap import shared_questions
from rulegauge.regression.policy_slices import SliceSpec
from rulegauge.store.baseline import Side


class QuestionView:
    """``side`` with every table restricted to the rows of ``questions`` (a slice)."""

    def __init__(self, side: Side, questions: Sequence[str]) -> None:
        self.side, self.questions = side, frozenset(questions)
        self.manifest: dict[str, Any] = side.manifest

    @property
    def run_id(self) -> str:
        return self.side.run_id

    def has_table(self, name: str) -> bool:
        return self.side.has_table(name)

    def table(self, name: str) -> pd.DataFrame:
        df = self.side.table(name)
        if "question_id" not in df.columns:
            return df
        return df[df["question_id"].astype(str).isin(self.questions)].reset_index(drop=True)


def unlabelled_ids(side: Side) -> frozenset[str]:
    """The questions ``side``'s gold set marks ``unlabelled: true`` (its manifest)."""
    ids = (side.manifest.get("goldset") or {}).get("unlabelled") or ()
    return frozenset(str(q) for q in ids)


def select(spec: SliceSpec, base: Side, candidate: Side) -> tuple[str, ...]:
    """The question ids of the slice, among those both sides share (module docstring)."""
    shared = shared_questions(base, candidate)
    side = candidate if candidate.has_table("questions") else base
    if not side.has_table("questions"):
        raise RulegaugeError(f"slice {spec.name}: neither run has a questions table to select from")
    q = side.table("questions")
    q = q[q["question_id"].astype(str).isin(set(shared))]
    keep = pd.Series(True, index=q.index)
    if spec.tag is not None:
        keep &= q["tags"].map(lambda tags: tags is not None and spec.tag in list(tags))
    for key in ("game", "language"):
        if (want := getattr(spec, key)) is not None:
            keep &= q[key].astype(str) == want
    if spec.answerable is not None:
        keep &= q["answerable"].astype(bool) == spec.answerable
    if spec.labelled is not None:
        unlabelled = unlabelled_ids(side)
        keep &= q["question_id"].astype(str).map(lambda i: i not in unlabelled) == spec.labelled
    if spec.questions:
        unknown = sorted(set(spec.questions) - set(shared))
        if unknown:
            raise RulegaugeError(f"slice {spec.name}: question(s) {', '.join(unknown)} are not "
                                 f"among the {len(shared)} questions both runs share")
        keep &= q["question_id"].astype(str).isin(set(spec.questions))
    picked = tuple(sorted(q.loc[keep, "question_id"].astype(str)))
    if not picked:
        raise RulegaugeError(f"slice {spec.name} ({spec.describe()}) selects none of the "
                             f"{len(shared)} questions both runs share")
    return picked


SLICE_OPTION = "tag=errata, game=NAME, language=ru, answerable=false, labelled=false or questions=ID,ID"


def parse_slice(text: str) -> SliceSpec:
    """``--slice KEY=VALUE`` -> a slice named by the text itself (:data:`SLICE_OPTION`)."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    flags = {"true": True, "false": False}
    if not sep or not value or key not in ("tag", "game", "language", "answerable", "labelled",
                                           "questions"):
        raise RulegaugeError(f"--slice {text!r}: expected one of {SLICE_OPTION}")
    fields: dict[str, Any] = {}
    if key in ("answerable", "labelled"):
        if value.lower() not in flags:
            raise RulegaugeError(f"--slice {text!r}: {key} is true or false")
        fields[key] = flags[value.lower()]
    elif key == "questions":
        fields[key] = tuple(dict.fromkeys(q.strip() for q in value.split(",") if q.strip()))
    else:
        fields[key] = value
    return SliceSpec(text, **fields)
