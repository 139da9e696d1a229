"""The arm conformance suite: what every registered arm must keep, on the embedded sample.

:func:`check_arm` builds an arm (its kind by name, or a class not registered yet, with
optional parameters), prepares it on the embedded sample's corpus (57 questions, five
languages; ``rulegauge run`` without ``-g``) and searches every question at depths 5 and 20,
then reports what breaks the arm contract (:mod:`rulegauge.arms.contract`: ranks 1..n without
gaps per question, at most the depth asked, distinct ids of the corpus, finite scores, the
declared order rule), a class ``name`` that differs from the registered name, and a
``describe()`` that is not a JSON object. An arm that cannot run here (a constructor that
needs parameters such as ``url`` or ``path``, a preflight that says its service is not
ready) is ``skipped`` with the reason, never passed.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rulegauge.arms.base import ARMS, ArmContext
from rulegauge.arms.contract import order_rule, results_problems
from rulegauge.arms.results import foreign_columns
from rulegauge.core.cachedir import cache_root
from rulegauge.core.errors import RulegaugeError
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import GoldSet
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import load_inputs

DEPTHS = (5, 20)


@dataclass(frozen=True)
class ArmCheck:
    name: str
    problems: tuple[str, ...]
    skipped: str | None = None  # why the arm could not run here


def sample_inputs() -> tuple[GoldSet, Corpus]:
    """The embedded sample's gold set and corpus (the run's own loading, checks included)."""
    gs, corpus, _ = load_inputs(RunOptions())
    return gs, corpus


def check_arm(kind: str | type, params: dict[str, Any] | None = None, *,
              inputs: tuple[GoldSet, Corpus] | None = None, cache_dir: Path | None = None) -> ArmCheck:
    """Every check of the module docstring on one arm; ``problems`` empty when it conforms."""
    cls = ARMS.get(kind) if isinstance(kind, str) else kind
    name = kind if isinstance(kind, str) else str(getattr(cls, "name", cls.__name__))
    gs, corpus = inputs or sample_inputs()
    try:
        arm = cls(**(params or {}))
    except (TypeError, RulegaugeError) as exc:
        return ArmCheck(name, (), f"cannot be built without parameters here: {exc}")
    # the run's own cache (embeddings are content-addressed): a second check embeds nothing again;
    # a throwaway run folder for the arms that journal their calls (http)
    with tempfile.TemporaryDirectory(prefix="rulegauge-arm-check-") as run_dir:
        context = ArmContext(cache_dir=cache_dir or cache_root(), name=name, run_dir=Path(run_dir))
        try:
            return _run(name, arm, gs, corpus, context)
        finally:
            close = getattr(arm, "close", None)
            if callable(close):
                close()


def _run(name: str, arm: Any, gs: GoldSet, corpus: Corpus, context: ArmContext) -> ArmCheck:
    problems: list[str] = []
    declared = getattr(type(arm), "name", None)
    if declared is not None and declared != name:
        problems.append(f"the class says name {declared!r}, registered as {name!r}")
    try:
        rule = order_rule(arm)
    except RulegaugeError as exc:
        return ArmCheck(name, (str(exc),))
    check = getattr(arm, "preflight", None)
    try:
        why = check(corpus, gs.questions, context) if callable(check) else None
    except RulegaugeError as exc:
        why = str(exc)
    if why:
        return ArmCheck(name, tuple(problems), f"preflight: {why}")
    qids = [q.question_id for q in gs.questions]
    try:
        arm.prepare(corpus, replace(context, name=name))
        for depth in DEPTHS:
            results = arm.search(gs.questions, depth)
            over = foreign_columns(results, corpus.chunk_columns)  # declared foreign hits: rows of their own
            problems += [f"depth {depth}, question {q}: {p}"
                         for q, p in results_problems(results, qids, over, depth, rule)][:5]
        described = arm.describe()
        json.dumps(described)
        if not isinstance(described, dict):
            problems.append(f"describe() gave a {type(described).__name__}, not a JSON object")
    except (TypeError, ValueError) as exc:
        problems.append(f"describe() is not JSON: {exc}")
    except RulegaugeError as exc:
        return ArmCheck(name, tuple(problems), f"cannot run here: {exc}")
    return ArmCheck(name, tuple(problems))
