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
from ir_measures import AP, RR, P, R, Success, nDCG

from harness.fusion.configs import FusionConfig
from harness.fusion.fuse import RankMatrix, fuse
from harness.goldset.records import PageRef, Question
from harness.metrics.gold import make_gold
from harness.metrics.page_lists import page_lists, page_ranks
from harness.metrics.ranking import compute, parse
from tests.helpers.synthetic import synthetic

METRICS = {"hit@5": Success @ 5, "recall@5": R @ 5, "recall@10": R @ 10, "P@5": P @ 5,
           "MRR@10": RR @ 10, "nDCG@10": nDCG @ 10}


def _graded(questions: list[Question], seed: int) -> list[Question]:
    """The same questions with a seeded grade 1-3 on every relevant page."""
    rng = np.random.default_rng(seed)
    return [Question(x.question_id, x.question, x.language,
                     tuple(tuple(PageRef(r.doc_id, r.page, int(rng.integers(1, 4))) for r in req)
                           for req in x.requirements), game=x.game) for x in questions]


def _ours_and_oracle_run(seed: int, graded: bool, names: list[str]):
    questions, ar, chunk_pages = synthetic(seed)
    if graded:
        questions = _graded(questions, seed)
    m = RankMatrix.from_arm_ranks(ar, [x.question_id for x in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    cfg = FusionConfig("c", "c", "grid", "rrf", 60.0, ("a", "b", "c"), (1.0, 0.7, 1.3), (30, 40, 50))
    f = fuse(m, cfg)
    specs = [parse(n) for n in names]
    lists = page_lists(f, gold, max(s.cutoff or 1 for s in specs))
    ours = compute(specs, lists)
    prank, first = page_ranks(f, gold)
    run = pd.DataFrame({"query_id": m.question_ids[f.question_index][first].astype(str),
                        "doc_id": [f"{d}#{p}" for d, p in zip(gold.chunk_doc[f.rows][first],
                                                              gold.chunk_pageno[f.rows][first], strict=True)],
                        "score": 1.0 / prank[first]})
    qrels = pd.DataFrame([(x.question_id, p, g) for x in questions for p, g in x.page_grades.items()],
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


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_page_metrics_match_ranx(seed):
    from ranx import Qrels, Run, evaluate  # deferred: heavy import (numba)

    ranx_names = {"hit@5": "hit_rate@5", "recall@5": "recall@5", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10",
                  "P@5": "precision@5", "MAP@10": "map@10"}
    questions, ours, run, _ = _ours_and_oracle_run(seed, False, list(ranx_names))
    for name, rname in ranx_names.items():
        assert parse(rname).name == name  # the alias table maps ranx's name to ours
    rq = Qrels.from_dict({x.question_id: {p: 1 for p in x.relevant_pages} for x in questions})
    run_dict: dict[str, dict[str, float]] = {}
    for r in run.itertuples():
        run_dict.setdefault(r.query_id, {})[r.doc_id] = float(r.score)
    rr = Run.from_dict(run_dict)
    got = evaluate(rq, rr, list(ranx_names.values()))
    for name, rname in ranx_names.items():
        assert float(np.mean(ours[name])) == pytest.approx(got[rname], abs=1e-9), name
