"""The first relevant page's rank without ordering the whole list equals the full path's, ties included."""

import numpy as np
import pandas as pd
import pytest

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.metrics.first_relevant import RelevantFacts, first_relevant_ranks, first_relevant_whole
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.page_lists import Candidates, page_lists
from rulegauge.metrics.ranking import parse
from rulegauge.pipeline.sweep import ConfigScores, DenseRanks, score_configs
from tests.helpers.common import q
from tests.helpers.synthetic import synthetic


def rrf(k, arms, weights, depths):
    cid = f"k{k}-{'+'.join(arms)}-{depths[0]}-{weights[0]}"
    return FusionConfig(cid, cid, "grid", "rrf", float(k), arms, tuple(map(float, weights)), depths)


CONFIGS = [rrf(1, ("a", "b", "c"), (1, 1, 1), (100, 100, 100)),  # small k: exact ties everywhere
           rrf(2, ("a", "b"), (1, 1), (60, 60)),  # two unit arms: (r1, r2) ties (r2, r1)
           rrf(20, ("a", "b", "c"), (1, 1, 1), (100, 100, 100)),  # ties not exact in float (5/56)
           rrf(60, ("b", "c"), (0.5, 2.0), (10, 50)),
           FusionConfig("borda", "borda", "grid", "borda", float("nan"), ("a", "b"), (1.0, 1.0), (60, 60)),
           FusionConfig("combsum", "combsum", "grid", "combsum", float("nan"), ("a", "b", "c"), (1.0,) * 3,
                        (100,) * 3, (("norm", "min-max"),))]


