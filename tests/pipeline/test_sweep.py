"""The scoring path of `rulegauge run` equals the full path on every metric, ties and page collapse included."""

import numpy as np
import pandas as pd
import pytest

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.page_lists import Candidates, page_lists
from rulegauge.metrics.pages import metrics_frame
from rulegauge.metrics.ranking import compute, parse
from rulegauge.pipeline.sweep import ConfigScores, DenseRanks, score_configs, sweep
from tests.helpers.synthetic import synthetic, with_judgments

METRICS = ["hit@1", "hit@5", "recall@10", "MRR@10", "nDCG@10", "MAP@10", "P@5", "top_score",
           "top_score_ratio", "first_rel_rank", "Judged@10", "nDCG(judged_only=True)@10",
           "MAP(judged_only=True)@10", "recall(judged_only=True)@5", "MRR(judged_only=True)@10"]


def configs():
    out = []
    for k in (1.0, 2.0, 20.0, 60.0):  # small k: many exact ties at the top-m boundary
        for arms, w, d in ((("a", "b", "c"), (1, 1, 1), (100, 100, 100)), (("a", "b"), (1, 1), (3, 3)),
                           (("b", "c"), (0.5, 2.0), (10, 50)), (("a", "b"), (1, 0.5), (60, 60)),
                           (("a", "c"), (0.1, 0.3), (40, 40))):
            cid = f"k{k}-{'+'.join(arms)}-{d[0]}"
            out.append(FusionConfig(cid, cid, "grid", "rrf", k, arms, tuple(map(float, w)), d))
    return out


def graded_questions(questions, seed):
    """Grades 1-3 on every relevant page: graded nDCG on both paths."""
    rng = np.random.default_rng(seed)
    return [Question(x.question_id, x.question, x.language,
                     tuple(tuple(PageRef(r.doc_id, r.page, int(rng.integers(1, 4))) for r in req)
                           for req in x.requirements), game=x.game) for x in questions]


@pytest.mark.parametrize(("seed", "graded"), [(3, False), (4, False), (3, True)])
def test_topk_page_lists_equal_full_path(seed, graded):
    questions, ar, chunk_pages = synthetic(seed, chunks_per_page=3)
    if graded:
        questions = graded_questions(questions, seed)
    questions = with_judgments(questions, seed)
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    dense, cands = DenseRanks.build(m), Candidates.build(m, gold)
    specs = [parse(x) for x in METRICS]
    for c in configs():
        full = page_lists(fuse(m, c), gold, 10)
        fast = page_lists(ConfigScores.of(dense, cands, c), gold, 10, m=11)  # a small m: boundary fallbacks
        assert (full.rel == fast.rel).all() and (full.req == fast.req).all(), c.config_id
        assert (full.judged == fast.judged).all() and (full.n_pages == fast.n_pages).all(), c.config_id
        a, b = compute(specs, full), compute(specs, fast)
        for name in a:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"{c.config_id} {name}")
        cf = page_lists(fuse(m, c), gold, 10, judged_only=True)
        cs = page_lists(ConfigScores.of(dense, cands, c), gold, 10, judged_only=True, whole_list=False, m=11)
        assert (cf.rel == cs.rel).all() and (cf.n_pages == cs.n_pages).all()
        assert (cf.judged == (np.arange(10)[None, :] < cf.n_pages[:, None])).all()  # nothing unjudged left


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


def test_score_configs_equal_full_path_per_question_every_metric():
    specs = [parse(x) for x in METRICS]
    for seed, cpp, graded in ((5, 2, False), (8, 3, False), (9, 1, False), (8, 3, True)):
        questions, ar, chunk_pages = synthetic(seed, chunks_per_page=cpp)
        if graded:
            questions = graded_questions(questions, seed)
        questions = with_judgments(questions, seed)  # judged pages: Judged@k, condensed lists
        m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
        gold = make_gold(questions, m, chunk_pages)
        cfgs = configs()
        fast = score_configs(m, gold, cfgs, specs, workers=2)
        for c, vals in zip(cfgs, fast, strict=True):
            tab = metrics_frame(fuse(m, c), gold, specs)
            for s in specs:
                want = tab[tab["metric"] == s.name]["value"].to_numpy()
                np.testing.assert_array_equal(vals[s.name], want, err_msg=f"{seed} {c.config_id} {s.name}")


