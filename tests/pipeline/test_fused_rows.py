"""rulegauge.pipeline.fused_rows: the fused rows cut from the scoring kernel equal the full path
(every chunk fused, a pandas frame per config, cut to the depth) row by row on every column,
for RRF (exact ties, the exact fallback) and score-based methods (ties across the cut)."""

import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.fusion.configs import FusionConfig, RunConfig
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.ranking import parse
from rulegauge.pipeline import grid_tables as grid_module
from rulegauge.pipeline.fused_rows import page_ranks
from rulegauge.pipeline.grid_tables import grid_tables, whole_tables
from rulegauge.store.rundir import RunWriter
from tests.helpers.fused_reference import reference_fused
from tests.helpers.synthetic import synthetic

ARMS = ("a", "b", "c")
NAN = math.nan


def _config(method, arms, weights, depths, k=NAN, **opts):
    cid = f"{method}-k{k:g}-{'+'.join(arms)}-{'-'.join(map(str, depths))}-{'-'.join(map(str, weights))}"
    return FusionConfig(cid, cid, "grid", method, k, arms, tuple(map(float, weights)), depths,
                        tuple(sorted(opts.items())))


CONFIGS = (
    _config("rrf", ARMS, (1, 1, 1), (100, 100, 100), 1.0),  # k=1: many exact ties
    _config("rrf", ("a", "b"), (1, 1), (3, 3), 60.0),  # short lists
    _config("rrf", ("a", "c"), (0.1, 0.3), (40, 40), 2.0),  # weights 0.1: the exact Fraction fallback
    _config("rrf", ("b", "c"), (0.5, 2.0), (10, 50), 20.0),
    _config("combsum", ARMS, (1, 1, 1), (100, 100, 100), norm="min-max"),  # coarse scores: tied classes
    _config("combmnz", ("a", "b"), (0.7, 0.3), (30, 30), norm="min-max"),
    _config("borda", ARMS, (1, 1, 1), (50, 50, 50)),
)


def _inputs(seed=5, n_q=30, chunks_per_page=3):
    questions, ar, chunk_pages = synthetic(seed, n_q=n_q, chunks_per_page=chunks_per_page)
    rng = np.random.default_rng(seed)
    # coarse arm scores (one decimal, descending along ranks): exact ties for score-based methods;
    # the first question's scores are all equal (every candidate tied: a tie across every cut)
    ar = ar.assign(score=np.round(1.0 / ar["rank"] + rng.normal(0, 0.05, len(ar)), 1))
    ar = ar.sort_values(["question_id", "arm", "rank"]).reset_index(drop=True)
    ar["score"] = ar.groupby(["question_id", "arm"])["score"].cummin()
    ar.loc[ar["question_id"] == questions[0].question_id, "score"] = 0.5
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], list(ARMS))
    gold = make_gold(questions, m, chunk_pages)
    return m, gold, RunConfig("<test>", "", {}, CONFIGS, {})


def _written(tmp_path, name, table=None, frame=None):
    """A table through the run writer and back as pandas (what every reader sees)."""
    families = {"rank_*": list(ARMS)}
    with RunWriter(tmp_path / name) as w:
        if table is not None:
            w.write_parts("fused", [table], families)
        else:
            w.write_table("fused", frame, families)
    return pq.read_table(tmp_path / name / "fused.parquet").to_pandas().drop(columns="run_id")


