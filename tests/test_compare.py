"""harness.compare: joining two runs, per-metric statistics, per-question changes.

``write_run`` builds a small synthetic run directory through harness.store.RunWriter;
test_gate.py and test_baseline.py import it from here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from harness.compare import ConfigPair, compare_runs, metric_info, resolve_config_pairs
from harness.errors import HarnessError
from harness.goldset import PageRef, Question
from harness.metrics import score_ranking
from harness.stats import holm
from harness.store import Run, RunWriter
from harness.tables import TABLES

ARMS = ("bm25", "dense", "boost")
METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "first_rel_rank", "top_score_ratio")
N_ANSWERABLE = 20
UNANSWERABLE = ("q21", "q22")
K = 60.0


def qid(i: int) -> str:
    return f"q{i:02d}"


def base_lists() -> dict[str, list[str]]:
    """Question -> fused page order: q01..q20 find their page rb#i at rank 1 + i % 3,
    among filler pages; the unanswerable ones get filler only."""
    lists = {}
    for i in range(1, N_ANSWERABLE + 1):
        filler = [f"fl#{j}" for j in range(1, 10)]
        filler.insert(i % 3, f"rb#{i}")
        lists[qid(i)] = filler
    for q in UNANSWERABLE:
        lists[q] = [f"fl#{j}" for j in range(1, 10)]
    return lists


def move(lists: Mapping[str, list[str]], question: str, page: str, rank: int | None
         ) -> dict[str, list[str]]:
    """A copy of ``lists`` with ``page`` moved to 1-based ``rank`` (None: dropped)."""
    out = {q: list(v) for q, v in lists.items()}
    out[question].remove(page)
    if rank is not None:
        out[question].insert(rank - 1, page)
    return out


def _question(q: str) -> Question:
    if q in UNANSWERABLE:
        return Question(q, f"question {q}?", "en", ())
    return Question(q, f"question {q}?", "en", ((PageRef("rb", int(q[1:])),),))


def write_run(path: Path, lists: Mapping[str, Sequence[str]], *,
              configs: Sequence[tuple[str, str, str]] = (("c3", "prod", "grid"),),
              arm_ranks: Mapping[tuple[str, str], Mapping[str, int | None]] | None = None,
              goldset_sha: str | None = "gold-1", corpus_hash: str | None = "corpus-1",
              answers: pd.DataFrame | None = None, answer_metrics: pd.DataFrame | None = None,
              status: str = "complete") -> Path:
    """A run whose every config ranks pages as ``lists`` says (one chunk per page).

    Every arm ranks each page at its fused rank unless ``arm_ranks[(question, page)]``
    says otherwise (None: the arm did not rank it). Metrics come from
    harness.metrics.score_ranking, so they are what the pipeline would compute.
    """
    w = RunWriter(path)
    manifest: dict[str, object] = {"run_id": path.name, "created": "2025-01-01T00:00:00+00:00",
                                   "status": "running", "config": {"sha256": "cfg-" + path.name}}
    if goldset_sha is not None:
        manifest["goldset"] = {"name": "synthetic", "path": "synthetic.yaml",
                               "sha256": goldset_sha}
    if corpus_hash is not None:
        manifest["corpus"] = {"content_hash": corpus_hash}
    w.update_manifest(manifest)
    questions = [_question(q) for q in lists]
    w.write_table("questions", pd.DataFrame([{
        "question_id": q.question_id, "goldset": "synthetic", "language": "en",
        "question": q.question, "game": "G", "tags": [],
        "requirements": json.dumps([[str(r) for r in req] for req in q.requirements]),
        "n_requirements": len(q.requirements), "answerable": q.answerable} for q in questions]))
    w.write_table("configs", pd.DataFrame([{
        "config_id": cid, "name": name, "kind": kind, "method": "rrf", "k": K,
        "arms": list(ARMS), "weights": [1.0] * 3, "depths": [10] * 3,
        "ceiling": 3 / (K + 1), "params": "{}"} for cid, name, kind in configs]))
    fused, metrics = [], []
    for cid, _, _ in configs:
        for q in questions:
            pages = list(lists[q.question_id])
            for i, page in enumerate(pages):
                doc, no = page.split("#")
                row = {"question_id": q.question_id, "config_id": cid,
                       "chunk_id": f"{doc}#p{int(no):04d}.c000", "doc_id": doc, "page": int(no),
                       "fused_rank": i + 1, "fused_score": 3 / (K + i + 1), "ceiling": 3 / (K + 1),
                       "score_ratio": (K + 1) / (K + i + 1), "n_arms": 3, "arms_voted": 3,
                       "relevant": page in q.relevant_pages, "page_rank": i + 1}
                override = (arm_ranks or {}).get((q.question_id, page), {})
                for a in ARMS:
                    row[f"rank_{a}"] = override.get(a, i + 1) if a in override else i + 1
                fused.append(row)
            scores = score_ranking(pages, q, METRICS, top_score=3 / (K + 1), ceiling=3 / (K + 1))
            metrics += [{"question_id": q.question_id, "config_id": cid, "metric": m,
                         "value": v, "answerable": q.answerable} for m, v in scores.items()]
    fused_df = pd.DataFrame(fused)
    for a in ARMS:
        fused_df[f"rank_{a}"] = pd.array(fused_df[f"rank_{a}"], dtype="Int32")
    w.write_table("fused", fused_df, {"rank_*": list(ARMS)})
    w.write_table("metrics", pd.DataFrame(metrics))
    if answers is not None:
        w.write_table("answers", answers)
    if answer_metrics is not None:
        w.write_table("answer_metrics", answer_metrics)
    w.update_manifest({"status": status})
    return path


def answer_tables(values: Mapping[str, Mapping[str, float]],
                  outcomes: Mapping[str, str] | None = None,
                  answerers: Sequence[str] = ("extractive",), config: str = "c3"
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``answers`` and ``answer_metrics`` frames: values[metric][question] per answerer."""
    import harness.answering.tables  # noqa: F401  (registers the answer tables)

    qs = sorted({q for per_q in values.values() for q in per_q})
    # every column of the registered schema gets a neutral value; the ones read here are set
    schema = TABLES.get("answers").schema()
    neutral = {pa.string(): "x", pa.int32(): 0, pa.float64(): 1.0, pa.bool_(): True}
    rows = []
    for a in answerers:
        for q in qs:
            row = {f.name: None if f.nullable else neutral.get(f.type, "x") for f in schema}
            row.update(question_id=q, config_id=config, answerer=a,
                       outcome=(outcomes or {}).get(q, "answered"), text="an answer [1]")
            rows.append(row)
    answers = pa.Table.from_pylist(rows, schema=schema).to_pandas()
    metrics = pd.DataFrame([{
        "question_id": q, "config_id": config, "answerer": a, "metric": m, "value": v,
        "answerable": q not in UNANSWERABLE}
        for a in answerers for m, per_q in values.items() for q, v in per_q.items()])
    return answers, metrics


