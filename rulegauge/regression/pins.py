"""Pins and their notes: the pins a policy makes on ``hit@k`` that an errata page can slip through.

A question pinned on ``hit@k`` with several requirements keeps its hit on any one relevant
page, so an errata page can be lost while the pin holds (the errata trap, ``docs/gate.md``):
:func:`pin_notes` names each such pin and suggests ``recall@k``, which keeps every
requirement.
"""

from __future__ import annotations

import json

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.ranking import parse
from rulegauge.regression.policy import Policy
from rulegauge.store.baseline import Side


def pin_notes(policy: Policy, base: Side) -> tuple[str, ...]:
    """A note for every question pinned on ``hit@k`` with more than one requirement
    (from the base's ``questions`` table; none without it)."""
    if not base.has_table("questions"):
        return ()
    q = base.table("questions")
    n_req = {str(i): len(json.loads(r)) for i, r in zip(q["question_id"], q["requirements"],
                                                        strict=True)}
    out = []
    for mp in policy.metrics:
        try:
            spec = parse(mp.metric)
        except RulegaugeError:  # an answer metric: no requirements involved
            continue
        if spec.family.name != "hit":
            continue
        for qid in mp.pinned:
            if n_req.get(qid, 0) > 1:
                out.append(f"pinned {qid} on {mp.metric} has {n_req[qid]} requirements: its hit "
                           f"holds with any one relevant page, so losing the others (an errata "
                           f"page) passes; pin it on recall@{spec.cutoff} to keep them all")
    return tuple(out)

