"""The answering read: pool, re-rank, floors, read order, context recall."""

from __future__ import annotations

import pandas as pd
import pytest

from rulegauge.answering.read import (
    FLOORS,
    ReadOptions,
    answering_read,
    build_pool,
    context_recall,
    question_game,
)
from rulegauge.answering.rerankers import RERANKERS, Candidate, LexicalReranker
from rulegauge.core.errors import ValidationError
from rulegauge.core.ordering import order
from rulegauge.corpus.records import Chunk, Document, chunk_key
from rulegauge.goldset.records import PageRef, Question

K = 60
ARMS = ("bm25", "dense", "boost")
DOCS = {d.doc_id: d for d in (
    Document("rb", "rulebook", "G", "en-1", "en", "Rulebook"),
    Document("er", "errata", "G", "en-1", "en", "Errata"),
    Document("er2", "errata", "G", "en-1", "en", "Errata, second printing"),
    Document("ex", "expansion", "G", "en-1", "en", "Expansion"),
    Document("faq", "faq", "G", "en-1", "en", "FAQ"),
    Document("h-rb", "rulebook", "H", "en-1", "en", "Other game"),
)}


def ck(ref: str) -> str:
    doc, page = ref.split("#")
    return chunk_key(doc, int(page), 0)


def chunks_for(refs: list[str], texts: dict[str, str] | None = None) -> dict[str, Chunk]:
    out = {}
    for ref in refs:
        doc, page = ref.split("#")
        text = (texts or {}).get(ref, f"text of {ref}")
        out[ck(ref)] = Chunk(ck(ref), doc, int(page), ("Heading", ref), text, 0, len(text))
    return out


def fused(votes: dict[str, dict[str, int]], arms: tuple[str, ...] = ARMS) -> pd.DataFrame:
    """Fused rows from per-arm ranks, RRF at k=60, ranks through rulegauge.core.ordering."""
    refs = list(votes)
    scores = [sum(1 / (K + r) for a, r in votes[ref].items() if a in arms) for ref in refs]
    idx = order(scores, [ck(r) for r in refs])
    rows = []
    for fr, i in enumerate(idx, start=1):
        doc, page = refs[i].split("#")
        row = {"question_id": "q", "config_id": "c", "chunk_id": ck(refs[i]), "doc_id": doc,
               "page": int(page), "fused_rank": fr, "fused_score": scores[i]}
        row.update({f"rank_{a}": votes[refs[i]].get(a) for a in ARMS})
        rows.append(row)
    return pd.DataFrame(rows).astype({f"rank_{a}": "Int32" for a in ARMS})


def question(text: str = "how far may a boat move", *reqs: str, game: str | None = "G") -> Question:
    return Question("q", text, "en", tuple((PageRef(r.split("#")[0], int(r.split("#")[1])),)
                                           for r in reqs), game=game)


def ladder(refs: list[str]) -> dict[str, dict[str, int]]:
    """Every ref ranked by bm25 only, in the order given (fused scores 1/(60+r))."""
    return {ref: {"bm25": r} for r, ref in enumerate(refs, start=1)}


def read(refs_or_votes, opts: ReadOptions, q: Question | None = None, texts=None):
    """The read of a ladder (list of refs), a votes dict, or a ready fused frame."""
    if isinstance(refs_or_votes, pd.DataFrame):
        df = refs_or_votes
        refs = [f"{d}#{p}" for d, p in zip(df["doc_id"], df["page"], strict=True)]
    else:
        votes = refs_or_votes if isinstance(refs_or_votes, dict) else ladder(refs_or_votes)
        df, refs = fused(votes), list(votes)
    return answering_read(q or question(), df, chunks_for(refs, texts), DOCS, opts, ARMS)


NO_FLOORS = ReadOptions(floors=())