@pytest.fixture
def base_run(tmp_path: Path) -> Run:
    return Run(write_run(tmp_path / "base", base_lists()))


def test_identical_runs_have_no_difference_and_no_change(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists()))
    c = compare_runs(base_run, cand, n_resamples=500)
    assert c.pairs == (ConfigPair("c3", "c3"),)
    assert {m.metric for m in c.metrics} == set(METRICS)
    for m in c.metrics:
        assert m.difference == 0.0
        assert (m.wins, m.losses) == (0, 0)
        assert m.p_value == 1.0 and m.p_holm == 1.0
        assert m.ci_low == m.ci_high == 0.0
    assert c.changes == ()
    assert c.differences == () and not c.forced


def test_one_question_losing_hit5_is_named_with_pages_and_arm_ranks(tmp_path: Path,
                                                                   base_run: Run) -> None:
    # q07 had rb#7 at rank 1 + 7 % 3 = 2; the candidate pushes it to 7, dense no longer ranks it
    lists = move(base_lists(), "q07", "rb#7", 7)
    cand = Run(write_run(tmp_path / "cand", lists, arm_ranks={("q07", "rb#7"): {"dense": None}}))
    c = compare_runs(base_run, cand, n_resamples=500)
    hit5 = c.find("hit@5", ConfigPair("c3", "c3"))
    assert hit5 is not None
    assert hit5.n == N_ANSWERABLE  # unanswerable questions are left out of ranking means
    assert hit5.base_value == 1.0
    assert hit5.candidate_value == pytest.approx((N_ANSWERABLE - 1) / N_ANSWERABLE)
    assert hit5.difference == pytest.approx(-1 / N_ANSWERABLE)
    assert hit5.worsening == pytest.approx(1 / N_ANSWERABLE)
    assert (hit5.wins, hit5.ties, hit5.losses) == (0, N_ANSWERABLE - 1, 1)
    assert hit5.worse == ("q07",)
    assert hit5.value_of("q07") == (1.0, 0.0)
    lost = [ch for ch in c.regressions() if ch.metric == "hit@5"]
    assert [(ch.question_id, ch.description) for ch in lost] == [("q07", "lost hit@5")]
    (page,) = lost[0].pages
    assert (page.page, page.before, page.after) == ("rb#7", 2, 7)
    arms = {a.arm: (a.before, a.after) for a in page.arms}
    assert arms == {"bm25": (2, 7), "dense": (2, None), "boost": (2, 7)}
    moved = [ch for ch in c.regressions() if ch.metric == "first_rel_rank"]
    assert [ch.description for ch in moved] == ["first relevant page moved down (2 -> 7)"]
    mrr = c.find("MRR@10", ConfigPair("c3", "c3"))
    assert mrr is not None and mrr.difference == pytest.approx((1 / 7 - 1 / 2) / N_ANSWERABLE)


