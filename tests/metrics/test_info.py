"""The metric-info registry: one declaration per metric, read by everything else."""

import numpy as np
import pandas as pd
import pytest

from rulegauge.answering.answer_metrics import answer_metric_names
from rulegauge.core import plugins
from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.metrics.family import METRICS, OTHER_NAMES, alias, declare
from rulegauge.metrics.info import aggregate, known_metric_names, metric_info, resolve, scope_mask
from rulegauge.metrics.peer_names import shown
from tests.helpers.common import REPO


def test_every_declared_metric_is_computed_by_one_registry():
    for name, fam in METRICS.items():
        assert callable(fam.compute), name  # raises for a declaration nothing computes
    answer = set(answer_metric_names())
    assert answer == {n for n, f in METRICS.items() if f.kind == "answer"} and "fence_pass" in answer


def test_declarations_are_checked_and_duplicates_raise():
    with pytest.raises(RegistryError, match="duplicate metric name 'hit'"):
        declare("hit", kind="ranking", direction="higher", scope="answerable", description="x")
    with pytest.raises(RegistryError, match="direction 'up' is not one of"):
        declare("new_metric_x", kind="ranking", direction="up", scope="answerable", description="x")
    with pytest.raises(RegistryError, match="already means 'hit'"):
        alias("Success", "recall", source="test")


def test_facts_of_ranking_score_and_answer_metrics():
    hit, frr, ratio = metric_info("hit@5"), metric_info("first_rel_rank"), metric_info("top_score_ratio")
    assert hit is not None and hit.higher_is_better and hit.scope == "answerable" and hit.aggregate == "mean"
    assert frr is not None and not frr.higher_is_better and frr.aggregate == "median"
    assert ratio is not None and ratio.scope == "all" and ratio.kind == "score"
    fence, latency = metric_info("fence_pass"), metric_info("latency_ms")
    assert fence is not None and fence.scope == "responded" and fence.kind == "answer"
    assert latency is not None and not latency.higher_is_better
    assert metric_info("abstained") is None  # declared, but no better direction
    assert resolve("abstained").family.direction == "none"
    judged = metric_info("Judged@10")
    assert judged is not None and judged.needs == {"judgments"} and judged.higher_is_better
    assert metric_info("no-such-metric") is None
    assert "abstained" not in known_metric_names() and "hit@k" in known_metric_names()


def test_aliases_resolve_everywhere_and_notes_say_where_meanings_differ():
    assert resolve("RR@10").name == "MRR@10"
    info = metric_info("Success@5")
    assert info is not None and info.name == "hit@5"
    notes = {a.name: a.note for a in OTHER_NAMES}
    assert "ndcg_burges" in notes["ndcg"] and {a.family for a in OTHER_NAMES if a.name == "R"} == {"R"}


def test_scope_mask_per_row_and_aggregates():
    frame = pd.DataFrame({"metric": ["hit@5", "hit@5", "fence_pass", "fence_pass", "latency_ms"],
                          "answerable": [True, False, True, True, False],
                          "outcome": ["answered", "answered", "error", "abstained", "error"]})
    assert scope_mask(frame, frame["metric"]).tolist() == [True, False, False, True, True]
    assert scope_mask(frame, "hit@5").tolist() == [True, False, True, True, False]
    with pytest.raises(RulegaugeError, match="needs answer outcomes"):
        scope_mask(frame.drop(columns="outcome"), "fence_pass")
    assert aggregate("first_rel_rank", np.array([1.0, 2.0, 9.0])) == 2.0
    assert aggregate("hit@5", np.array([1.0, 0.0, 0.0, 1.0])) == 0.5


def test_docs_list_every_metric_and_every_other_tools_name():
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    for name, fam in METRICS.items():  # rulegauge's own: an installed package documents its metrics itself
        assert f"`{fam.label}`" in text or plugins.origin("rulegauge.metrics", name) != plugins.BUILTIN, name
    for a in OTHER_NAMES:
        assert f"`{shown(a.name, cutoff=METRICS.get(a.family).takes_cutoff)}`" in text, a.name
