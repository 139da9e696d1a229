"""Oracle tests: our fused page metrics agree with ir-measures (trec_eval) and ranx.

Rankings are built through the library path (arm ranks -> fuse -> page lists ->
metrics). Page runs are handed to the oracles with strictly decreasing scores
(1 / page_rank) so no oracle tie rule comes into play. Requirements are single
pages here, where our requirement recall equals R@k.
"""

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import RR, P, R, Success, nDCG

from harness.fusion.configs import FusionConfig
from harness.fusion.fuse import RankMatrix, fuse
from harness.metrics.pages import make_gold, page_lists, page_ranks
from harness.metrics.ranking import compute, parse
from tests.helpers.synthetic import synthetic

METRICS = {"hit@5": Success @ 5, "recall@5": R @ 5, "recall@10": R @ 10, "P@5": P @ 5,
           "MRR@10": RR @ 10, "nDCG@10": nDCG @ 10}


@pytest.mark.parametrize("seed", [1, 2])
def test_page_metrics_match_ir_measures_and_ranx(seed):
    from ranx import Qrels, Run, evaluate

    questions, ar, chunk_pages = synthetic(seed)
    m = RankMatrix.from_arm_ranks(ar, [x.question_id for x in questions], ["a", "b", "c"])
    gold = make_gold(questions, m, chunk_pages)
    cfg = FusionConfig("c", "c", "grid", "rrf", 60.0, ("a", "b", "c"), (1.0, 0.7, 1.3), (30, 40, 50))
    f = fuse(m, cfg)
    specs = [parse(n) for n in METRICS]
    lists, _ = page_lists(f, gold, 10)
    ours = compute(specs, lists)

    prank, first = page_ranks(f, gold)
    run = pd.DataFrame({"query_id": m.question_ids[f.question_index][first].astype(str),
                        "doc_id": [f"{d}#{p}" for d, p in zip(gold.chunk_doc[f.rows][first],
                                                              gold.chunk_pageno[f.rows][first], strict=True)],
                        "score": 1.0 / prank[first]})
    qrels = pd.DataFrame([(x.question_id, p, 1) for x in questions for p in x.relevant_pages],
                         columns=["query_id", "doc_id", "relevance"])
    ref = {(r.query_id, str(r.measure)): r.value
           for r in ir_measures.iter_calc(list(METRICS.values()), qrels, run)}
    for i, question in enumerate(questions):
        for name, measure in METRICS.items():
            assert ours[name][i] == pytest.approx(ref[(question.question_id, str(measure))], abs=1e-12), name

    ranx_names = {"hit@5": "hit_rate@5", "recall@5": "recall@5", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10",
                  "P@5": "precision@5"}
    rq = Qrels.from_dict({x.question_id: {p: 1 for p in x.relevant_pages} for x in questions})
    run_dict: dict[str, dict[str, float]] = {}
    for r in run.itertuples():
        run_dict.setdefault(r.query_id, {})[r.doc_id] = float(r.score)
    rr = Run.from_dict(run_dict)
    got = evaluate(rq, rr, list(ranx_names.values()))
    for name, rname in ranx_names.items():
        assert float(np.mean(ours[name])) == pytest.approx(got[rname], abs=1e-9), name