def test_fused_reranker_keeps_fused_order_and_cuts_to_final() -> None:
    refs = [f"rb#{p}" for p in range(1, 11)]
    rows = read(refs, ReadOptions(final=4, floors=()))
    assert [r.chunk_id for r in rows] == [ck(r) for r in refs[:4]]
    assert [r.read_at for r in rows] == [1, 2, 3, 4]
    assert [r.fused_rank for r in rows] == [1, 2, 3, 4]
    assert rows[1].fused_score == 1 / (60 + 2) and rows[1].rerank_score == 1 / (60 + 2)
    assert {r.slot for r in rows} == {"reranker"}


def test_carried_by_names_voting_arms_in_config_order() -> None:
    votes = {"rb#1": {"boost": 1, "bm25": 2, "dense": 1}, "rb#2": {"dense": 2}, "rb#3": {"bm25": 1}}
    rows = read(votes, NO_FLOORS)
    carried = {r.chunk_id: r.carried_by for r in rows}
    assert carried == {ck("rb#1"): "bm25+dense+boost", ck("rb#2"): "dense", ck("rb#3"): "bm25"}
    assert rows[0].fused_score == 1 / (60 + 1) + 1 / (60 + 2) + 1 / (60 + 1)


def test_ties_break_by_chunk_id() -> None:
    votes = {"rb#3": {"bm25": 1}, "rb#2": {"dense": 1}, "rb#1": {"boost": 1}}
    rows = read(votes, NO_FLOORS)
    assert [r.chunk_id for r in rows] == [ck("rb#1"), ck("rb#2"), ck("rb#3")]


def test_pool_limits_what_floors_can_reach() -> None:
    refs = ["faq#1", "faq#2", "rb#1"]
    assert [r.slot for r in read(refs, ReadOptions(pool=2, final=1))] == ["reranker"]
    rows = read(refs, ReadOptions(pool=3, final=1))
    assert [(r.chunk_id, r.slot) for r in rows] == [(ck("rb#1"), "floor:base_rulebook")]


def test_base_rulebook_floor_replaces_the_lowest_reranker_slot() -> None:
    refs = ["faq#1", "faq#2", "faq#3", "rb#4", "rb#5"]
    rows = read(refs, ReadOptions(final=3, floors=("base_rulebook",)))
    assert [(r.chunk_id, r.slot, r.read_at, r.rerank_rank) for r in rows] == [
        (ck("faq#1"), "reranker", 1, 1), (ck("faq#2"), "reranker", 2, 2),
        (ck("rb#4"), "floor:base_rulebook", 3, 4)]


def test_base_rulebook_floor_is_satisfied_by_a_rulebook_chunk_already_read() -> None:
    refs = ["faq#1", "rb#2", "faq#3", "faq#4"]
    assert {r.slot for r in read(refs, ReadOptions(final=3))} == {"reranker"}


def test_base_rulebook_floor_ignores_another_games_rulebook() -> None:
    refs = ["faq#1", "h-rb#1", "rb#9"]
    rows = read(refs, ReadOptions(final=2, floors=("base_rulebook",)))
    assert [(r.chunk_id, r.slot) for r in rows] == [(ck("faq#1"), "reranker"),
                                                    (ck("rb#9"), "floor:base_rulebook")]


def boosted(refs: list[str], boost: tuple[str, ...]) -> pd.DataFrame:
    """bm25 ranks in the order given; a zero-weight boost arm also carries ``boost``
    (it sets ``rank_boost`` without moving the fused order)."""
    votes = ladder(refs)
    for r, ref in enumerate(boost, start=1):
        votes[ref] = {**votes[ref], "boost": r}
    return fused(votes, arms=("bm25", "dense"))


def test_errata_floor_gives_each_surviving_errata_document_a_slot() -> None:
    refs = ["rb#1", "rb#2", "rb#3", "rb#4", "er#1", "er#2", "er2#1"]
    rows = read(boosted(refs, ("er#2", "er#1", "er2#1")), ReadOptions(final=4, floors=("errata",)))
    # one slot per errata document, to its best-re-ranked carried chunk (er#1 before er#2)
    assert [(r.chunk_id, r.slot) for r in rows] == [
        (ck("rb#1"), "reranker"), (ck("rb#2"), "reranker"),
        (ck("er#1"), "floor:errata"), (ck("er2#1"), "floor:errata")]
    assert rows[2].carried_by == "bm25+boost"


