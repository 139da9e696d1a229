"""``rulegauge judges agreement A B``: two label sets compared pair by pair.

The pairs compared: those both label sets judged. When one side is a gold set and the
other a judgments file, every pair the judgments judged on a question of the gold set
is compared, and a page the gold set never judged counts as grade 0 there, the
convention of one-known-relevant gold sets (MacAvaney & Soldaini, SIGIR 2023); how
many pairs rest on that assumption is reported (``assumed_zero``).

Reported: the number of pairs, how many of them carry an LLM-only grade on either
side (always marked), Cohen's kappa on the 0-3 grades with its bootstrap interval over
questions (each resampled question brings all its pairs),
the same on relevant / not relevant (grade >= 1), the share of pairs with equal
grades, the always-most-common baseline of side B (the reference), and the 4 x 4
confusion matrix (rows A, columns B). :mod:`rulegauge.judging.agreement` has the
definitions.
"""

from __future__ import annotations

from dataclasses import dataclass

from rulegauge.core.errors import RulegaugeError
from rulegauge.goldset.labels import LabelSet, Pair
from rulegauge.judging import agreement


@dataclass(frozen=True)
class LabelAgreement:
    a: str
    b: str
    pairs: int
    assumed_zero: int
    llm_pairs: int
    """Pairs whose grade on either side comes from LLM judges only."""
    kappa: float | None
    interval: agreement.Interval
    """95% percentile bootstrap over questions (a cluster bootstrap)."""
    questions: int
    """Questions the compared pairs belong to (the bootstrap's units)."""
    binary_kappa: float | None
    accuracy: float | None
    baseline_grade: int | None
    baseline_accuracy: float
    confusion: list[list[int]]


def compared_pairs(a: LabelSet, b: LabelSet) -> tuple[list[Pair], int]:
    """The pairs to compare (module docstring) and how many take an assumed 0."""
    if a.kind == "goldset" and b.kind != "goldset":
        pairs, assumed = compared_pairs(b, a)
        return pairs, assumed
    if b.kind == "goldset" and a.kind != "goldset":
        pairs = sorted(p for p in a.grades if p[0] in b.questions)
        return pairs, sum(1 for p in pairs if p not in b.grades)
    return sorted(set(a.grades) & set(b.grades)), 0


def compare(a: LabelSet, b: LabelSet, *, seed: int = 0, resamples: int = 1000) -> LabelAgreement:
    """Compare ``a`` with the reference ``b`` (module docstring)."""
    pairs, assumed = compared_pairs(a, b)
    if not pairs:
        raise RulegaugeError(f"{a.name} and {b.name} judge no pair in common; nothing to compare")
    ga = [a.grades.get(p, 0) for p in pairs]
    gb = [b.grades.get(p, 0) for p in pairs]
    base_grade, base_acc = agreement.most_common_baseline(gb)
    return LabelAgreement(
        a.name, b.name, len(pairs), assumed, sum(1 for p in pairs if p in a.llm or p in b.llm),
        agreement.cohen(ga, gb), agreement.bootstrap_kappa(ga, gb, seed=seed, resamples=resamples,
                                                         groups=[q for q, _ in pairs]),
        len({q for q, _ in pairs}), agreement.cohen([int(g >= 1) for g in ga], [int(g >= 1) for g in gb]),
        agreement.accuracy(ga, gb), base_grade, base_acc, agreement.confusion(ga, gb))
