"""Production against gold: matching rulings to gold questions, scoring, compare side."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from rulegauge.cli.rulings import register
from rulegauge.core.errors import RulegaugeError, ValidationError
from rulegauge.core.text import letters_ratio
from rulegauge.goldset.parse import load_goldset
from rulegauge.rulings.evaluate import fence_columns, rulings_as_run_tables, score_run
from rulegauge.rulings.importer import import_rulings
from rulegauge.rulings.mapping import DocTarget, Mapping, load_mapping
from rulegauge.rulings.match import ProdDoc, RulingKey, map_documents, match_rulings, normalise
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES as COMMON_FIXTURES
from tests.helpers.common import typer_app

FIXTURES = COMMON_FIXTURES / "rulings"
GOLD = FIXTURES / "goldset.yaml"
MAPPING = FIXTURES / "mapping.yaml"
EN_TAG, DE_TAG = "bg-900001-en-2e", "bg-900001-de-2e"


@pytest.fixture(scope="module")
def gs():
    return load_goldset(GOLD, check_pages=False)


@pytest.fixture(scope="module")
def mapping():
    return load_mapping(MAPPING)


def key(qid: str, question: str, edition: str = EN_TAG, game: str = "Saltmarsh Ferries"):
    return RulingKey(qid, question, game, edition)


def test_normalise_ignores_case_punctuation_and_spacing():
    assert normalise("How do I play?") == normalise("  how do i PLAY ") == "how do i play"
    assert normalise("Mit wie vielen Fähren?") == "mit wie vielen fähren"
    assert normalise(None) == ""


def test_questions_match_on_game_edition_and_text(gs, mapping):
    ms = match_rulings([key("r-en", "How many ferries does each player start with?"),
                        key("r-de", "Mit wie vielen Fähren beginnt jeder Spieler?", DE_TAG),
                        key("r-x", "Can ferries fly?")], gs, mapping)
    by = {m.question_id: m for m in ms}
    assert (by["r-en"].gold_question_id, by["r-en"].matched_by, by["r-en"].counted) == (
        "sf-01", "question", True)
    assert by["r-de"].gold_question_id == "sf-03"
    assert by["r-x"].gold_question_id is None and "Can ferries fly?" in by["r-x"].reason


def test_an_edition_tag_needs_the_mapping(gs):
    (m,) = match_rulings([key("r", "How many ferries does each player start with?")], gs)
    assert m.gold_question_id is None
    assert EN_TAG in m.reason and "en-2" in m.reason and "mapping" in m.reason
    (m,) = match_rulings([key("r", "How many ferries?", game="Other Game")], gs)
    assert "Other Game" in m.reason and "Saltmarsh Ferries" in m.reason


def test_mapping_names_questions_and_duplicates_are_not_counted(gs, mapping):
    named = Mapping(mapping.games, {}, {"r-1": "sf-04", "r-2": "sf-99"})
    ms = {m.question_id: m for m in match_rulings(
        [key("r-1", "anything"), key("r-2", "anything"),
         key("r-3", "How many ferries does each player start with?"),
         key("r-4", "how many ferries does each player start with")], gs, named)}
    assert (ms["r-1"].gold_question_id, ms["r-1"].matched_by) == ("sf-04", "mapping")
    assert ms["r-2"].gold_question_id is None and "sf-99" in ms["r-2"].reason
    assert ms["r-3"].counted and not ms["r-4"].counted
    assert "already matched by ruling r-3" in ms["r-4"].reason


def test_documents_map_by_kind_and_title_or_by_the_mapping(gs, mapping):
    docs = [ProdDoc("4242", "rulebook", "RULEBOOK Saltmarsh Ferries — Rulebook"),
            ProdDoc("4243", "errata", "ERRATA Saltmarsh Ferries — Official Errata"),
            ProdDoc("9", "faq", "FAQ Saltmarsh Ferries — Forum")]
    got = map_documents(docs, "Saltmarsh Ferries", EN_TAG, gs, mapping)
    assert got == {"4242": DocTarget("sf-rules"), "4243": DocTarget("sf-errata")}
    explicit = Mapping(mapping.games, {"9": DocTarget("sf-rules", 2)}, {})
    assert map_documents(docs, "Saltmarsh Ferries", EN_TAG, gs, explicit)["9"] == DocTarget(
        "sf-rules", 2)
    assert map_documents(docs, "Other Game", None, gs) == {}


def test_mapping_file_problems_are_reported_together(tmp_path):
    bad = tmp_path / "m.yaml"
    bad.write_text("rulings_mapping: 2\ngames: {a: 1}\ndocuments:\n  '1': [x]\nextra: 1\n",
                   encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        load_mapping(bad)
    text = str(err.value)
    assert "rulings_mapping: 1" in text and "'games' must be a list" in text
    assert "documents[1]" in text and "extra" in text


def test_fence_is_recomputed_beside_the_reported_figures():
    text = "Each ferry carries two crates.[1]"
    letters, nonspace = letters_ratio(text)
    cols = fence_columns(text, {"fence_passed": True, "fence_letter_density":
                                round(letters / nonspace, 5), "fence_nonspace_chars": nonspace,
                                "fence_glyph_tokens": 0})
    assert cols["fence_letter_density"] == letters / nonspace
    assert cols["fence_nonspace_chars"] == nonspace and cols["fence_agrees"] is True
    off = fence_columns(text, {"fence_passed": True, "fence_letter_density": 0.5,
                               "fence_nonspace_chars": nonspace, "fence_glyph_tokens": 0})
    assert off["fence_agrees"] is False
    assert fence_columns(None, {})["fence_passed"] is None


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    res = import_rulings([FIXTURES], runs, "prod")
    with pytest.raises(RulegaugeError, match="has not been scored"):
        rulings_as_run_tables(Run(res.path))
    score_run(res.path, GOLD, MAPPING)
    return Run(res.path)


def values(run: Run, table: str, qid: str) -> dict[str, float]:
    df = run.table(table)
    df = df[df["question_id"] == qid]
    return dict(zip(df["metric"], df["value"], strict=True))


def test_production_search_scores_like_an_offline_run(scored_run):
    m = values(scored_run, "metrics", "sf-01")
    # pages in fused order: sf-rules#4 (relevant), #5, #6, #7; requirements sf-rules#4, sf-errata#1
    assert (m["hit@1"], m["hit@5"], m["MRR@10"], m["first_rel_rank"]) == (1.0, 1.0, 1.0, 1.0)
    assert m["recall@5"] == 1 / 2
    assert m["nDCG@10"] == pytest.approx((1 / math.log2(2)) / (1 / math.log2(2) + 1 / math.log2(3)))
    assert m["top_score"] == 0.04918
    assert m["top_score_ratio"] == pytest.approx(0.04918 / (3 / (60 + 1)))
    de = values(scored_run, "metrics", "sf-03")
    assert de["hit@1"] == 1.0 and "top_score_ratio" not in de  # arm count not on the page
    unanswerable = scored_run.table("metrics")
    assert not unanswerable.loc[unanswerable["question_id"] == "sf-02", "answerable"].any()


def test_production_answers_are_scored_with_the_answer_metrics(scored_run):
    a = values(scored_run, "answer_metrics", "sf-01")
    assert (a["citation_precision"], a["citation_recall"], a["context_recall"]) == (1.0, 1.0, 1.0)
    assert a["fence_pass"] == 1.0 and a["latency_ms"] == 3120
    ab = values(scored_run, "answer_metrics", "sf-02")
    assert (ab["abstained"], ab["abstention_correct"]) == (1.0, 1.0)
    assert "sf-03" not in set(scored_run.table("answer_metrics")["question_id"])


def test_matches_table_and_manifest(scored_run):
    m = scored_run.table("ruling_matches").set_index("question_id")
    assert m.loc["ruling-saltmarsh-ferries", "gold_question_id"] == "sf-01"
    assert bool(m.loc["ruling-saltmarsh-ferries", "fence_agrees"])
    assert m.loc["ruling-saltmarsh-de", "reason"].startswith("the page shows no outcome")
    assert scored_run.manifest["goldset"]["name"] == "saltmarsh-rulings"
    assert scored_run.manifest["rulings"]["matched"] == 3
    tables = rulings_as_run_tables(scored_run)
    assert set(tables["metrics"]["config_id"]) == {"production"}
    assert sorted(tables["questions"]["question_id"]) == ["sf-01", "sf-02", "sf-03"]


def test_compare_accepts_a_rulings_run_as_a_side(scored_run):
    from rulegauge.regression.compare import compare_runs

    cmp = compare_runs(scored_run, scored_run, metrics=["hit@5"], force=True, n_resamples=100)
    (row,) = cmp.metrics
    assert row.config.base == "production" and row.difference == 0.0


def test_scoring_something_else_than_a_rulings_run_raises(tmp_path):
    from rulegauge.store.rundir import RunWriter

    RunWriter(tmp_path / "other").update_manifest({"kind": "retrieval"})
    with pytest.raises(RulegaugeError, match="not a rulings run"):
        score_run(tmp_path / "other", GOLD)


@pytest.fixture
def cli():
    return typer_app(register)


def test_cli_import_with_goldset_and_score(cli, tmp_path):
    res = CliRunner().invoke(cli, ["rulings", "import", str(FIXTURES), "--out", str(tmp_path),
                                   "--run-id", "p", "--goldset", str(GOLD), "--mapping",
                                   str(MAPPING)])
    assert res.exit_code == 0, res.output
    assert "production against gold" in res.output and "sf-01" in res.output
    res = CliRunner().invoke(cli, ["rulings", "score", "p", "--runs-dir", str(tmp_path),
                                   "--goldset", str(GOLD)])
    assert res.exit_code == 0, res.output
    rescored = Run(tmp_path / "p").table("ruling_matches")
    assert rescored["gold_question_id"].isna().all()  # re-scored without the mapping
    assert all("not an edition" in r for r in rescored["reason"])
    res = CliRunner().invoke(cli, ["rulings", "score", "p", "--runs-dir", str(tmp_path),
                                   "--goldset", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2