def test_errata_floor_needs_the_errata_arm_to_carry_the_correction() -> None:
    refs = ["rb#1", "rb#2", "er#1", "er2#1"]
    only_er2 = read(boosted(refs, ("er2#1",)), ReadOptions(final=1, floors=("errata",)))
    assert [(r.chunk_id, r.slot) for r in only_er2] == [(ck("er2#1"), "floor:errata")]
    unmatched = read(refs, ReadOptions(final=1, floors=("errata",)))  # nothing carried by boost
    assert [r.slot for r in unmatched] == ["reranker"]
    any_arm = read(refs, ReadOptions(final=2, floors=("errata",), errata_arm=None))
    assert [(r.chunk_id, r.slot) for r in any_arm] == [(ck("er#1"), "floor:errata"),
                                                       (ck("er2#1"), "floor:errata")]


def test_per_book_floor_only_on_a_multi_book_pool() -> None:
    single = read(["rb#1", "rb#2", "rb#3", "faq#1"], ReadOptions(final=2, floors=("per_book",)))
    assert {r.slot for r in single} == {"reranker"}  # one book; the FAQ is not a book
    multi = read(["rb#1", "rb#2", "rb#3", "ex#1", "er#1"],
                 ReadOptions(final=3, floors=("per_book",)))
    assert [(r.chunk_id, r.slot) for r in multi] == [
        (ck("rb#1"), "reranker"), (ck("ex#1"), "floor:per_book"), (ck("er#1"), "floor:per_book")]


def test_floor_holds_protect_earlier_floors_from_later_ones() -> None:
    # final 3: rb#1 rb#2 er#1 selected by the re-ranker; er#1 is held by the errata floor,
    # so per_book (which wants ex#1) must evict rb#2, not er#1
    refs = ["rb#1", "rb#2", "er#1", "ex#1"]
    rows = read(boosted(refs, ("er#1",)), ReadOptions(final=3, floors=("errata", "per_book")))
    assert [(r.chunk_id, r.slot) for r in rows] == [
        (ck("rb#1"), "reranker"), (ck("er#1"), "reranker"), (ck("ex#1"), "floor:per_book")]
    # without the hold, per_book alone still keeps one chunk per book
    alone = read(refs, ReadOptions(final=3, floors=("per_book",)))
    assert [r.chunk_id for r in alone] == [ck("rb#1"), ck("er#1"), ck("ex#1")]


def test_demands_beyond_the_free_slots_are_dropped() -> None:
    refs = ["faq#1", "er#1", "er2#1", "rb#1"]
    rows = read(boosted(refs, ("er#1", "er2#1")),
                ReadOptions(final=1, floors=("errata", "base_rulebook")))
    assert [(r.chunk_id, r.slot) for r in rows] == [(ck("er#1"), "floor:errata")]


def test_floor_order_decides_who_is_held() -> None:
    refs = ["faq#1", "faq#2", "rb#1", "er#1"]
    votes = boosted(refs, ("er#1",))
    a = read(votes, ReadOptions(final=2, floors=("base_rulebook", "errata")))
    assert [r.slot for r in a] == ["floor:base_rulebook", "floor:errata"]
    b = read(votes, ReadOptions(final=1, floors=("base_rulebook", "errata")))
    assert [(r.chunk_id, r.slot) for r in b] == [(ck("rb#1"), "floor:base_rulebook")]
    c = read(votes, ReadOptions(final=1, floors=("errata", "base_rulebook")))
    assert [(r.chunk_id, r.slot) for r in c] == [(ck("er#1"), "floor:errata")]