def scored(seed, cpp):
    questions, ar, chunk_pages = synthetic(seed, chunks_per_page=cpp)
    ar = ar.assign(score=np.round(10.0 / ar["rank"].to_numpy(), 0))  # coarse arm scores: ties
    m = RankMatrix.from_arm_ranks(ar, [x.question_id for x in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    return m, gold, DenseRanks.build(m), Candidates.build(m, gold)


@pytest.mark.parametrize(("seed", "cpp"), [(3, 1), (5, 2), (8, 3)])
def test_every_question_equals_the_whole_ordered_list(seed, cpp):
    m, gold, dense, cands = scored(seed, cpp)
    for c in CONFIGS:
        o = ConfigScores.of(dense, cands, c)  # every question: the rows are the questions
        got = first_relevant_ranks(o.scores, cands.rel, cands.page, o.tol, o.exact)
        want = page_lists(fuse(m, c), gold, 10).first_rel
        np.testing.assert_array_equal(got, want, err_msg=c.config_id)


def test_ties_at_the_relevant_chunk_are_ordered_by_exact_score_then_id():
    # k=1, arms a, b: every chunk below is ranked (r, s) or (s, r), so pairs tie exactly;
    # relevant page 5 (chunks x5a, x5b) ties with x4 (ahead: smaller id) and x6 (behind)
    rows = [("q1", "a", "x1", 1), ("q1", "b", "x1", 1),
            ("q1", "a", "x2", 2), ("q1", "b", "x3", 2), ("q1", "a", "x3", 3), ("q1", "b", "x2", 3),
            ("q1", "a", "x4", 4), ("q1", "b", "x5b", 4), ("q1", "a", "x5b", 5), ("q1", "b", "x4", 5),
            ("q1", "a", "x6", 6), ("q1", "b", "x6", 6)]
    ar = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank"])
    pages = {"x1": ("d", 1), "x2": ("d", 2), "x3": ("d", 3), "x4": ("d", 4), "x5b": ("d", 5), "x6": ("d", 6)}
    m = RankMatrix.from_arm_ranks(ar, ["q1"], ["a", "b"])
    gold = make_gold([q("q1", "x", ("d#5",))], m, pages)
    c = rrf(1, ("a", "b"), (1, 1), (100, 100))
    assert page_lists(fuse(m, c), gold, 10).first_rel.tolist() == [5.0]  # x1, x2|x3, x4|x5b
    vals = score_configs(m, gold, [c], [parse("first_rel_rank"), parse("MRR@1")], workers=1)[0]
    assert vals["first_rel_rank"].tolist() == [5.0]
    # depth 1, m=2 (x1 and one of x2|x3, no tie across the cut at rank 1): the relevant page lies
    # beyond the selection, in a tie cluster with a page ahead of it (x4)
    o = ConfigScores.of(DenseRanks.build(m), Candidates.build(m, gold), c)
    assert page_lists(o, gold, 1, m=2).first_rel.tolist() == [5.0]


@pytest.mark.parametrize(("seed", "cpp"), [(3, 1), (5, 2), (8, 3), (11, 2)])
def test_counting_over_the_whole_list_equals_the_ordered_list(seed, cpp):
    # cpp > 1: several chunks per page (the page groups count distinct pages); coarse arm
    # scores and small k: exact ties at the relevant chunk in many questions
    m, gold, dense, cands = scored(seed, cpp)
    for c in CONFIGS:
        o = ConfigScores.of(dense, cands, c)
        got = first_relevant_whole(o.scores, cands.rel, cands.page, cands.relevant, o.tol, o.exact)
        np.testing.assert_array_equal(got, page_lists(fuse(m, c), gold, 10).first_rel, err_msg=c.config_id)
        np.testing.assert_array_equal(got, first_relevant_ranks(o.scores, cands.rel, cands.page, o.tol, o.exact))
        if o.ties:  # clusters in column order, without exact()
            np.testing.assert_array_equal(got, first_relevant_whole(o.scores, cands.rel, cands.page, cands.relevant,
                                                                    o.tol, o.exact, ties=True))


def test_relevant_facts_group_candidates_by_question_then_page():
    page = np.array([[4, 2, 4, -1], [1, 3, 5, 7], [-1, -1, -1, -1]])
    rel = np.array([[False, True, False, False], [True, False, True, False], [False] * 4])
    f = RelevantFacts.of(page, rel)
    assert f.cols.tolist() == [[1, -1], [0, 2], [-1, -1]]
    assert f.order is not None and f.starts is not None and f.qstarts is not None
    # question 0: page 2 (column 1), page 4 (columns 0, 2); question 1: four pages; question 2: none
    assert f.order.tolist() == [1, 0, 2, 4, 5, 6, 7]
    assert f.starts.tolist() == [0, 1, 3, 4, 5, 6]
    assert f.qstarts.tolist() == [0, 2, 6, 6]
    single = RelevantFacts.of(np.array([[1, 2, -1], [3, 4, 5]]), np.zeros((2, 3), bool))
    assert single.order is None and single.cols.tolist() == [[-1], [-1]]


@pytest.mark.parametrize(("seed", "cpp"), [(5, 2), (8, 3), (3, 1)])
def test_facts_of_some_questions_equal_the_facts_built_for_them(seed, cpp):
    # the fast path counts only the questions whose first relevant page lies beyond the top
    _, _, dense, cands = scored(seed, cpp)
    f = cands.relevant
    nq, u = cands.page.shape
    rng = np.random.default_rng(seed)
    for sel in (np.arange(nq), np.sort(rng.choice(nq, nq // 3, replace=False)), np.array([nq - 1]), np.arange(0)):
        sub, built = f.rows(sel, u), RelevantFacts.of(cands.page[sel], cands.rel[sel])
        np.testing.assert_array_equal(sub.cols[:, : built.cols.shape[1]], built.cols)
        assert (sub.cols[:, built.cols.shape[1]:] == -1).all()
        if built.order is not None:
            np.testing.assert_array_equal(sub.order, built.order)
            np.testing.assert_array_equal(sub.starts, built.starts)
            np.testing.assert_array_equal(sub.qstarts, built.qstarts)
        for c in CONFIGS:
            o = ConfigScores.of(dense, cands, c)
            whole = first_relevant_whole(o.scores, cands.rel, cands.page, f, o.tol, o.exact)
            got = first_relevant_whole(o.scores[sel], cands.rel[sel], cands.page[sel], sub, o.tol,
                                       lambda i, k, cols, sel=sel, o=o: o.exact(sel[i], k, cols))
            np.testing.assert_array_equal(got, whole[sel], err_msg=c.config_id)
            some = first_relevant_whole(o.scores, cands.rel, cands.page, f, o.tol, o.exact, rows=sel)
            np.testing.assert_array_equal(some, whole[sel], err_msg=c.config_id)


def test_whole_list_counts_by_hand():
    # one question, keys by column; relevant: column 3 (page 30). Ahead: columns 0 and 1 (pages
    # 10, 11: 11 twice), column 2 ties column 3 exactly and comes first (smaller id)
    s = np.array([[0.9, 0.8, 0.5, 0.5, 0.7, 0.1]])
    page = np.array([[10, 11, 12, 30, 11, 13]])
    rel = np.array([[False, False, False, True, False, False]])

    def exact(rows, keys, cand):  # key desc, then column
        return np.array([sorted(r, key=lambda j: (-keys[i, j], j)) for i, r in enumerate(cand.tolist())])

    got = first_relevant_whole(s, rel, page, RelevantFacts.of(page, rel), 0.0, exact)
    assert got.tolist() == [4.0]  # pages 10, 11, 12 ahead
    assert first_relevant_whole(s, rel, page, RelevantFacts.of(page, rel), 0.0, exact, ties=True).tolist() == [4.0]
    assert first_relevant_whole(s, np.zeros_like(rel), page, RelevantFacts.of(page, np.zeros_like(rel)),
                                0.0, exact).tolist() == [np.inf]
