"""Peer metric names mean what the peer means (issue 42, item 4).

A run on the sample names its metrics as ir_measures' and trec_eval's users write them; on the
lists ``rulegauge export`` writes of that run, read by ir_measures as its users read them
(pytrec_eval, trec_eval's own code, underneath), every one equals ir_measures' value question by
question. ``R@5`` is relevant-page recall (ir_measures' and trec_eval's), not rulegauge's
requirement recall; a peer name rulegauge does not compute is refused with the nearest name.
"""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest
from ir_measures import AP, RR, P, R, Success, nDCG

from rulegauge.core.errors import RegistryError
from rulegauge.interop.export import export_run
from rulegauge.metrics.ranking import parse
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

CID = "rrf_k60_bm25+boost"
PEERS = {  # as the tool's users write it -> (rulegauge's canonical name, ir_measures' measure)
    "R@5": ("R@5", R @ 5), "recall_10": ("R@10", R @ 10), "P_5": ("P@5", P @ 5),
    "ndcg_cut_10": ("nDCG@10", nDCG @ 10), "map_cut_10": ("MAP@10", AP @ 10), "AP@5": ("MAP@5", AP @ 5),
    "success_5": ("hit@5", Success @ 5), "recip_rank": ("recip_rank", RR), "RR": ("recip_rank", RR),
    "RR@10": ("MRR@10", RR @ 10),
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """The sample's lexical run, scored with the peers' names and ``recall@5``, and its export."""
    runs = tmp_path_factory.mktemp("runs")
    r = Run(run(RunOptions(config=LEXICAL, runs_dir=runs, run_id="peers",
                           metrics=(*PEERS, "recall@5"))).path)
    out = tmp_path_factory.mktemp("export")
    export_run(r, out)
    return r, out


def _ours(r: Run) -> dict[tuple[str, str], float]:
    m = r.table("metrics")
    m = m[(m["config_id"] == CID) & m["answerable"]]
    return {(row.question_id, row.metric): float(row.value) for row in m.itertuples()}


def test_every_peer_name_equals_ir_measures_per_question_on_the_exported_run(sample):
    r, exported = sample
    ours = _ours(r)
    assert {name for _, name in ours} == {c for c, _ in PEERS.values()} | {"recall@5"}  # stored canonical
    qrels = list(ir_measures.read_trec_qrels(str(exported / "qrels.txt")))
    trec = list(ir_measures.read_trec_run(str(exported / f"{CID}.trec")))
    measures = sorted({m for _, m in PEERS.values()}, key=str)
    ref = {(x.query_id, str(x.measure)): x.value for x in ir_measures.iter_calc(measures, qrels, trec)}
    questions = {q for q, _ in ours}
    assert len(questions) == 51  # every answerable question of the sample
    for written, (canonical, measure) in PEERS.items():
        for qid in questions:
            assert ours[(qid, canonical)] == pytest.approx(ref[(qid, str(measure))], abs=1e-12), (written, qid)
    # R@5 is not requirement recall: the sample's any-of questions tell them apart
    n = len(questions)
    r5, recall5 = (sum(ours[(q, m)] for q in questions) / n for m in ("R@5", "recall@5"))
    assert (round(r5, 3), round(recall5, 3)) == (0.647, 0.725)


def test_recip_rank_reads_the_whole_list_and_rr_at_k_cuts_it(sample):
    r, _ = sample
    ours = _ours(r)
    beyond = [q for q, m in ours if m == "MRR@10" and ours[(q, "MRR@10")] == 0 < ours[(q, "recip_rank")]]
    assert beyond  # a first relevant page below rank 10 counts for recip_rank only
    for q in beyond:
        assert ours[(q, "recip_rank")] < 1 / 10


@pytest.mark.parametrize(("name", "nearest"), [
    ("hits@5", "P@k (hits@k / k)"), ("ndcg_burges@10", "nDCG@k"), ("bpref", "nDCG(judged_only=True)@k"),
    ("recip_rank@10", "recip_rank (the whole list) or MRR@k"), ("Rprec", "R@k"), ("f1@5", "P@k and R@k")])
def test_a_peer_metric_rulegauge_does_not_compute_is_refused_with_the_nearest_name(name, nearest):
    with pytest.raises(RegistryError, match="is not computed by rulegauge") as err:
        parse(name)
    assert f"the nearest rulegauge metric is {nearest}" in str(err.value)


def test_trec_eval_spellings_keep_a_family_of_that_shape_and_need_its_alias():
    assert parse("NDCG_CUT_10").name == "nDCG@10" and parse("p_5").name == "P@5"
    with pytest.raises(RegistryError, match="unknown metric 'MRR_5'"):  # no trec_eval spelling declared
        parse("MRR_5")
