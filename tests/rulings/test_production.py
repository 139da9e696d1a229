"""The production answerer: imported ruling pages of the sample game as an answerer."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.answering.answerers import make_answerer
from rulegauge.answering.requests import AnswerRequest
from rulegauge.core.errors import ConfigError
from rulegauge.rulings.evaluate import score_run
from rulegauge.rulings.importer import import_rulings
from rulegauge.rulings.production import ProductionAnswerer  # noqa: F401  (registers `production`)
from tests.helpers.common import REPO

PAGES = REPO / "goldsets" / "sample-rulings"
SAMPLE = REPO / "goldsets" / "sample.yaml"


@pytest.fixture
def rulings(tmp_path: Path) -> Path:
    res = import_rulings([PAGES], tmp_path, "rulings", 100, "half_up")
    score_run(res.path, SAMPLE, PAGES / "mapping.yaml")
    return res.path


def req(qid: str) -> AnswerRequest:
    return AnswerRequest(qid, "?", "en", ())


def test_production_answers_the_questions_its_rulings_match(rulings: Path) -> None:
    a = make_answerer("production", rulings=str(rulings))
    assert [q for q in ("bw-13", "bw-14", "bw-30", "bw-52", "bw-01") if a.covers(req(q))] == [
        "bw-13", "bw-14", "bw-30", "bw-52"]
    r = a.answer(req("bw-13"))
    assert r.outcome == "answered" and "**5 oil cards**" in r.text
    assert r.model_id == "lampmodel:8b" and r.latency_ms == 2740.0 and r.tokens_out == 48
    # [n] resolves to production's own reference list, mapped to the gold documents
    assert [(p.n, p.doc_id, p.page) for p in r.read] == [(1, "bw-errata", 1), (2, "bw-rules", 5)]
    assert a.answer(req("bw-52")).outcome == "abstained"
    missing = a.answer(req("bw-01"))
    assert missing.outcome == "error" and "no counted ruling matches question bw-01" in missing.error
    assert a.describe()["questions"] == 4


def test_unscored_or_wrong_runs_are_config_errors(tmp_path: Path) -> None:
    res = import_rulings([PAGES], tmp_path, "raw", 100, "half_up")
    with pytest.raises(ConfigError, match="has not been scored on a gold set"):
        make_answerer("production", rulings=str(res.path))
    with pytest.raises(ConfigError, match="cannot open rulings run"):
        make_answerer("production", rulings=str(tmp_path / "nothing"))
