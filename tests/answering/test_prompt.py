"""The versioned answer prompt: rendering, hash and abstention parsing."""

from __future__ import annotations

import hashlib
import json

import pytest

from rulegauge.answering import prompt
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import RulegaugeError


def _request(language: str = "en", passages: tuple[Passage, ...] | None = None) -> AnswerRequest:
    if passages is None:
        passages = (
            Passage(1, "rb#p0004.c000", "rb", 4, "Legislative Session", "The President draws "
                    "three tiles.\nHe discards one.", title="Rulebook"),
            Passage(2, "er#p0001.c000", "er", 1, "", "Errata: draw two tiles at five players."),
        )
    return AnswerRequest("q-1", "  How many tiles does the President draw? ", language, passages)


def test_render_numbers_passages_with_title_page_and_heading() -> None:
    system, user = prompt.render(_request())
    assert system["role"] == "system" and user["role"] == "user"
    assert "[1] Rulebook · p.4 · Legislative Session\nThe President draws three tiles." \
        in user["content"]
    # no title: the doc id stands in; no heading: left out
    assert "[2] er · p.1\nErrata: draw two tiles" in user["content"]
    assert user["content"].rstrip().endswith("Question: How many tiles does the President draw?")
    assert user["content"].index("[1]") < user["content"].index("[2]")


def test_render_asks_for_citations_abstention_and_language() -> None:
    system = prompt.render(_request(language="ru"))[0]["content"]
    assert "ABSTAIN: <a short reason>" in system
    assert "[2] or [1][3]" in system
    assert "Russian" in system
    assert "$" not in system


def test_render_is_deterministic_and_leaves_request_alone() -> None:
    req = _request()
    assert prompt.render(req) == prompt.render(req)
    assert req == _request()


def test_no_passages_still_renders() -> None:
    user = prompt.render(_request(passages=()))[1]["content"]
    assert "(no passages were found)" in user


def test_duplicate_or_bad_markers_raise_with_every_problem() -> None:
    p = Passage(1, "a#p0001.c000", "a", 1, "", "x")
    bad = Passage(0, "a#p0001.c001", "a", 1, "", "y")
    with pytest.raises(RulegaugeError) as exc:
        prompt.render(_request(passages=(p, p, bad)))
    msg = str(exc.value)
    assert "[1] is used twice" in msg and "marker 0 is not positive" in msg


def test_passage_text_with_template_characters_is_kept_verbatim() -> None:
    p = Passage(1, "a#p0001.c000", "a", 1, "", "Costs $5 {coins} and $passages.")
    assert "Costs $5 {coins} and $passages." in prompt.render(_request(passages=(p,)))[1]["content"]


@pytest.mark.parametrize(("code", "name"), [("en", "English"), ("fa", "Persian"),
                                            ("pt-BR", "Portuguese"), ("ES", "Spanish"),
                                            ("xx", prompt.UNKNOWN_LANGUAGE)])
def test_language_name(code: str, name: str) -> None:
    assert prompt.language_name(code) == name


def test_prompt_hash_is_sha256_of_version_template_and_languages() -> None:
    expected = hashlib.sha256(
        prompt.PROMPT_VERSION.encode() + b"\n" + prompt.template_text().encode("utf-8")
        + json.dumps(prompt.LANGUAGE_NAMES, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    assert prompt.prompt_hash() == expected
    assert prompt.describe() == {"version": "answer-v1", "sha256": expected}


def test_template_is_package_data_with_both_sections() -> None:
    text = prompt.template_text()
    assert text.index("=== system ===") < text.index("=== user ===")
    assert prompt.PROMPT_VERSION == "answer-v1"


@pytest.mark.parametrize("text", [
    "ABSTAIN: the passages do not say.",
    "  abstain: nothing about hand limits",
    "**ABSTAIN:** not covered",
    "ABSTAIN :no",
    "ABSTAIN",
    "**ABSTAIN**\n",
    "ABSTAIN.",
    "ABSTAIN - the rules do not say",
    prompt.abstention("  reason "),
])
def test_abstentions(text: str) -> None:
    assert prompt.parse_outcome(text) == "abstained"


@pytest.mark.parametrize("text", [
    "Three tiles [1].",
    "Abstaining from a vote is not allowed [2].",
    "You may ABSTAIN: no, every player votes [1].",
    "ABSTAINING is not allowed [1].",
    "Abstain\n\nfrom voting? No [2].",
    "Игроки не могут воздержаться [1].",
])
def test_answers(text: str) -> None:
    assert prompt.parse_outcome(text) == "answered"


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_reply_is_an_error_not_an_outcome(text: str) -> None:
    with pytest.raises(ValueError, match="empty reply"):
        prompt.parse_outcome(text)


def test_abstention_text() -> None:
    assert prompt.abstention(" not covered ") == "ABSTAIN: not covered"