def test_lexical_reranker_orders_by_overlap_then_fused_order() -> None:
    texts = {"rb#1": "Setup of the harbour.", "rb#2": "A boat may move three spaces.",
             "rb#3": "Lanterns score two points.", "rb#4": "Boats move on the harbour."}
    rows = read(["rb#1", "rb#2", "rb#3", "rb#4"], ReadOptions(reranker="lexical", floors=()),
                question("How far may a boat move?"), texts)
    # overlap with {how, far, may, a, boat, move}: rb#2 = 4 (may a boat move), rb#4 = 1 (move),
    # rb#1 = 0, rb#3 = 0 -> ties keep fused order
    assert [r.chunk_id for r in rows] == [ck("rb#2"), ck("rb#4"), ck("rb#1"), ck("rb#3")]
    assert rows[0].rerank_score == 4 + (1 / 62) / (2 * (1 / 61))
    assert [r.rerank_rank for r in rows] == [1, 2, 3, 4]
    assert [r.fused_rank for r in rows] == [2, 4, 1, 3]


def test_lexical_reranker_without_shared_words_keeps_fused_order() -> None:
    pool = [Candidate(ck(f"rb#{i}"), "rb", "rulebook", "G", i, "", "английский", i,
                      1 / (60 + i), "bm25") for i in (1, 2, 3)]
    scores = LexicalReranker().score("Сколько очков?", pool)
    assert list(order(scores, [c.chunk_id for c in pool])) == [0, 1, 2]


def test_empty_fused_list_gives_an_empty_read() -> None:
    empty = fused({"rb#1": {"bm25": 1}}).iloc[0:0]
    assert answering_read(question(), empty, {}, DOCS, ReadOptions()) == ()


def test_inputs_are_not_modified() -> None:
    df = fused(ladder(["faq#1", "rb#1", "er#1"]))
    before = df.copy()
    answering_read(question(), df, chunks_for(["faq#1", "rb#1", "er#1"]), DOCS,
                   ReadOptions(final=1))
    pd.testing.assert_frame_equal(df, before)


def test_question_game_defaults() -> None:
    pool = [Candidate("x", "h-rb", "rulebook", "H", 1, "", "", 1, 0.1, "bm25")]
    assert question_game(question(game="G"), DOCS, pool) == "G"
    assert question_game(question(game=None), DOCS, pool) == "H"  # two games: the fused #1's
    one_game = {k: v for k, v in DOCS.items() if v.game == "G"}
    assert question_game(question(game=None), one_game, pool) == "G"


def test_read_options_report_every_problem() -> None:
    with pytest.raises(ValidationError) as exc:
        ReadOptions(pool=0, final=0, reranker="nope", floors=("errata", "errata", "bogus"))
    msg = str(exc.value)
    assert len(exc.value.problems) == 5
    assert "fused, lexical" in msg and "base_rulebook, errata, per_book" in msg


def test_registries_list_the_builtins() -> None:
    assert RERANKERS.names() == ["fused", "lexical"]
    assert FLOORS.names() == ["base_rulebook", "errata", "per_book"]


def test_context_recall_counts_requirements_covered_by_the_read() -> None:
    rows = read(["rb#1", "rb#2", "er#1"], NO_FLOORS)
    assert context_recall(rows, question("q", "rb#2", "er#1", "rb#7")) == 2 / 3
    assert context_recall(rows, question("q")) == 0.0  # unanswerable: documented default
    assert context_recall((), question("q", "rb#2")) == 0.0


def test_a_foreign_hit_takes_its_pool_row_but_is_never_read() -> None:
    """An id that matched no chunk (its text is not in the run) keeps its place in the pool's
    first rows, as the service reads them, and is no candidate."""
    refs = ["rb#1", "rb#2", "rb#3", "rb#4"]
    df = fused(ladder(refs))
    outside = df.iloc[:1].assign(chunk_id="other#p0001.c000", doc_id="other#p0001.c000", page=0, fused_rank=0,
                                 fused_score=1.0, foreign=True)
    df = pd.concat([outside, df.assign(foreign=False)], ignore_index=True)
    df["fused_rank"] = range(1, len(df) + 1)
    pool = build_pool(df, chunks_for(refs), DOCS, 3)
    assert [c.chunk_id for c in pool] == [ck("rb#1"), ck("rb#2")]  # the foreign row was one of the 3
    rows = answering_read(question(), df, chunks_for(refs), DOCS, ReadOptions(pool=3, final=2), ARMS)
    assert "other#p0001.c000" not in {r.chunk_id for r in rows} and len(rows) == 2
