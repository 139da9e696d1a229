"""Oracle tests: our fused page metrics agree with ir-measures (trec_eval) and ranx.

Rankings are built through the library path (arm ranks -> fuse -> page lists ->
metrics). Page runs are handed to the oracles with strictly decreasing scores
(1 / page_rank) so no oracle tie rule comes into play. Requirements are single
pages here, where our requirement recall equals R@k. The ranx comparison compiles
numba kernels (about a minute on a cold cache), so it is marked slow; the
ir_measures comparisons (trec_eval underneath) are quick.
"""

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import AP, RR, Judged, P, R, Success, nDCG

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.page_lists import page_ranks
from rulegauge.metrics.ranking import parse, score
from tests.helpers.synthetic import synthetic, with_judgments

METRICS = {"hit@5": Success @ 5, "recall@5": R @ 5, "recall@10": R @ 10, "R@5": R @ 5, "R@10": R @ 10,
           "P@5": P @ 5, "MRR@10": RR @ 10, "recip_rank": RR, "nDCG@10": nDCG @ 10}


def _graded(questions: list[Question], seed: int) -> list[Question]:
    """The same questions with a seeded grade 1-3 on every relevant page."""
    rng = np.random.default_rng(seed)
    return [Question(x.question_id, x.question, x.language,
                     tuple(tuple(PageRef(r.doc_id, r.page, int(rng.integers(1, 4))) for r in req)
                           for req in x.requirements), game=x.game) for x in questions]


