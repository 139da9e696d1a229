"""Oracle (issue 42, item 1): an unknown id put at rank 1 of every list of an external arm
lowers MRR@10 exactly as ir_measures computes it on the raw list, and foreign@5 reports it;
the same foreign id from two arms is one fused hit, two different ones are two."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import RR, nDCG

from rulegauge.interop.export import export_run
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.rescore import rescore
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

FOREIGN, STALE = "other-game#7", "stale-edition#2"
METRICS = ("MRR@10", "nDCG@10", "hit@1", "foreign@5", "MRR(judged_only=True)@10", "Judged@5")


def _lists(path: Path) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        out.setdefault(qid, []).append((doc, float(score)))
    return out


def _write(path: Path, lists: dict[str, list[tuple[str, float]]]) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {r} {s!r} t\n" for q, hits in lists.items()
                            for r, (d, s) in enumerate(hits, start=1)))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("foreign")
    base = Run(run(RunOptions(config=LEXICAL, runs_dir=tmp / "runs", run_id="base")).path)
    export_run(base, tmp / "trec", level="page", scores="original", configs=[], questions="retrieved")
    plain = _lists(tmp / "trec" / "arms" / "bm25.trec")
    qids = list(base.table("questions")["question_id"])
    top = {q: (plain[q][0][1] if plain.get(q) else 0.0) for q in qids}
    # every list gets the unknown id at rank 1 (a score above the list's best); the second arm
    # another unknown id first, and the first one's id second
    ext = {q: [(FOREIGN, top[q] + 2.0), *plain.get(q, [])] for q in qids}
    ext2 = {q: [(STALE, top[q] + 2.0), (FOREIGN, top[q] + 1.0), *plain.get(q, [])] for q in qids}
    cfg = tmp / "ext.toml"
    cfg.write_text(f'''[defaults]
k = 60
depth = 100
[arms.plain]
kind = "external"
path = "{_write(tmp / "plain.trec", {q: plain.get(q, []) for q in qids if plain.get(q)})}"
[arms.ext]
kind = "external"
path = "{_write(tmp / "ext.trec", ext)}"
[arms.ext2]
kind = "external"
path = "{_write(tmp / "ext2.trec", ext2)}"
[grid]
k = [60]
arms = [["ext", "ext2"], ["plain"]]
''')
    res = Run(run(RunOptions(config=cfg, runs_dir=tmp / "runs", run_id="ext", metrics=METRICS)).path)
    return base, res, ext, cfg


def test_mrr_at_10_is_ir_measures_on_the_raw_list_with_the_unknown_id(runs) -> None:
    base, res, ext, _ = runs
    qs = base.table("questions")
    rel = {r.question_id: {p for req in json.loads(r.requirements) for p in req} for r in qs.itertuples()}
    answerable = [q for q in qs["question_id"] if rel[q]]
    qrels = [ir_measures.Qrel(q, p, 1) for q in answerable for p in sorted(rel[q])]
    raw = [ir_measures.ScoredDoc(q, d, s) for q in answerable for d, s in ext[q]]  # the list as given
    want = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc([RR @ 10, nDCG @ 10], qrels, raw)}
    m = res.table("metrics")
    m = m[m["config_id"] == "arm-ext"].set_index(["question_id", "metric"])["value"]
    for q in answerable:
        assert m[(q, "MRR@10")] == want[(q, "RR@10")], q
        assert abs(m[(q, "nDCG@10")] - want[(q, "nDCG@10")]) <= 1e-12, q
    plain = m.index.get_level_values("metric") == "MRR@10"
    lowered = res.table("metrics")
    lowered = lowered[(lowered["config_id"] == "arm-plain") & (lowered["metric"] == "MRR@10")
                      & lowered["answerable"]].set_index("question_id")["value"]
    # every question the service answered at rank 1 now has its relevant page at rank 2
    firsts = [q for q in answerable if lowered[q] == 1.0]
    assert firsts and all(m[(q, "MRR@10")] == 0.5 for q in firsts)
    assert m[plain].loc[answerable].mean() < lowered.loc[answerable].mean()
    assert all(m[(q, "hit@1")] == 0.0 for q in answerable)  # rank 1 is never relevant any more


def test_foreign_at_5_is_the_share_of_the_top_5_from_outside(runs) -> None:
    _, res, ext, _ = runs
    m = res.table("metrics")
    got = m[(m["config_id"] == "arm-ext") & (m["metric"] == "foreign@5")].set_index("question_id")["value"]
    for q, hits in ext.items():  # one foreign page among min(5, pages listed); unanswerable ones count too
        assert got[q] == 1 / min(5, len(hits)), q
    plain = m[(m["config_id"] == "arm-plain") & (m["metric"] == "foreign@5")]["value"]
    assert (plain == 0.0).all()
    both = m[(m["config_id"] == "rrf_k60_ext+ext2") & (m["metric"] == "foreign@5")].set_index("question_id")
    f = res.table("fused")
    f = f[(f["config_id"] == "rrf_k60_ext+ext2") & (f["page_rank"] <= 5)]
    for q, g in f.groupby("question_id"):  # the stored fused rows say the same, page by page
        pages = g.drop_duplicates("page_rank")
        assert both.loc[q, "value"] == pages["foreign"].sum() / len(pages), q


def test_one_foreign_id_from_two_arms_is_one_hit_and_two_ids_are_two(runs) -> None:
    _, res, ext, _ = runs
    f = res.table("fused")
    f = f[f["config_id"] == "rrf_k60_ext+ext2"]
    for q in ext:
        g = f[f["question_id"] == q].set_index("chunk_id")
        assert g.loc[FOREIGN, "arms_voted"] == 2 and g.loc[STALE, "arms_voted"] == 1
        assert abs(g.loc[FOREIGN, "fused_score"] - float(Fraction(1, 61) + Fraction(1, 62))) <= 1e-16
        assert g.loc[FOREIGN, "fused_rank"] == 1 and g.loc[FOREIGN, "page_rank"] == 1
        assert g.loc[STALE, "page_rank"] != g.loc[FOREIGN, "page_rank"]  # a page of its own each
        assert bool(g.loc[FOREIGN, "foreign"]) and not g.loc[FOREIGN, "relevant"]
        assert (g.loc[FOREIGN, "doc_id"], g.loc[FOREIGN, "page"]) == (FOREIGN, 0)
        assert (~g.drop(index=[FOREIGN, STALE])["foreign"]).all()
    ranks = res.table("arm_ranks")
    kept = ranks[ranks["foreign"]]
    assert set(kept["chunk_id"]) == {FOREIGN, STALE} and (kept["page"] == 0).all()
    assert len(kept) == 3 * len(ext)
    info = res.manifest["arms"]
    assert info["ext"]["foreign_hits"] == len(ext) and info["ext2"]["foreign_hits"] == 2 * len(ext)
    assert "kept at their ranks as non-relevant foreign hits" in info["ext"]["warning"]


def test_a_run_without_foreign_hits_is_what_it_was(runs) -> None:
    base, res, _, _ = runs
    ranks = base.table("arm_ranks")
    assert not ranks["foreign"].any() and not base.table("fused")["foreign"].any()
    assert "foreign_hits" not in base.manifest["arms"]["bm25"]
    assert math.isfinite(res.table("metrics")["value"].replace(math.inf, 0).sum())
    assert list(pd.read_parquet(base.path / "arm_ranks.parquet").columns)[-1] == "foreign"


def test_rescoring_a_run_with_foreign_hits_gives_the_same_tables(runs) -> None:
    _, res, _, cfg = runs
    grid = cfg.parent / "grid-only.toml"  # --from takes the stored ranks: a grid of the arms by name
    grid.write_text('[defaults]\nk = 60\ndepth = 100\n[grid]\nk = [60]\narms = [["ext", "ext2"], ["plain"]]\n')
    again = Run(rescore(RunOptions(config=grid, runs_dir=res.path.parent, run_id="again", source_run="ext",
                                   metrics=METRICS)).path)
    for table in ("metrics", "fused"):
        pd.testing.assert_frame_equal(again.table(table).drop(columns="run_id"),
                                      res.table(table).drop(columns="run_id"))


def test_a_foreign_page_counts_as_judged_non_relevant(runs) -> None:
    """Its relevance is known: condensed lists keep it (the question that had its relevant page
    first under the condensed list has it second), and Judged@k counts it."""
    _, res, ext, _ = runs
    m = res.table("metrics").set_index(["config_id", "question_id", "metric"])["value"]
    condensed = "MRR(judged_only=True)@10"
    firsts = [q for q in ext if m[("arm-plain", q, condensed)] == 1.0]
    assert firsts and all(m[("arm-ext", q, condensed)] == 0.5 for q in firsts)
    answerable = set(res.table("questions").query("answerable")["question_id"])
    for q, hits in ext.items():  # the foreign page is judged: Judged@5 never falls below 1 / min(5, listed)
        if q in answerable:  # (Judged@k counts answerable questions; the others score its default)
            assert m[("arm-ext", q, "Judged@5")] >= 1 / min(5, len(hits)) - 1e-12, q