def test_improvements_are_listed_separately(tmp_path: Path, base_run: Run) -> None:
    # q02 had rb#2 at rank 3; the candidate finds it first
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q02", "rb#2", 1)))
    c = compare_runs(base_run, cand, n_resamples=200)
    assert c.regressions() == ()
    assert {(ch.question_id, ch.description) for ch in c.improvements()} == {
        ("q02", "gained hit@1"), ("q02", "first relevant page moved up (3 -> 1)")}


def test_holm_is_applied_across_the_metrics_of_a_config(tmp_path: Path, base_run: Run) -> None:
    lists = base_lists()
    for i in range(1, 9):
        lists = move(lists, qid(i), f"rb#{i}", 9)
    c = compare_runs(base_run, Run(write_run(tmp_path / "cand", lists)), n_resamples=2_000)
    ps = [m.p_value for m in c.metrics]
    assert [m.p_holm for m in c.metrics] == pytest.approx(holm(ps).tolist(), nan_ok=True)
    mrr = c.find("MRR@10", ConfigPair("c3", "c3"))
    assert mrr is not None and mrr.p_value < 0.05 and mrr.ci_high < 0.0


def test_same_seed_same_numbers(tmp_path: Path, base_run: Run) -> None:
    lists = base_lists()
    for i in (3, 5, 8, 13):
        lists = move(lists, qid(i), f"rb#{i}", 6)
    cand = Run(write_run(tmp_path / "cand", lists))
    a = compare_runs(base_run, cand, seed=7, n_resamples=3_000)
    b = compare_runs(base_run, cand, seed=7, n_resamples=3_000)
    assert a == b


def test_different_gold_sets_or_corpora_are_refused_unless_forced(tmp_path: Path,
                                                                  base_run: Run) -> None:
    other = Run(write_run(tmp_path / "other", base_lists(), goldset_sha="gold-2",
                          corpus_hash="corpus-9"))
    with pytest.raises(HarnessError) as err:
        compare_runs(base_run, other)
    msg = str(err.value)
    assert "gold set sha256: base gold-1 vs candidate gold-2" in msg
    assert "corpus content hash: base corpus-1 vs candidate corpus-9" in msg
    forced = compare_runs(base_run, other, force=True, n_resamples=100)
    assert forced.forced and len(forced.differences) == 2


def test_missing_provenance_counts_as_a_difference(tmp_path: Path, base_run: Run) -> None:
    bare = Run(write_run(tmp_path / "bare", base_lists(), corpus_hash=None))
    expected = r"corpus content hash: base corpus-1 vs candidate \(missing\)"
    with pytest.raises(HarnessError, match=expected):
        compare_runs(base_run, bare)


def test_configs_pair_by_name_or_explicitly(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists(),
                         configs=(("c2", "prod", "grid"), ("arm-bm25", "arm-bm25", "arm"))))
    assert resolve_config_pairs(base_run, cand, ["prod"]) == (ConfigPair("c3", "c2"),)
    assert resolve_config_pairs(base_run, cand, [("c3", "c2")]) == (ConfigPair("c3", "c2"),)
    # no shared id: the sole grid config of each side is paired
    assert resolve_config_pairs(base_run, cand) == (ConfigPair("c3", "c2"),)
    expected = r"candidate: config 'nope' .*choose one of: c2 \(prod\), arm-bm25"
    with pytest.raises(HarnessError, match=expected):
        resolve_config_pairs(base_run, cand, [("c3", "nope")])


