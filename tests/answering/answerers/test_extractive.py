"""The extractive answerer: idf-weighted sentence overlap, citations, abstention."""

from __future__ import annotations

import math

import pytest

from rulegauge.answering.answerers.extractive import (
    ExtractiveAnswerer,
    question_stopwords,
    split_sentences,
)
from rulegauge.answering.prompt import parse_outcome
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import ConfigError


def _p(n: int, text: str, doc: str = "rb", page: int = 1) -> Passage:
    return Passage(n, f"{doc}#p{page:04d}.c{n:03d}", doc, page, "Setup", text, title="Rulebook")


def _req(question: str, *passages: Passage, language: str = "en") -> AnswerRequest:
    return AnswerRequest("q-1", question, language, tuple(passages))


def idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


LANTERN = (
    _p(1, "Each player draws two cards at setup.\nPlayers roll the die to move."),
    _p(2, "The harbour holds three boats in total."),
)


def test_scores_are_the_covered_share_of_question_idf() -> None:
    # terms: each, player, draw, card (how/many/does are question words)
    scored = ExtractiveAnswerer().score(_req("How many cards does each player draw?", *LANTERN))
    assert [(s.n, s.index) for s in scored] == [(1, 0), (1, 1), (2, 0)]
    assert scored[0].score == pytest.approx(1.0)
    # "Players roll the die to move." covers only "player" (df = 2 of N = 3)
    assert scored[1].score == pytest.approx(idf(3, 2) / (3 * idf(3, 1) + idf(3, 2)))
    assert scored[2].score == 0.0


def test_answer_cites_the_sentence_and_is_answered() -> None:
    r = ExtractiveAnswerer(threshold=0.5).answer(_req("How many cards does each player draw?",
                                                      *LANTERN))
    assert r.text == "Each player draws two cards at setup. [1]"
    assert r.outcome == "answered" == parse_outcome(r.text)
    assert r.model_id == "extractive-v1" and r.latency_ms >= 0
    assert r.tokens_in is None and r.error is None


def test_below_threshold_abstains() -> None:
    r = ExtractiveAnswerer(threshold=0.5).answer(_req("What is the hand limit?", *LANTERN))
    assert r.outcome == "abstained" == parse_outcome(r.text)
    assert r.text.startswith("ABSTAIN: no sentence") and "threshold 0.5" in r.text


def test_at_most_max_sentences_ties_by_passage_then_index() -> None:
    same = "Lanterns score two points each round."
    passages = (_p(3, f"{same} Boats score once per round."), _p(1, "Lanterns score two points"
                " when lit. Boats never score."), _p(2, "Lanterns score two points at night."))
    r = ExtractiveAnswerer(threshold=0.3, max_sentences=2).answer(
        _req("How many points do lanterns score?", *passages))
    # three sentences tie at 1.0: passage 1 and 2 win on n, passage 3 is cut by max_sentences
    assert r.text.splitlines() == ["Lanterns score two points when lit. [1]",
                                   "Lanterns score two points at night. [2]"]


def test_duplicate_sentences_from_overlapping_chunks_are_cited_once() -> None:
    s = "A lit lantern scores two points."
    r = ExtractiveAnswerer(threshold=0.3).answer(
        _req("How many points does a lit lantern score?", _p(1, s), _p(2, s.upper())))
    assert r.text == f"{s} [1]"


def test_no_passages_or_no_content_words_abstain() -> None:
    a = ExtractiveAnswerer()
    assert a.answer(_req("What is it?")).text.startswith("ABSTAIN: no passages")
    r = a.answer(_req("What is it?", *LANTERN))
    assert r.outcome == "abstained" and "no content words" in r.text


def test_short_fragments_are_not_candidates() -> None:
    scored = ExtractiveAnswerer(min_tokens=4).score(_req("lantern", _p(1, "Lantern tokens.")))
    assert scored == []


def test_russian_and_persian_passages() -> None:
    ru = _p(1, "Президент берёт три карты закона. Канцлер сбрасывает одну карту.")
    r = ExtractiveAnswerer(threshold=0.5).answer(
        _req("Сколько карт закона берёт президент?", ru, language="ru"))
    assert r.outcome == "answered" and r.text == "Президент берёт три карты закона. [1]"
    fa = _p(1, "رئیس‌جمهور سه کارت قانون برمی‌دارد. صدراعظم یک کارت را کنار می‌گذارد.")
    r = ExtractiveAnswerer(threshold=0.5).answer(
        _req("رئیس‌جمهور چند کارت قانون برمی‌دارد؟", fa, language="fa"))
    assert r.outcome == "answered" and r.text.endswith("برمی‌دارد. [1]")


def test_cross_lingual_question_abstains() -> None:
    r = ExtractiveAnswerer().answer(_req("Сколько карт берёт игрок?", *LANTERN, language="ru"))
    assert r.outcome == "abstained"


def test_deterministic() -> None:
    a = ExtractiveAnswerer(threshold=0.1)
    req = _req("Do players roll the die to move boats?", *LANTERN)
    assert a.answer(req).text == a.answer(req).text == ExtractiveAnswerer(threshold=0.1).answer(
        _req("Do players roll the die to move boats?", *LANTERN)).text


def test_split_sentences() -> None:
    text = "Setup.\nEach player takes five\nlantern tokens. Then:\n\n• Draw a card\n• Roll?  Yes!"
    assert split_sentences(text) == ["Setup.", "Each player takes five lantern tokens.",
                                      "Then:", "Draw a card", "Roll?", "Yes!"]


def test_question_stopwords_are_per_language_and_folded() -> None:
    assert "how" in question_stopwords("en") and "die" not in question_stopwords("en")
    assert "die" in question_stopwords("de") and "сколько" in question_stopwords("ru-RU")
    assert question_stopwords("xx") == frozenset()


def test_bad_parameters_are_reported_together() -> None:
    with pytest.raises(ConfigError) as exc:
        ExtractiveAnswerer(threshold=1.5, max_sentences=0, min_tokens=0)
    assert str(exc.value).count("must be") == 3


def test_describe() -> None:
    assert ExtractiveAnswerer(threshold=0.25).describe() == {
        "answerer": "extractive", "model_id": "extractive-v1", "threshold": 0.25,
        "max_sentences": 3, "min_tokens": 4, "stem": True}