def test_exact_ties_not_exact_in_float_decide_the_page_list():
    # k=20: chunk x2 has ranks (20, 8, 15), x1 has (1, 4, -): both exactly 5/56, floats differ;
    # the tie goes to the smaller chunk id (x1) whichever float is larger
    from tests.helpers.common import q

    ar = pd.DataFrame([("q1", "a", "x2", 20), ("q1", "b", "x2", 8), ("q1", "c", "x2", 15),
                       ("q1", "a", "x1", 1), ("q1", "b", "x1", 4)],
                      columns=["question_id", "arm", "chunk_id", "rank"])
    questions = [q("q1", "x", ("d#2",))]
    m = RankMatrix.from_arm_ranks(ar, ["q1"], ["a", "b", "c"])
    gold = make_gold(questions, m, {"x1": ("d", 1), "x2": ("d", 2)})
    c = FusionConfig("k20", "k20", "grid", "rrf", 20.0, ("a", "b", "c"), (1.0, 1.0, 1.0), (100, 100, 100))
    f = fuse(m, c)
    assert m.chunk_ids[f.rows].tolist() == ["x1", "x2"]
    vals = score_configs(m, gold, [c], [parse("first_rel_rank"), parse("MRR@10")], workers=1)[0]
    assert vals["first_rel_rank"].tolist() == [2.0] and vals["MRR@10"].tolist() == [1 / 2]


def method_configs():
    """Every fusion method with its choice parameters, on a few arm sets and depths."""
    import math

    from rulegauge.fusion.method import FUSION_METHODS

    variants = {"combsum": [("norm", n) for n in ("min-max", "z-score", "sum")],
                "combmnz": [("norm", n) for n in ("min-max", "z-score", "sum")],
                "hybrid": [(("norm", n), ("mean", m)) for n in ("min-max", "l2")
                           for m in ("arithmetic", "geometric", "harmonic")]}
    out = []
    for name in FUSION_METHODS.names():
        for opts in variants.get(name, [()]):
            opts = tuple(sorted(opts if opts and isinstance(opts[0], tuple) else ([opts] if opts else [])))
            for arms, w, d in ((("a", "b", "c"), (1.0, 1.0, 1.0), (100, 100, 100)),
                               (("a", "b"), (1.0, 0.5), (3, 60)), (("b", "c"), (0.5, 2.0), (10, 50))):
                cid = f"{name}-{opts}-{'+'.join(arms)}-{d[0]}"
                out.append(FusionConfig(cid, cid, "grid", name, 20.0 if name == "rrf" else math.nan, arms, w, d,
                                        opts))
    return out


def test_every_fusion_method_scores_as_the_full_path():
    specs = [parse(x) for x in METRICS]
    for seed, cpp in ((5, 2), (8, 3)):
        questions, ar, chunk_pages = synthetic(seed, chunks_per_page=cpp)
        # coarse arm scores: many exact ties in every normalisation
        ar = ar.assign(score=np.round(10.0 / ar["rank"].to_numpy(), 0) + (ar["arm"] == "a") * 3.0)
        m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], ["a", "b", "c"])
        gold = make_gold(questions, m, chunk_pages)
        cfgs = method_configs()
        fast = score_configs(m, gold, cfgs, specs, workers=2)
        for c, vals in zip(cfgs, fast, strict=True):
            tab = metrics_frame(fuse(m, c), gold, specs)
            for s in specs:
                want = tab[tab["metric"] == s.name]["value"].to_numpy()
                np.testing.assert_array_equal(vals[s.name], want, err_msg=f"{seed} {c.config_id} {s.name}")
