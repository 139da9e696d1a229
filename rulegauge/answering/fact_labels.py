"""Hand-labelled answers for reference facts, and the agreement of a fact verdict with them.

A labels file (YAML, read with :mod:`rulegauge.goldset.yamlsafe`) names its gold set and lists
items ``{q: QUESTION_ID, fact: N, stated: true|false, kind: WORD, answer: TEXT}``: does the
answer state fact ``N`` (0-based) of the question? ``kind`` groups the items (``stated``,
``negation``, ``near-miss``, ``short-words``, ``order``, ``language``) so agreement can be
read per trap. ``goldsets/sample-fact-labels.yaml`` is the sample's (64 items).

:func:`agreement` compares a verdict function with the labels: accuracy, Cohen's kappa
(:func:`sklearn.metrics.cohen_kappa_score`; NaN when either side is constant), precision and
recall of "stated", accuracy per kind, and the items they disagree on. A verdict of ``None``
(a judge that gave none) is counted apart, never as "not stated".

Errors (unknown question, fact number out of range, missing or mistyped fields) are all
collected and raised together, each with ``file:line``.

Reference: Cohen, "A coefficient of agreement for nominal scales" (1960).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.goldset.records import GoldSet, Question
from rulegauge.goldset.yamlsafe import compose, construct

_FIELDS = {"q": str, "fact": int, "stated": bool, "kind": str, "answer": str}
MAX_LABELS_BYTES = 16 * 1024 * 1024
"""Largest labels file read (a hand-labelled set is kilobytes)."""


@dataclass(frozen=True)
class FactLabel:
    """One labelled (answer, fact) pair; ``line`` is its line in the labels file."""

    question_id: str
    fact: int
    stated: bool
    kind: str
    answer: str
    line: int


@dataclass(frozen=True)
class Agreement:
    """Agreement of one verdict function with the labels (module docstring)."""

    items: int
    no_verdict: int
    accuracy: float
    kappa: float
    precision: float
    recall: float
    by_kind: Mapping[str, tuple[int, int]]  # kind -> (agreeing, items)
    disagreements: tuple[tuple[FactLabel, bool | None], ...]


def _item(path: Path, node: yaml.Node, value: object, gs: GoldSet) -> tuple[FactLabel | None, list[Problem]]:
    where = f"{path}:{node.start_mark.line + 1}"
    if not isinstance(value, dict):
        return None, [Problem(where, "an item must be a mapping with " + ", ".join(_FIELDS))]
    problems = [Problem(where, f"{k}: must be {t.__name__}") for k, t in _FIELDS.items()
                if not isinstance(value.get(k), t) or (t is int and isinstance(value.get(k), bool))]
    unknown = sorted(set(value) - set(_FIELDS))
    if unknown:
        problems.append(Problem(where, f"unknown field(s) {', '.join(map(str, unknown))}; "
                                f"known: {', '.join(_FIELDS)}"))
    if problems:
        return None, problems
    q: Question | None = gs.question_by_id.get(value["q"])
    if q is None:
        return None, [Problem(where, f"question {value['q']!r} is not in {gs.path}")]
    if not 0 <= value["fact"] < len(q.facts):
        return None, [Problem(where, f"question {q.question_id} has {len(q.facts)} fact(s); "
                              f"fact {value['fact']} does not exist")]
    return FactLabel(q.question_id, value["fact"], value["stated"], value["kind"],
                     value["answer"], node.start_mark.line + 1), []


def load_labels(path: Path, gs: GoldSet) -> tuple[FactLabel, ...]:
    """Every item of the labels file at ``path``, checked against ``gs``."""
    if path.stat().st_size > MAX_LABELS_BYTES:
        raise ValidationError([Problem(str(path), f"larger than {MAX_LABELS_BYTES:,} bytes")])
    root, problems = compose(path, path.read_bytes())
    data, more = (construct(path, root) if root is not None else (None, []))
    problems += more
    items_node = None
    if root is not None and isinstance(root, yaml.MappingNode):
        items_node = next((v for k, v in root.value if getattr(k, "value", None) == "items"), None)
    if not problems and (not isinstance(data, dict) or not isinstance(items_node, yaml.SequenceNode)):
        problems.append(Problem(str(path), "expected a mapping with an `items` list"))
    if problems:
        raise ValidationError(problems, f"{path}: labels file not usable")
    assert isinstance(data, dict) and isinstance(items_node, yaml.SequenceNode)  # checked above
    labels: list[FactLabel] = []
    for node, value in zip(items_node.value, data["items"], strict=True):
        label, errs = _item(path, node, value, gs)
        problems += errs
        if label is not None:
            labels.append(label)
    if problems:
        raise ValidationError(problems, f"{path}: labels file not usable")
    return tuple(labels)


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def agreement(labels: Sequence[FactLabel], verdict: Callable[[FactLabel], bool | None]) -> Agreement:
    """How often ``verdict`` agrees with ``labels`` (module docstring)."""
    from sklearn.metrics import cohen_kappa_score  # deferred: sklearn loads on use

    pairs = [(lab, verdict(lab)) for lab in labels]
    judged = [(lab, v) for lab, v in pairs if v is not None]
    truth = [lab.stated for lab, _ in judged]
    said = [bool(v) for _, v in judged]
    agree = sum(t == s for t, s in zip(truth, said, strict=True))
    tp = sum(t and s for t, s in zip(truth, said, strict=True))
    constant = len(set(truth)) < 2 or len(set(said)) < 2
    kappa = math.nan if constant else float(cohen_kappa_score(truth, said))
    by_kind: dict[str, tuple[int, int]] = {}
    for lab, v in pairs:
        a, n = by_kind.get(lab.kind, (0, 0))
        by_kind[lab.kind] = (a + (v is not None and v == lab.stated), n + 1)
    return Agreement(items=len(pairs), no_verdict=len(pairs) - len(judged),
                     accuracy=_ratio(agree, len(judged)), kappa=kappa,
                     precision=_ratio(tp, sum(said)), recall=_ratio(tp, sum(truth)),
                     by_kind=dict(sorted(by_kind.items())),
                     disagreements=tuple((lab, v) for lab, v in pairs if v != lab.stated))


def matcher_verdict(gs: GoldSet) -> Callable[[FactLabel], bool | None]:
    """The deterministic matcher (:mod:`rulegauge.answering.facts`) as a verdict function."""
    from rulegauge.answering.facts import facts_stated

    def verdict(lab: FactLabel) -> bool | None:
        q = gs.question_by_id[lab.question_id]
        return facts_stated(lab.answer, [q.facts[lab.fact]], q.language)[0]

    return verdict


def judge_verdict(judge: Any, gs: GoldSet) -> Callable[[FactLabel], bool | None]:
    """The fact judge (:mod:`rulegauge.answering.judge`: same prompt, same YES/NO parsing) as
    a verdict function; a failed call or an unparseable reply is ``None``."""
    from rulegauge.answering.judge import chat_function, messages, verdict

    chat = chat_function(judge)

    def ask(lab: FactLabel) -> bool | None:
        q = gs.question_by_id[lab.question_id]
        reply, error = chat(messages(q.question, lab.answer, q.facts[lab.fact]),
                            f"labels|{lab.line}")
        return None if error is not None else verdict(reply)

    return ask


def labels_goldset(path: Path) -> Path:
    """The gold set a labels file names (``goldset:``, relative to the file)."""
    root, problems = compose(path, path.read_bytes())
    data, more = (construct(path, root) if root is not None else (None, []))
    name = data.get("goldset") if isinstance(data, dict) else None
    if problems or more or not isinstance(name, str):
        raise ValidationError([*problems, *more] or [Problem(str(path), "no `goldset:` named; give --goldset")],
                              f"{path}: labels file not usable")
    return path.parent / name
