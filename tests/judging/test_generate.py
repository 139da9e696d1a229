"""Question generation: the near-duplicate rule (formulas), the rule-based generator's
sentences, where an answer occurs in its page, LLM replies parsed (unparseable counted),
and the counts of a generation run over the sample."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.parse import load_goldset
from rulegauge.judging import dedup, llmgen, rulegen
from rulegauge.judging.answer_match import locate, page_wording
from rulegauge.judging.generate import ChatGenerator, GenerateRequest, RuleGenerator, generate, load
from rulegauge.judging.llm import ReplyCache
from tests.helpers.common import REPO

SAMPLE = REPO / "goldsets" / "sample.yaml"


# --- near-duplicates -------------------------------------------------------------------

def test_jaccard_is_the_share_of_shared_stems() -> None:
    a = dedup.token_set("How many cards does each player draw?", "en")
    b = dedup.token_set("How many cards does every player draw?", "en")
    assert len(a & b) == 6 and len(a | b) == 8
    assert dedup.jaccard(a, b) == Fraction(3, 4)
    assert dedup.jaccard(frozenset(), frozenset()) == 1


def test_near_duplicates_keep_the_first_and_name_what_they_repeat() -> None:
    items = [("How many cards does each player draw?", "en"),
             ("how many CARDS does each player draw", "en"),      # J = 1: dropped
             ("How many cards does every player draw?", "en"),    # J = 3/4: kept
             ("Draws each player how many cards?", "en"),         # 6 of 7 stems: dropped
             ("How many cards does each player draw?", "de")]     # other language: kept
    kept, dropped = dedup.near_duplicates(items)
    assert kept == [0, 2, 4]
    assert [(d.dropped, d.kept, d.jaccard) for d in dropped] == [(1, 0, 1), (3, 0, Fraction(6, 7))]
    # at the threshold exactly it is a duplicate (>=), just below it is not
    kept, _ = dedup.near_duplicates(items[:3], threshold=Fraction(3, 4))
    assert kept == [0]
    kept, _ = dedup.near_duplicates(items[:3], threshold=Fraction(3, 4) + Fraction(1, 1000))
    assert kept == [0, 2]


# --- the rule-based generator -----------------------------------------------------------

@pytest.mark.parametrize(("sentence", "language", "question", "rule"), [
    ("Each player draws two cards from the deck.", "en",
     "How many cards does each player draw from the deck?", "count"),
    ("Each player takes 3 copper pennies from the bank.", "en",
     "How many copper pennies does each player take from the bank?", "count"),
    ("You take 3 actions per turn.", "en", "How many actions do you take per turn?", "count"),
    ("The hand limit is 5 oil cards.", "en", "What is the hand limit?", "count"),
    ("In a five-player game, each guild uses nine lanterns.", "en",
     "In a five-player game, how many lanterns does each guild use?", "count"),
    ("You cannot light a lamp in a flooded district.", "en",
     "Can you light a lamp in a flooded district?", "modal"),
    ("A district may hold lanterns of several guilds, and you may light a second one.", "en",
     "May a district hold lanterns of several guilds?", "modal"),
    ("If the oil deck runs out, shuffle the discards.", "en",
     "What happens if the oil deck runs out?", "condition"),
    ("Jeder Spieler zieht zwei Karten.", "de", "Wie viele Karten zieht jeder Spieler?", "count"),
    ("Ein Spieler darf eine zweite Laterne stellen.", "de",
     "Darf ein Spieler eine zweite Laterne stellen?", "modal"),
    ("Wenn ein Bezirk überflutet wird, erlöschen alle Laternen.", "de",
     "Was passiert, wenn ein Bezirk überflutet wird?", "condition"),
])
def test_rule_sentences_become_questions(sentence: str, language: str, question: str,
                                         rule: str) -> None:
    [c] = rulegen.generate(sentence, language, 5)
    assert (c.question, c.answer, c.rule) == (question, sentence, rule)


@pytest.mark.parametrize("sentence", [
    "Advance the dawn marker two spaces on the Night track.",   # imperative: no subject
    "All your trades together count as one action.",            # one: not a count to ask
    "Welcome to Brackwater",                                     # a heading
    "Каждый игрок берёт две карты.",                             # no Russian rules
])
def test_sentences_without_a_rule_give_nothing(sentence: str) -> None:
    assert rulegen.generate(sentence, "ru" if sentence[0] == "К" else "en", 5) == []


def test_headings_never_join_the_sentence_below_them() -> None:
    page = "Setting Up\nEach player takes 3 copper pennies from the bank.\nOther rules"
    assert rulegen.units(page) == ["Each player takes 3 copper pennies from the bank."]
    assert not rulegen.supports("en", "de") and rulegen.supports("de", "de")


# --- answers located in their page ------------------------------------------------------

def test_an_answer_is_found_across_line_breaks_case_and_punctuation() -> None:
    text = "Setup\nEach player takes\n3 copper pennies   from the bank. Then play."
    m = locate("each player takes 3 copper pennies from the bank", text)
    assert m is not None and m.exact and m.share == 1.0
    assert page_wording(text, m) == "Each player takes 3 copper pennies from the bank."


def test_fuzzy_answers_need_nine_tenths_of_their_tokens_in_order() -> None:
    text = ("At the end of your turn you may keep at most five oil cards in your hand and "
            "you discard the rest.")
    ten = "at the end of your turn you may keep at most five cards"  # 11 of 12 tokens
    m = locate(ten + " in hand", text)
    assert m is not None and not m.exact and m.share >= 0.9
    assert locate("at the end of the round you must discard every card", text) is None
    assert locate("the rest", text) is None  # under three tokens: never found


# --- LLM replies ------------------------------------------------------------------------

@pytest.mark.parametrize(("reply", "pairs"), [
    ('[{"question": "How many?", "answer": "Three."}]', [("How many?", "Three.")]),
    ('Sure!\n```json\n[{"question": " Q ", "answer_sentence": "A  b"}]\n```', [("Q", "A b")]),
    ('{"questions": [{"question": "Q", "sentence": "S"}]}', [("Q", "S")]),
    ("[]", []),
    ("I cannot do that.", None),
    ('[{"question": "Q"}]', None),
    ('["just a string"]', None),
    ('[{"question": "", "answer": "A"}]', None),
])
def test_replies_are_parsed_or_unparseable(reply: str, pairs: list[tuple[str, str]] | None
                                           ) -> None:
    assert llmgen.parse_reply(reply) == pairs


def test_prompt_is_versioned_and_hashed() -> None:
    msgs = llmgen.messages("PAGE TEXT " * 500, "German", 4)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "German" in msgs[1]["content"] and "up to 4 questions" in msgs[1]["content"]
    assert len(msgs[1]["content"]) < 3800  # the page is cut at MAX_PAGE_CHARS
    assert len(llmgen.prompt_hash()) == 64


def fake_chat(replies: dict[str, str]):  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def chat(msgs, key, seed):  # type: ignore[no-untyped-def]
        calls.append(key)
        page = key.split("|")[1]
        if page not in replies:
            return "", "ConnectError: refused"
        return replies[page], None
    return chat, calls


def test_llm_generation_counts_unparseable_replies_and_answers_not_in_the_page(
        tmp_path: Path) -> None:
    gs = load_goldset(SAMPLE)
    req = GenerateRequest(gs.documents, ("en",), 3, ("bw-rules#3", "bw-rules#5", "bw-rules#7",
                                                     "bw-errata#1"))
    replies = {
        "bw-rules#3": json.dumps([
            {"question": "How many pennies does each player start with?",
             "answer": "Each player takes 3 copper pennies from the bank."},
            {"question": "Who starts?", "answer": "The moon is made of cheese."}]),
        "bw-rules#5": "Here are some questions: none.",
        "bw-rules#7": "[]",
    }  # bw-errata#1: the call fails
    chat, calls = fake_chat(replies)
    gen = ChatGenerator(llmgen.LlmGenerator(chat, "fake-model", ReplyCache(tmp_path / "c.jsonl")))
    result = generate(req, gen, load(req))
    c = result.counts
    assert (c.pages_read, c.calls, c.failed_calls, c.unparseable_replies,
            c.answers_not_in_page, c.empty_pages, c.proposals) == (4, 4, 1, 1, 1, 1, 1)
    lists = result.manifest["lists"]
    assert lists["unparseable"][0]["page"] == "bw-rules#5"
    assert lists["answers_not_in_page"][0]["answer"] == "The moon is made of cheese."
    assert lists["empty_pages"] == [{"page": "bw-rules#7"}]
    [p] = result.proposals.proposals
    assert (p.proposal_id, p.rule, p.match) == ("bw-rules.p3.en.1", "llm", "exact")
    assert result.proposals.header["generator"]["prompt"]["version"] == llmgen.PROMPT_VERSION
    # the cache answers a rerun; the failed call is asked again
    again = generate(req, ChatGenerator(llmgen.LlmGenerator(
        chat, "fake-model", ReplyCache(tmp_path / "c.jsonl"))), load(req))
    assert (again.counts.cached, again.counts.calls) == (3, 1) and len(calls) == 5


def test_rule_generation_over_the_sample_counts_pages_empties_and_duplicates() -> None:
    gs = load_goldset(SAMPLE)
    req = GenerateRequest(gs.documents, ("en", "de"))
    result = generate(req, RuleGenerator(), load(req))
    c = result.counts
    assert c.pages_read == 21 and c.blank_pages == 0
    assert c.unsupported == 21  # English pages, German questions: the rules cannot translate
    assert c.candidates == c.proposals + c.duplicates_removed and c.duplicates_removed >= 1
    assert c.empty_pages == len(result.manifest["lists"]["empty_pages"]) >= 1
    assert {p.language for p in result.proposals.proposals} == {"en"}
    ids = [p.proposal_id for p in result.proposals.proposals]
    assert len(set(ids)) == len(ids) and all(p.heading for p in result.proposals.proposals)
    for p in result.proposals.proposals:
        assert locate(p.answer, result.proposals.page(p).text) is not None


def test_bad_pages_and_languages_are_named_before_any_work() -> None:
    gs = load_goldset(SAMPLE)
    with pytest.raises(ValidationError) as err:
        load(GenerateRequest(gs.documents, pages=("bw-rules#99", "nope#1", "bw-rules")))
    text = str(err.value)
    assert "bw-rules#99: page out of range (bw-rules has 12 pages)" in text
    assert "no document 'nope'" in text and "not a page id" in text
    with pytest.raises(ValidationError, match="unknown language 'xx'"):
        load(GenerateRequest(gs.documents, ("xx",)))


@pytest.mark.shared
def test_rule_generation_over_the_shared_rulebook_counts_its_duplicates(shared_dir: Path) -> None:
    """The Secret Hitler rulebook (a real PDF of ../shared): questions with their pages."""
    gs = load_goldset(shared_dir / "goldsets" / "secret-hitler.yaml", allow_outside=True)
    req = GenerateRequest(gs.documents)
    result = generate(req, RuleGenerator(), load(req))
    c = result.counts
    assert c.pages_read == 7 and c.proposals >= 5
    assert c.candidates == c.proposals + c.duplicates_removed
    assert len(result.manifest["lists"]["duplicates"]) == c.duplicates_removed
    assert c.unparseable_replies == 0 and c.empty_pages == len(result.manifest["lists"]["empty_pages"])
    for p in result.proposals.proposals:
        assert p.doc_id == gs.documents[0].doc_id and p.question.endswith("?")
        assert locate(p.answer, result.proposals.page(p).text) is not None


def test_max_pages_reads_the_first_non_blank_pages_in_document_order() -> None:
    gs = load_goldset(SAMPLE)
    req = GenerateRequest(gs.documents, max_pages=13)
    result = generate(req, RuleGenerator(), load(req))
    assert result.counts.pages_read == 13
    assert [p.key for p in result.proposals.pages][-1] == "bw-errata#1"


def test_a_question_in_another_language_than_asked_is_counted_not_kept() -> None:
    from rulegauge.judging.generate import in_language

    assert not in_language("How does the voting process work?", "de")
    assert in_language("Wie viele Karten zieht jeder Spieler?", "de")  # no evidence: kept
    assert in_language("Kann der Spieltisch in gleichen Farben gebaut werden?", "de")
    assert in_language("Wie viele Plätze gibt es?", "de")  # es: German and Spanish
    assert not in_language("¿Cuántas cartas roba cada jugador en su turno?", "en")
    assert not in_language("Сколько карт?", "en") and not in_language("How many cards?", "ru")
    assert in_language("Per quanto?", "it")  # not checked
