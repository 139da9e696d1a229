"""A service that starts returning another game's page at rank 1: the gate bounds foreign@5
(floor, max_drop, max_increase), compare's per-question regressions name the foreign hit that
pushed the relevant page down, the report lists it, the TREC export writes its reply id, and a
baseline keeps the new column."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.analysis.foreign_hits import foreign_frame, foreign_html
from rulegauge.interop.export import export_run
from rulegauge.judging.pool import PoolRequest, build_pool
from rulegauge.pipeline.retrieval import RunOptions, run
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.gate import EXIT_PASS, EXIT_REGRESSION, Status, run_gate
from rulegauge.regression.gate_report import comparison_markdown
from rulegauge.regression.policy import PolicyError, parse_policy
from rulegauge.store.baseline import save_baseline
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

OTHER = "other-game#p0003.c001"
METRICS = ("MRR@10", "hit@1", "foreign@5")
POLICY = {"gate": {"config": "arm-ext", "n_resamples": 2000},
          "metrics": {"foreign@5": {"floor": 0.05, "max_drop": 0.02, "max_increase": 10}}}


def _external(tmp: Path, run_id: str, lines: str) -> Run:
    ranked = tmp / f"{run_id}.trec"
    ranked.write_text(lines)
    cfg = tmp / f"{run_id}.toml"
    cfg.write_text(f'[defaults]\nk = 60\ndepth = 100\n[arms.ext]\nkind = "external"\npath = "{ranked}"\n'
                   '[grid]\nk = [60]\narms = [["ext"]]\n')
    return Run(run(RunOptions(config=cfg, runs_dir=tmp / "runs", run_id=run_id, metrics=METRICS)).path)


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run, Run]:
    tmp = tmp_path_factory.mktemp("foreign-gate")
    lex = Run(run(RunOptions(config=LEXICAL, runs_dir=tmp / "runs", run_id="lex")).path)
    export_run(lex, tmp / "trec", level="page", scores="rank", configs=[], questions="retrieved")
    plain = (tmp / "trec" / "arms" / "bm25.trec").read_text()
    qids = list(dict.fromkeys(line.split()[0] for line in plain.splitlines()))
    # the same lists, each with another game's page put first (the ranks below shift by one)
    shifted = "".join(f"{q} Q0 {OTHER} 1 2.0 t\n" for q in qids) + "".join(
        f"{q} Q0 {d} {int(r) + 1} {s} {t}\n" for q, _, d, r, s, t in (x.split() for x in plain.splitlines()))
    before = _external(tmp, "before", plain)
    base = Run(save_baseline(before, tmp / "baselines" / "before"))
    return base, before, _external(tmp, "after", shifted)


def test_the_gate_bounds_foreign_at_5(sides: tuple[Run, Run, Run]) -> None:
    base, before, after = sides
    policy = parse_policy(POLICY)
    failed = run_gate(policy, base, after)
    assert failed.exit_code == EXIT_REGRESSION
    status = {c.name: c.status for c in failed.checks}
    assert status == {"foreign@5 floor": Status.FAIL, "foreign@5 max_drop": Status.FAIL,
                      "foreign@5 max_increase": Status.FAIL}
    assert run_gate(policy, base, before).exit_code == EXIT_PASS


def test_the_policy_takes_foreign_at_k_like_any_lower_is_better_metric() -> None:
    policy = parse_policy({"metrics": {"Foreign@10": {"max_increase": 5, "floor": 0.1}}})
    assert [m.metric for m in policy.metrics] == ["foreign@10"]
    with pytest.raises(PolicyError, match="foreign@5"):
        parse_policy({"metrics": {"foreign@5": {"floor": "high"}}})


def test_compare_names_the_foreign_hit_above_the_relevant_page(sides: tuple[Run, Run, Run]) -> None:
    _, before, after = sides
    c = compare_runs(before, after, configs=["arm-ext"], metrics=["hit@1", "foreign@5"], n_resamples=200)
    lost = [r for r in c.regressions() if r.metric == "hit@1"]
    outside = [r for r in c.regressions() if r.metric == "foreign@5"]
    assert lost and len(outside) == 47  # every question with a list got the foreign page
    assert outside[0].description.startswith("more pages from outside the corpus in the top 5 (foreign@5 0 -> 0.2")
    for change in lost:
        moved = [p for p in change.pages if p.foreign]
        assert [(p.page, p.before, p.after) for p in moved] == [(f"foreign {OTHER}", None, 1)], change
        assert all(p.after == p.before + 1 for p in change.pages if not p.foreign and p.before is not None
                   and p.before < 10)
    assert f"foreign {OTHER}: — → 1 (ext — → 1)" in comparison_markdown(c)


def test_the_report_lists_the_foreign_hits_and_the_export_writes_their_ids(
        sides: tuple[Run, Run, Run], tmp_path: Path) -> None:
    _, before, after = sides
    fused = after.table("fused")
    rows = foreign_frame(fused, ["arm-ext"], 5)
    assert len(rows) == 47  # one per question with a list, at rank 1
    assert set(rows["foreign id"]) == {OTHER} and (rows["page_rank"] == 1).all()
    assert set(rows["arms"]) == {"ext 1"}
    html = "\n".join(foreign_html(fused, ["arm-ext"], 5))
    assert "<h2>Foreign hits (top 5)</h2>" in html and OTHER in html
    assert foreign_html(before.table("fused"), ["arm-ext"], 5) == []
    for level in ("page", "chunk"):
        export_run(after, tmp_path / level, level=level, configs=["arm-ext"], arms=[])
        first = (tmp_path / level / "arm-ext.trec").read_text().splitlines()[0].split()
        assert first[2:4] == [OTHER, "1"], level


def test_a_baseline_keeps_the_foreign_column(sides: tuple[Run, Run, Run]) -> None:
    base, _, _ = sides
    assert "foreign" in base.table("fused").columns and not base.table("fused")["foreign"].any()


def test_a_foreign_page_is_never_pooled_but_keeps_the_ranks_honest(sides: tuple[Run, Run, Run]) -> None:
    _, before, after = sides
    pool = build_pool(PoolRequest((after,), 2, ("arm-ext",), include_judged=True))
    assert pool.pages and all(OTHER not in p.page and p.text for p in pool.pages)
    plain = build_pool(PoolRequest((before,), 1, ("arm-ext",), include_judged=True))
    firsts = {p.question_id: p.page for p in plain.pages}
    # each question's first page before is its page at rank 2 now, below the foreign hit
    for p in pool.pages:
        if firsts.get(p.question_id) == p.page:
            assert {f.rank for f in p.found_by} == {2}, p