def test_no_shared_config_is_an_error_listing_both_sides(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists(),
                         configs=(("x1", "x1", "grid"), ("x2", "x2", "grid"))))
    expected = "no config in common: base has c3; candidate has x1, x2"
    with pytest.raises(HarnessError, match=expected):
        compare_runs(base_run, cand)


def test_unknown_metric_lists_what_both_sides_have(tmp_path: Path, base_run: Run) -> None:
    expected = r"metric\(s\) hit@3 not on both sides; both have: MRR@10"
    with pytest.raises(HarnessError, match=expected):
        compare_runs(base_run, base_run, metrics=["hit@5", "hit@3"])


def test_selected_metrics_keep_their_order(base_run: Run) -> None:
    c = compare_runs(base_run, base_run, metrics=["MRR@10", "hit@1"], n_resamples=100)
    assert [m.metric for m in c.metrics] == ["MRR@10", "hit@1"]


def test_infinite_first_rel_rank_is_compared_without_a_test(tmp_path: Path,
                                                            base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q04", "rb#4", None)))
    c = compare_runs(base_run, cand, n_resamples=200)
    frr = c.find("first_rel_rank", ConfigPair("c3", "c3"))
    assert frr is not None and not frr.higher_is_better and frr.aggregate == "median"
    assert math.isnan(frr.p_value) and "non-finite" in frr.note
    assert (frr.wins, frr.losses) == (0, 1)
    assert frr.value_of("q04") == (2.0, math.inf)
    (gone,) = [ch for ch in c.regressions() if ch.metric == "first_rel_rank"]
    assert gone.description == "first relevant page moved down (2 -> not retrieved)"
    assert (gone.pages[0].before, gone.pages[0].after) == (2, None)


def test_answer_metrics_use_their_scope_and_name_lost_citations(tmp_path: Path) -> None:
    qs = [qid(i) for i in range(1, 5)]
    base_vals = {"citation_recall": dict.fromkeys(qs, 1.0), "fence_pass": dict.fromkeys(qs, 1.0)}
    cand_vals = {"citation_recall": {**dict.fromkeys(qs, 1.0), "q02": 0.0},
                 "fence_pass": {**dict.fromkeys(qs, 1.0), "q03": 0.0}}
    b = Run(write_run(tmp_path / "b", base_lists(), **_answers(base_vals)))
    c_run = Run(write_run(tmp_path / "c", base_lists(), **_answers(cand_vals, {"q04": "error"})))
    c = compare_runs(b, c_run, metrics=["citation_recall", "fence_pass"], n_resamples=200)
    fence = c.find("fence_pass", ConfigPair("c3", "c3"), "extractive")
    assert fence is not None and fence.scope == "responded"
    # q04 errored in the candidate: out of the "responded" scope, so 3 paired questions
    assert fence.n == 3 and fence.candidate_value == pytest.approx(2 / 3)
    assert "in scope: 4 base, 3 candidate, 3 paired" in fence.note
    descriptions = {(ch.question_id, ch.description) for ch in c.regressions()}
    assert ("q02", "citation lost (citation_recall 1 -> 0)") in descriptions
    assert ("q03", "answer now fails the fence") in descriptions
    assert all(ch.answerer == "extractive" for ch in c.regressions())


def _answers(values: Mapping[str, Mapping[str, float]],
             outcomes: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    answers, metrics = answer_tables(values, outcomes)
    return {"answers": answers, "answer_metrics": metrics}


def test_metric_directions_come_from_the_registries() -> None:
    hit = metric_info("hit@5")
    frr = metric_info("first_rel_rank")
    assert hit is not None and hit.higher_is_better and hit.scope == "answerable"
    assert frr is not None and not frr.higher_is_better
    ratio = metric_info("top_score_ratio")
    assert ratio is not None and ratio.scope == "all"
    latency = metric_info("latency_ms")
    assert latency is not None and not latency.higher_is_better
    assert metric_info("abstained") is None  # no better direction
    assert metric_info("no-such-metric") is None


def test_answer_scopes_need_the_answers_table(tmp_path: Path, base_run: Run) -> None:
    _, metrics = answer_tables({"fence_pass": {"q01": 1.0}})
    side = Run(write_run(tmp_path / "c", base_lists(), answer_metrics=metrics))
    expected = "metric fence_pass: this metric's scope needs answer outcomes"
    with pytest.raises(HarnessError, match=expected):
        compare_runs(side, side, metrics=["fence_pass"])
