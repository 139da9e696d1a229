"""rulegauge.pipeline.grid_tables: the metrics table of every config, fused rows within the policy."""

import numpy as np
import pandas as pd

from rulegauge.fusion.configs import FusionConfig, RunConfig
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.ranking import parse
from rulegauge.pipeline.grid_tables import grid_tables, metrics_table, whole_tables
from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.fused_reference import reference_fused
from tests.helpers.synthetic import synthetic

ARMS = ("a", "b", "c")


def _inputs():
    questions, ar, chunk_pages = synthetic(11, n_q=12)
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], list(ARMS))
    gold = make_gold(questions, m, chunk_pages)
    cfgs = tuple(FusionConfig(f"k{k}", f"k{k}", "grid", "rrf", float(k), ARMS, (1.0,) * 3, (50,) * 3)
                 for k in (1, 60))
    return m, gold, RunConfig("<test>", "", {}, cfgs, {})


def test_no_stored_config_gives_an_empty_fused_table_with_the_full_schema(tmp_path):
    m, gold, cfg = _inputs()
    specs = [parse("hit@5"), parse("first_rel_rank")]
    metrics, fused = whole_tables(grid_tables(m, gold, cfg, specs, [], 0))
    families = {"rank_*": list(ARMS)}
    with RunWriter(tmp_path / "new") as w:
        assert w.write_parts("fused", [fused], families) == 0
    with RunWriter(tmp_path / "old") as w:
        w.write_table("fused", reference_fused(m, gold, cfg.configs[:1], ARMS, 0), families)
    new, old = (Run(tmp_path / x).table("fused") for x in ("new", "old"))
    assert len(new) == 0 and list(new.columns) == list(old.columns)
    assert dict(new.dtypes) == dict(old.dtypes)  # rank_* stay nullable Int32 for pandas readers
    assert metrics.num_rows == 2 * 2 * 12  # every config x metric x question is still scored


def test_stored_rows_are_cut_to_the_depth_and_metrics_rows_run_config_metric_question():
    m, gold, cfg = _inputs()
    specs = [parse("hit@5")]
    metrics, table = whole_tables(grid_tables(m, gold, cfg, specs, [cfg.configs[1]], 3))
    fused = table.to_pandas()
    assert set(fused["config_id"]) == {"k60"} and fused["fused_rank"].max() == 3
    table = metrics.to_pandas()
    assert list(table["config_id"].iloc[[0, 12]]) == ["k1", "k60"]
    direct = metrics_table(["x", "y"], np.array([True, False]), cfg.configs, specs,
                           [{"hit@5": np.array([1.0, 0.0])}, {"hit@5": np.array([0.5, 0.25])}]).to_pandas()
    pd.testing.assert_frame_equal(direct, pd.DataFrame({
        "question_id": ["x", "y", "x", "y"], "config_id": ["k1", "k1", "k60", "k60"],
        "metric": ["hit@5"] * 4, "value": [1.0, 0.0, 0.5, 0.25], "answerable": [True, False, True, False]}))


def test_summary_of_the_built_metrics_table_equals_the_summary_of_its_copy():
    import pyarrow as pa

    from rulegauge.metrics.summary import codes, summary_frame

    specs = [parse(m) for m in ("hit@1", "MRR@10", "first_rel_rank", "top_score_ratio")]
    configs = [FusionConfig(f"c{i}", f"c{i}", "grid", "rrf", 60.0, ("a",), (1.0,), (10,)) for i in (3, 1, 2)]
    rng = np.random.default_rng(0)
    values = [{s.name: rng.random(5) for s in specs} for _ in configs]
    built = metrics_table([f"q{i}" for i in range(5)], np.array([1, 1, 0, 1, 1], bool), configs, specs, values)
    copy = pa.Table.from_batches(built.to_batches())  # no recorded codes: scanned
    for column in ("config_id", "metric"):
        a, b = codes(built, column), codes(copy, column)
        assert a[0].tolist() == b[0].tolist() and a[1] == b[1]
    frame = pd.DataFrame({"config_id": [c.config_id for c in configs]})
    pd.testing.assert_frame_equal(summary_frame(built, frame), summary_frame(copy, frame))


def test_repeated_strings_equal_a_gather_of_the_names():
    import pyarrow as pa

    from rulegauge.pipeline.grid_tables import repeated_strings

    names = ["q1", "ärger", "", "config with spaces"]
    for inner, outer in ((1, 1), (3, 1), (1, 4), (2, 3), (0, 2)):
        got = repeated_strings(names, inner, outer)
        want = np.tile(np.repeat(np.array(names, object), inner), outer).tolist()
        assert got.type == pa.string() and got.to_pylist() == want
        got.validate(full=True)
    assert repeated_strings([], 3, 2).to_pylist() == []


def test_metrics_leave_in_grid_order_while_the_pass_runs(monkeypatch):
    # a stored config in the middle is scored first; the metrics parts still come in grid
    # order, several of them, and together they are the table the grid returns
    import pyarrow as pa

    from rulegauge.metrics.summary import summary_frame
    from rulegauge.pipeline import grid_tables as gt
    from rulegauge.pipeline.sweep import score_configs

    questions, ar, chunk_pages = synthetic(11, n_q=12)
    m = RankMatrix.from_arm_ranks(ar, [q.question_id for q in questions], list(ARMS))
    gold = make_gold(questions, m, chunk_pages)
    cfgs = tuple(FusionConfig(f"k{k}", f"k{k}", "grid", "rrf", float(k), ARMS, (1.0,) * 3, (50,) * 3)
                 for k in range(1, 41))  # enough configs for forked workers (sweep.FORK_MIN_CONFIGS)
    cfg = RunConfig("<test>", "", {}, cfgs, {})
    specs = [parse("hit@5"), parse("first_rel_rank")]
    monkeypatch.setattr(gt, "METRIC_PART_ROWS", 7 * 2 * 12)  # seven configs per part
    parts: list[pa.Table] = []
    grid = grid_tables(m, gold, cfg, specs, [cfgs[20]], 3, metric_sink=parts.append)
    fused = pa.concat_tables(list(grid.fused_parts()))
    assert set(fused.column("config_id").to_pylist()) == {"k21"}
    table = grid.metrics()
    assert len(parts) == 6 and pa.concat_tables(parts).equals(table)
    values = score_configs(m, gold, cfgs, specs, workers=1)
    direct = metrics_table([q.question_id for q in questions], np.array([q.answerable for q in questions]),
                           cfgs, specs, values)
    assert table.equals(direct)
    frame = pd.DataFrame({"config_id": [c.config_id for c in cfgs]})
    pd.testing.assert_frame_equal(summary_frame(table, frame), summary_frame(pa.Table.from_batches(
        table.to_batches()), frame))  # the recorded runs give the summary a scan gives
