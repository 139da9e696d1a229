"""The fast sweep path equals the full scoring path, ties and page collapse included."""

import numpy as np
import pandas as pd
import pytest

from harness.fusion.configs import FusionConfig
from harness.fusion.fuse import RankMatrix, fuse
from harness.goldset.records import PageRef, Question
from harness.metrics.pages import make_gold, metrics_frame, page_lists
from harness.metrics.ranking import compute, parse
from harness.pipeline.sweep import DenseRanks, page_lists_topk, sweep
from tests.helpers.synthetic import synthetic

METRICS = ["hit@1", "hit@5", "recall@10", "MRR@10", "nDCG@10", "MAP@10", "P@5", "top_score"]


def configs():
    out = []
    for k in (1.0, 2.0, 60.0):  # small k: many exact ties at the top-m boundary
        for arms, w, d in ((("a", "b", "c"), (1, 1, 1), (100, 100, 100)), (("a", "b"), (1, 1), (3, 3)),
                           (("b", "c"), (0.5, 2.0), (10, 50))):
            cid = f"k{k}-{'+'.join(arms)}-{d[0]}"
            out.append(FusionConfig(cid, cid, "grid", "rrf", k, arms, tuple(map(float, w)), d))
    return out


@pytest.mark.parametrize(("seed", "graded"), [(3, False), (4, False), (3, True)])
def test_topk_page_lists_equal_full_path(seed, graded):
    questions, ar, chunk_pages = synthetic(seed, chunks_per_page=3)
    if graded:  # grades 1-3 on every relevant page: graded nDCG on both paths
        rng = np.random.default_rng(seed)
        questions = [Question(x.question_id, x.question, x.language,
                              tuple(tuple(PageRef(r.doc_id, r.page, int(rng.integers(1, 4))) for r in req)
                                    for req in x.requirements), game=x.game) for x in questions]
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    dense = DenseRanks.build(m, gold)
    specs = [parse(x) for x in METRICS]
    for c in configs():
        full, _ = page_lists(fuse(m, c), gold, 10)
        fast = page_lists_topk(dense, gold, c, 10, m=11)  # a small m forces boundary fallbacks
        assert (full.rel == fast.rel).all() and (full.req == fast.req).all(), c.config_id
        a, b = compute(specs, full), compute(specs, fast)
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"{c.config_id} {name}")


def test_sweep_means_equal_metrics_table_and_ignore_thread_count():
    questions, ar, chunk_pages = synthetic(5, chunks_per_page=2)
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    cfgs = configs()
    one = sweep(m, gold, cfgs, METRICS, workers=1)
    two = sweep(m, gold, cfgs, METRICS, workers=2)
    pd.testing.assert_frame_equal(one, two)
    specs = [parse(x) for x in METRICS]
    for c in cfgs:
        tab = metrics_frame(fuse(m, c), gold, specs)
        means = tab[tab["answerable"]].groupby("metric")["value"].mean()
        row = one.set_index("config_id").loc[c.config_id]
        for name in METRICS:
            assert row[name] == pytest.approx(means[name], abs=1e-15)


def test_sweep_refuses_first_rel_rank():
    questions, ar, chunk_pages = synthetic(6, n_q=3)
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
    with pytest.raises(ValueError, match="whole fused list"):
        sweep(m, make_gold(questions, m, chunk_pages), configs()[:1], ["first_rel_rank"])