@pytest.mark.parametrize("depth", [0, 3, 20])
def test_rows_equal_the_full_path_on_every_column(tmp_path, depth):
    m, gold, cfg = _inputs()
    specs = [parse("hit@5"), parse("first_rel_rank")]
    stored = [CONFIGS[4], *CONFIGS[:4], *CONFIGS[5:]]  # stored order, not grid order
    metrics, fused = whole_tables(grid_tables(m, gold, cfg, specs, stored, depth))
    ref = reference_fused(m, gold, stored, ARMS, depth)
    assert fused.num_rows == len(ref) > 0
    ours, theirs = _written(tmp_path, "new", table=fused), _written(tmp_path, "old", frame=ref)
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert all(str(ours[f"rank_{a}"].dtype) == "Int32" for a in ARMS)  # nullable arm ranks
    assert ours["rank_c"].isna().any() and ours["rank_a"].notna().any()
    assert ours["ceiling"].isna().any() and ours["score_ratio"].isna().any()  # no ceiling: null
    if depth:
        assert ours["fused_rank"].max() == depth
    assert metrics.num_rows == len(CONFIGS) * 2 * 30


def test_ties_across_the_cut_and_small_parts(monkeypatch):
    m, gold, cfg = _inputs(seed=8, n_q=12, chunks_per_page=4)
    monkeypatch.setattr(grid_module, "PART_ROWS", 20)  # a part per config: whole configs per part
    grid = grid_tables(m, gold, cfg, [parse("hit@5")], list(CONFIGS), 2)
    parts = list(grid.fused_parts())
    assert len(parts) == len(CONFIGS)
    ref = reference_fused(m, gold, CONFIGS, ARMS, 2)
    got = pd.concat([p.to_pandas() for p in parts], ignore_index=True)
    for col in ("question_id", "config_id", "chunk_id", "fused_rank", "page_rank", "fused_score", "arms_voted"):
        np.testing.assert_array_equal(got[col].to_numpy(), ref[col].to_numpy(), err_msg=col)
    first = got[(got["question_id"] == m.question_ids[0]) & got["config_id"].str.startswith("combsum")]
    assert list(first["fused_rank"]) == [1, 2]  # every candidate tied: the two smallest chunk ids
    assert list(first["chunk_id"]) == sorted(first["chunk_id"])


def test_metrics_do_not_depend_on_what_is_stored():
    m, gold, cfg = _inputs(seed=9, n_q=10)
    specs = [parse("MRR@10"), parse("first_rel_rank")]
    a, _ = whole_tables(grid_tables(m, gold, cfg, specs, [], 0))
    b, _ = whole_tables(grid_tables(m, gold, cfg, specs, [CONFIGS[6], CONFIGS[0]], 5))
    c = grid_tables(m, gold, cfg, specs, [CONFIGS[1]], 0).metrics()  # metrics alone run the pass
    assert a.equals(b) and a.equals(c)


@pytest.mark.parametrize("width", [6, 40])  # pairwise for short lists, sorted for long ones
def test_page_ranks_count_distinct_pages_at_their_first_chunk(width):
    pages = np.full((2, width), -1)
    pages[:, :6] = [[4, 4, 2, 4, 7, -1], [1, 2, 3, 1, -1, -1]]
    want = np.zeros((2, width), int)
    want[:, :6] = [[1, 1, 2, 1, 3, 0], [1, 2, 3, 1, 0, 0]]
    if width > 6:  # a long row: ranks count on past the first six positions
        pages[0, 6:] = np.arange(width - 6) % 9
        want[0, 6:] = [{4: 1, 2: 2, 7: 3}.get(int(x), 0) or 4 + sorted({x for x in range(9)} - {2, 4, 7}).index(x)
                       for x in pages[0, 6:]]
    np.testing.assert_array_equal(page_ranks(pages), want)


def test_an_error_during_the_pass_leaves_no_fused_file(tmp_path):
    def parts():
        yield from grid_tables(*_inputs(n_q=5)[:3], [parse("hit@5")], list(CONFIGS), 3).fused_parts()
        raise OSError(28, "No space left on device")

    with RunWriter(tmp_path / "r") as w, \
            pytest.raises(RulegaugeError, match=r"fused\.parquet: cannot write \(no space"):
        w.write_parts("fused", parts(), {"rank_*": list(ARMS)})
    assert not (tmp_path / "r" / "fused.parquet").exists()
    assert list((tmp_path / "r").glob(".fused*")) == []