def _ours_and_oracle_run(seed: int, graded: bool, names: list[str], *, judged: bool = False):
    questions, ar, chunk_pages = synthetic(seed)
    if graded:
        questions = _graded(questions, seed)
    if judged:
        questions = with_judgments(questions, seed)
    m = RankMatrix.from_arm_ranks(ar, [x.question_id for x in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    cfg = FusionConfig("c", "c", "grid", "rrf", 60.0, ("a", "b", "c"), (1.0, 0.7, 1.3), (30, 40, 50))
    f = fuse(m, cfg)
    specs = [parse(n) for n in names]
    ours = score(specs, f, gold)
    prank, first = page_ranks(f, gold)
    run = pd.DataFrame({"query_id": m.question_ids[f.question_index][first].astype(str),
                        "doc_id": [f"{d}#{p}" for d, p in zip(gold.chunk_doc[f.rows][first],
                                                              gold.chunk_pageno[f.rows][first], strict=True)],
                        "score": 1.0 / prank[first]})
    qrels = pd.DataFrame([(x.question_id, p, x.page_grades.get(p, 0)) for x in questions
                          for p in sorted(x.judged_pages())],  # judged non-relevant: grade 0
                         columns=["query_id", "doc_id", "relevance"])
    return questions, ours, run, qrels


@pytest.mark.parametrize("seed", [1, 2])
def test_map_and_graded_ndcg_match_ir_measures(seed):
    measures = {"MAP@5": AP @ 5, "MAP@10": AP @ 10, "nDCG@5": nDCG @ 5, "nDCG@10": nDCG @ 10}
    questions, ours, run, qrels = _ours_and_oracle_run(seed, True, list(measures))
    assert qrels["relevance"].max() > 1  # really graded
    ref = {(r.query_id, str(r.measure)): r.value
           for r in ir_measures.iter_calc(list(measures.values()), qrels, run)}
    for i, question in enumerate(questions):
        for name, measure in measures.items():
            assert ours[name][i] == pytest.approx(ref[(question.question_id, str(measure))], abs=1e-12), name


@pytest.mark.parametrize("seed", [1, 2])
def test_page_metrics_match_ir_measures(seed):
    questions, ours, run, qrels = _ours_and_oracle_run(seed, False, list(METRICS))
    ref = {(r.query_id, str(r.measure)): r.value
           for r in ir_measures.iter_calc(list(METRICS.values()), qrels, run)}
    for i, question in enumerate(questions):
        for name, measure in METRICS.items():
            assert ours[name][i] == pytest.approx(ref[(question.question_id, str(measure))], abs=1e-12), name


@pytest.mark.parametrize(("seed", "graded"), [(1, False), (2, False), (3, True)])
def test_judged_and_condensed_lists_match_ir_measures_judged_only(seed, graded):
    """Judged@k, and nDCG / AP / P on the condensed list (trec_eval -J: unjudged
    documents removed before the cutoff), with pages judged non-relevant and judged
    relevant beyond the requirements."""
    measures = [Judged @ 5, Judged @ 10, nDCG(judged_only=True) @ 5, nDCG(judged_only=True) @ 10,
                AP(judged_only=True) @ 10, P(judged_only=True) @ 5, nDCG @ 10, AP @ 10]
    names = [str(m).replace("AP", "MAP") for m in measures]
    questions, ours, run, qrels = _ours_and_oracle_run(seed, graded, names, judged=True)
    assert (qrels["relevance"] == 0).sum() > len(questions) and set(qrels["relevance"]) >= {0, 1}
    ref = {(r.query_id, str(r.measure)): r.value for r in ir_measures.iter_calc(measures, qrels, run)}
    changed = 0
    for i, question in enumerate(questions):
        for name, measure in zip(names, measures, strict=True):
            assert ours[name][i] == pytest.approx(ref[(question.question_id, str(measure))], abs=1e-12), name
        changed += ours["nDCG(judged_only=True)@10"][i] != ours["nDCG@10"][i]
    assert changed > len(questions) // 2  # the condensed list really is another list


def test_condensed_recall_and_judged_follow_the_formulas():
    from rulegauge.goldset.records import PageJudgment
    from rulegauge.metrics.ranking import score_ranking
    from tests.helpers.common import q

    question = q("q", "x", ("d#2",), ("d#7",))
    question = Question(question.question_id, question.question, question.language, question.requirements,
                        judged=(PageJudgment("d", 3, 0, "human", "alice"),))  # d#3 judged non-relevant
    pages = ["d#1", "d#3", "d#9", "d#2", "d#7"]  # unjudged: d#1, d#9
    v = score_ranking(pages, question, ["Judged@2", "Judged@5", "Judged@10", "recall@2",
                                        "recall(judged_only=True)@2", "hit(judged_only=True)@1",
                                        "MRR(judged_only=True)@10", "P(judged_only=True)@2"])
    assert v["Judged@2"] == 1 / 2 and v["Judged@5"] == 3 / 5
    assert v["Judged@10"] == 3 / 5  # min(k, pages ranked): ir_measures' convention
    assert v["recall@2"] == 0.0 and v["recall(judged_only=True)@2"] == 1 / 2  # condensed: d#3 d#2 d#7
    assert v["hit(judged_only=True)@1"] == 0.0 and v["MRR(judged_only=True)@10"] == 1 / 2
    assert v["P(judged_only=True)@2"] == 1 / 2
    assert score_ranking([], question, ["Judged@5"]) == {"Judged@5": 0.0}  # nothing ranked


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_page_metrics_match_ranx(seed):
    from ranx import Qrels, Run, evaluate  # deferred: heavy import (numba)

    ranx_names = {"hit@5": "hit_rate@5", "R@5": "recall@5", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10",
                  "P@5": "precision@5", "MAP@10": "map@10"}
    questions, ours, run, _ = _ours_and_oracle_run(seed, False, list(ranx_names))
    for name, rname in ranx_names.items():  # the alias table maps ranx's name to ours; ranx's recall is R
        assert parse(rname).name == name or (rname, name) == ("recall@5", "R@5")
    rq = Qrels.from_dict({x.question_id: {p: 1 for p in x.relevant_pages} for x in questions})
    run_dict: dict[str, dict[str, float]] = {}
    for r in run.itertuples():
        run_dict.setdefault(r.query_id, {})[r.doc_id] = float(r.score)
    rr = Run.from_dict(run_dict)
    got = evaluate(rq, rr, list(ranx_names.values()))
    for name, rname in ranx_names.items():
        assert float(np.mean(ours[name])) == pytest.approx(got[rname], abs=1e-9), name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rbp_matches_ir_measures_rbp(seed):
    """RBP(p)@k (Moffat & Zobel 2008) against ir_measures' RBP(p=...)@k (its trectools
    provider, the one that computes RBP) on binary judgments, where its graded gain is our
    binary one (ir_measures' RBP(rel=1) is the same number; that provider does not take rel)."""
    pytest.importorskip("trectools", reason="ir_measures computes RBP through trectools (the dev extra)")
    from ir_measures import RBP

    ours_names = ["RBP@10", "RBP(p=0.8)@5", "RBP(p=0.5)@10", "RBP(p=0.95)@20"]
    measures = [RBP @ 10, RBP(p=0.8) @ 5, RBP(p=0.5) @ 10, RBP(p=0.95) @ 20]
    questions, ours, run, qrels = _ours_and_oracle_run(seed, seed == 3, ours_names, judged=True)
    assert qrels["relevance"].max() > 1 or seed != 3
    qrels = qrels.assign(relevance=(qrels["relevance"] >= 1).astype(int))  # rel=1: every grade >= 1 counts once
    # one measure per call: ir_measures 0.4.3's trectools provider binds the last measure's p and
    # cutoff to every invocation of a call (a late-binding closure)
    ref = {(r.query_id, str(r.measure)): r.value for m in measures
           for r in ir_measures.trectools.iter_calc([m], qrels, run)}
    nonzero = 0
    for i, question in enumerate(questions):
        for name, measure in zip(ours_names, measures, strict=True):
            key = parse(name).name
            want = ref.get((question.question_id, str(measure)), 0.0)
            assert ours[key][i] == pytest.approx(want, abs=1e-12), (name, question.question_id)
            nonzero += ours[key][i] > 0
    assert nonzero > len(questions)  # the comparison is not over zeros
