"""Fact recall: normalised, stemmed, per-sentence matching in several languages; the
gold-set syntax of reference facts and its errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rulegauge.answering.facts import fact_recall, facts_stated, sentences
from rulegauge.core.errors import ValidationError
from rulegauge.goldset.parse import load_goldset
from tests.helpers.common import REPO


def test_sentences_drop_markers_and_emphasis() -> None:
    assert sentences("The limit is **5 cards**[1]. Discard down!\n* Then pass [2-3]") == [
        "The limit is 5 cards.", "Discard down!", "Then pass"]


@pytest.mark.parametrize(("text", "facts", "language", "stated"), [
    ("Each guild starts in SALTGATE [1].", [["Saltgate"]], "en", (True,)),
    ("You may hold five cards.", [["5 cards", "five cards"]], "en", (True,)),
    ("You may hold 7 cards.", [["5 cards", "five cards"]], "en", (False,)),
    # stemming: plural and singular; the words of a phrasing in any order, one sentence
    ("You light lanterns in a district.", [["light a lantern"]], "en", (True,)),
    ("You light it. A lantern is lit.", [["light lantern"]], "en", (False,)),
    ("Man zieht 2 Karten. Die Laternen bleiben stehen.", [["Laterne stehen"]], "de", (True,)),
    ("В конце хода можно держать 5 карт масла.", [["5 карт"]], "ru", (True,)),
    ("Si, se puede elegir una acción dos veces.", [["acciones dos veces"]], "es", (True,)),
    ("", [["anything"]], "en", (False,)),
    # a phrase, not a bag of words: order kept, at most MAX_GAP (2) tokens between
    ("The lantern is lit by you.", [["light lantern"]], "en", (False,)),
    ("Light the harbour lantern.", [["light lantern"]], "en", (True,)),
    ("Light one very old harbour lantern.", [["light lantern"]], "en", (False,)),
    # negation inside the occurrence or up to 3 tokens before it; not across a clause
    ("A Chancellor may not be nominated twice.", [["may be nominated"]], "en", (False,)),
    ("No, you can't place a second lantern there.", [["second lantern"]], "en", (False,)),
    ("No, but you may place a second lantern there.", [["second lantern"]], "en", (True,)),
    ("There is no change.", [["no change"]], "en", (True,)),
    ("You keep no more than 5 cards.", [["5 cards"]], "en", (True,)),
    ("Man spielt nicht mit 10 Laternen.", [["10 Laternen"]], "de", (False,)),
    ("Нельзя держать 5 карт.", [["5 карт"]], "ru", (False,)),
    ("بازی در سپیده تمام نمی‌شود.", [["سپیده"]], "fa", (False,)),
    # short words, numbers and function words never match alone
    ("He said three things about a game.", [["three"], ["a"], ["3"]], "en", (False, False, False)),
    ("Give each player 6 Renown.", [["6 each"]], "en", (False,)),
    # Russian stems: a stem-like phrasing of at least 4 letters begins the word
    ("Карты нужно держать на руке.", [["держ на руке"]], "ru", (True,)),
    ("Карты нужно держать на руке.", [["дер"]], "ru", (False,)),
])
def test_facts_stated(text: str, facts: list[list[str]], language: str,
                      stated: tuple[bool, ...]) -> None:
    assert facts_stated(text, facts, language) == stated


def test_every_sample_phrasing_can_match() -> None:
    """A phrasing with no content word can never be stated: the sample has a usable
    alternative for every fact."""
    from rulegauge.answering.facts import phrasing_matched

    gs = load_goldset(REPO / "goldsets" / "sample.yaml", check_pages=False)
    for q in gs.questions:
        for fact in q.facts:
            assert any(phrasing_matched(p, [p], q.language) for p in fact), (q.question_id, fact)


def test_fact_recall_is_stated_over_facts_and_nan_without_facts() -> None:
    text = "Pawns start in Saltgate. The hand limit is 5 cards."
    assert fact_recall(text, [["Saltgate"], ["5 cards"], ["Gullhaven"]]) == pytest.approx(2 / 3)
    assert math.isnan(fact_recall(text, []))


def test_sample_gold_set_gives_facts_to_every_answerable_question() -> None:
    gs = load_goldset(REPO / "goldsets" / "sample.yaml", check_pages=False)
    assert all(bool(q.facts) == q.answerable for q in gs.questions)
    q = gs.question_by_id["bw-13"]
    assert q.facts[0][0] == "5 oil cards"


def test_bad_facts_are_reported_with_line_and_question(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("Rules.\n")
    p = tmp_path / "g.yaml"
    p.write_text("""goldset: g
version: 1
documents:
  - {id: r, path: r.txt, kind: rulebook, game: G, edition: e, language: en}
questions:
  - {id: a, language: en, question: "A?", pages: [r#1], answer: {facts: []}}
  - {id: b, language: en, question: "B?", pages: [r#1], answer: {facts: [[""], "x", "x"]}}
  - {id: c, language: en, question: "C?", pages: [r#1], answer: {fact: [x]}}
  - {id: d, language: en, question: "D?", pages: [r#1], answer: [x]}
  - {id: e, language: en, question: "E?", pages: [r#1], answer: {facts: ["one", [two, "2"]]}}
""")
    with pytest.raises(ValidationError) as e:
        load_goldset(p)
    text = str(e.value)
    assert "g.yaml:6: question a: answer.facts must be a non-empty list" in text
    assert "question b: answer.facts[1] must be a phrasing or a non-empty list" in text
    assert "question b: answer.facts[3] repeats an earlier fact" in text
    assert "question c: answer: unknown field(s) fact; known: facts" in text
    assert "question d: 'answer' must be a mapping" in text
    assert "question e" not in text
