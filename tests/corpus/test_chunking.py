"""Chunkers, heading paths (outline, markup, detection) and corpus building."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from rulegauge.core.errors import ConfigError, ValidationError
from rulegauge.corpus.boilerplate import BoilerplateOptions
from rulegauge.corpus.chunking import (
    CHUNKERS,
    DEFAULT_CHUNKING,
    ChunkingOptions,
    build_corpus,
    chunk_pages,
    dominant_path,
    page_boundaries,
    split_span,
)
from rulegauge.corpus.headings import detect_headings, find_headings, heading_kind
from rulegauge.corpus.outline import Boundary, OutlineEntry, locate, page_headings, sections
from rulegauge.corpus.page_cache import PageCache
from rulegauge.corpus.records import Document, Page, chunk_key
from tests.helpers.documents import FIXTURES, make_pdf, spec

DOC = Document("d", "rulebook", "G", "en-1", "en", "T")


def pages_of(*texts: str, headings: tuple = ()) -> list[Page]:
    return [Page("d", i, t, None, headings[i - 1] if headings else ())
            for i, t in enumerate(texts, start=1)]


def check_spans(chunks, pages) -> None:
    by_page = {p.page: p for p in pages}
    for c in chunks:
        assert by_page[c.page].text[c.char_start:c.char_end] == c.text
        assert c.text == c.text.strip() and c.text
    assert [c.chunk_id for c in chunks] == sorted(c.chunk_id for c in chunks)


def test_options_validate_and_list_choices() -> None:
    assert CHUNKERS.names() == ["heading", "page", "size"]
    assert ChunkingOptions("heading", 1200, 150, 80, True) == DEFAULT_CHUNKING
    with pytest.raises(ConfigError, match="choose one of: heading, page, size") as info:
        ChunkingOptions(method="words", max_chars=10, overlap_chars=-1)
    assert "max_chars must be >= 50" in str(info.value)
    assert "overlap_chars must be in" in str(info.value)
    assert ChunkingOptions().describe()["method"] == "heading"


def test_page_method_one_chunk_per_nonempty_page() -> None:
    pages = pages_of("  First page.  ", "", "Third page.")
    chunks = chunk_pages(DOC, pages, ChunkingOptions(method="page"))
    assert [(c.chunk_id, c.text, c.char_start) for c in chunks] == [
        (chunk_key("d", 1, 0), "First page.", 2), (chunk_key("d", 3, 0), "Third page.", 0)]
    check_spans(chunks, pages)


def test_size_method_respects_max_and_overlap() -> None:
    sentence = "Each sailor lights one lantern per turn. "
    text = sentence * 40  # 40 * 41 characters
    pages = pages_of(text.strip())
    opt = ChunkingOptions(method="size", max_chars=300, overlap_chars=60, min_chars=0)
    chunks = chunk_pages(DOC, pages, opt)
    check_spans(chunks, pages)
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.text.endswith("turn.") for c in chunks)  # cut at sentence ends
    assert all(c.text.startswith("Each") for c in chunks)  # overlap starts at a sentence
    for a, b in itertools.pairwise(chunks):
        assert 0 < a.char_end - b.char_start <= 60
    assert chunks[0].char_start == 0 and chunks[-1].char_end == len(pages[0].text)


def test_split_span_balances_and_hard_cuts() -> None:
    text = "x" * 250
    assert split_span(text, 0, 250, 100, 0) == [(0, 100), (100, 200), (200, 250)]
    words = " ".join(["lantern"] * 30)  # 30 * 8 - 1 = 239 characters
    spans = split_span(words, 0, len(words), 130, 0)
    assert len(spans) == 2
    assert abs((spans[0][1] - spans[0][0]) - (spans[1][1] - spans[1][0])) <= 8


def test_heading_method_on_text_fixture() -> None:
    built = build_corpus([spec(FIXTURES / "lanterns.txt", "lt")], ChunkingOptions(min_chars=0))
    chunks = built.chunks
    check_spans(chunks, built.pages)
    paths = [c.heading_path for c in chunks]
    assert paths == [
        ("HARBOUR LANTERNS",),
        ("SETUP",),
        ("SETUP", "1. Turn Order"),
        ("SETUP", "1. Turn Order", "1.1 Lighting a Lantern"),
        ("SETUP", "1. Turn Order", "1.1 Lighting a Lantern"),  # page 2 inherits
        ("SCORING",),
    ]
    assert [c.page for c in chunks] == [1, 1, 1, 1, 2, 2]
    assert chunks[4].text.startswith("The tide card is revealed")


def test_heading_method_merges_sections_below_min_chars() -> None:
    corpus = build_corpus([spec(FIXTURES / "lanterns.txt", "lt")], ChunkingOptions(min_chars=80))
    merged = [c for c in corpus.chunks if c.text.startswith("1. Turn Order")]
    # "1. Turn Order" (69 characters) merges into "1.1 Lighting a Lantern" (80)
    assert len(merged) == 1 and "1.1 Lighting a Lantern" in merged[0].text
    assert merged[0].heading_path == ("SETUP", "1. Turn Order", "1.1 Lighting a Lantern")
    assert len(corpus.chunks) == 5


def test_markdown_heading_paths() -> None:
    corpus = build_corpus([spec(FIXTURES / "lanterns.md", "md")], ChunkingOptions(min_chars=0))
    got = [(c.page, c.heading_path, c.text.split("\n")[0]) for c in corpus.chunks]
    assert got == [
        (1, ("Harbour Lanterns",), "Harbour Lanterns"),
        (1, ("Harbour Lanterns", "Setup"), "Setup"),
        (2, ("Harbour Lanterns", "Setup"), "Players keep their tokens in front of them."),
        (2, ("Harbour Lanterns", "Playing"), "Playing"),
        (2, ("Harbour Lanterns", "Playing", "Moving"), "Moving"),
        (3, ("Harbour Lanterns", "Playing", "Lighting"), "Lighting"),
    ]


def test_pdf_outline_heading_paths(tmp_path: Path) -> None:
    pdf = make_pdf(
        tmp_path / "r.pdf",
        [["Harbour Lanterns", "A game of boats and lanterns for two to four sailors."],
         ["Setup", "Each player takes five lantern tokens and a harbour board.",
          "Turn Order", "Move your boat up to three harbour spaces on your turn."],
         ["Boats drift one space with the tide at the end of each round."]],
        outline=[(0, "Setup", 1), (1, "Turn Order", 1)])
    corpus = build_corpus([spec(pdf)], ChunkingOptions(min_chars=10))
    got = [(c.page, c.heading_path, c.text.split("\n")[0]) for c in corpus.chunks]
    assert got == [
        (1, (), "Harbour Lanterns"),
        (2, ("Setup",), "Setup"),
        (2, ("Setup", "Turn Order"), "Turn Order"),
        (3, ("Setup", "Turn Order"), "Boats drift one space with the tide at the end of each round."),
    ]
    assert all(c.page_label is None for c in corpus.chunks)


def test_short_sections_merge_forward_and_take_the_dominant_path() -> None:
    text = "Setup\n\nHarbour Board\nPlace the harbour board in the middle of the table."
    pages = pages_of(text)
    chunks = chunk_pages(DOC, pages, ChunkingOptions(min_chars=20))
    assert len(chunks) == 1 and chunks[0].text == text
    assert chunks[0].heading_path == ("Setup", "Harbour Board")


def test_empty_and_whitespace_pages_give_no_chunks() -> None:
    assert chunk_pages(DOC, pages_of("", "   \n "), DEFAULT_CHUNKING) == []


def test_dominant_path_ties_go_to_the_earliest() -> None:
    bounds = [Boundary(0, ("A",)), Boundary(10, ("B",))]
    assert dominant_path(bounds, 0, 20) == ("A",)
    assert dominant_path(bounds, 5, 20) == ("B",)
    assert dominant_path([], 0, 5) == ()


@pytest.mark.parametrize("line, kind", [
    ("OVERVIEW", "caps"), ("LEGISLATIVE SESSION", "caps"), ("3.2 Voting", "numbered-2"),
    ("1. Setup", "numbered-1"), ("Hit Points", "title"),
    ("Designation of the Head Digger", "title"),
    ("OR", None), ("Each player takes five tokens.", None), ("Hitler. If", None),
    ("Shari Spiro, Dan Shapiro, Elan Lee", None), ("12", None),
    ("1. To choose a result, each player picks only one of these operations today", None),
])
def test_heading_kind(line: str, kind: str | None) -> None:
    assert heading_kind(line, blank_before=False, blank_after=False) == kind


def test_isolated_sentence_case_and_caseless_headings() -> None:
    assert heading_kind("Ход игры", blank_before=True, blank_after=True) == "isolated"
    assert heading_kind("Ход игры", blank_before=True, blank_after=False) is None
    assert heading_kind("آموزش بازی", blank_before=True, blank_after=True) == "isolated"


def test_heading_context_rules() -> None:
    text = ("The Liberals win by enacting five policies.\nOVERVIEW\nSome body text here.\n"
            "and then\nLiberal Policies\nare shuffled.\nThe Presidential Candidate\n"
            "must nominate.")
    assert [t for _, _, t in find_headings(text)] == ["OVERVIEW"]


def test_detect_headings_style_stack_over_pages() -> None:
    # game names sit directly above a section heading (no body): they nest above it
    texts = ["Accordion\n\nSetup\nDeal the cards.\n\nGoal\nRemove the cards.",
             "More about the goal of the game.",
             "Agnes\n\nSetup\nDeal seven piles."]
    bounds = detect_headings(texts)
    assert [b.path for b in bounds[0]] == [("Accordion",), ("Accordion", "Setup"),
                                           ("Accordion", "Goal")]
    assert bounds[1] == [Boundary(0, ("Accordion", "Goal"))]  # inherited
    assert [b.path for b in bounds[2]] == [("Agnes",), ("Agnes", "Setup")]


def test_page_boundaries_sources() -> None:
    assert page_boundaries(pages_of("just some lower case words."))[0] == "none"
    assert page_boundaries(pages_of("SETUP\nDeal."))[0] == "detected"
    assert page_boundaries(pages_of("SETUP\nDeal."), detect=False)[0] == "none"
    assert page_boundaries(pages_of("x", headings=(((), ("A",)),)))[0] == "outline"


def test_page_headings_top_and_starts() -> None:
    entries = [OutlineEntry("A", ("A",), 2, 0), OutlineEntry("B", ("A", "B"), 2, 1),
               OutlineEntry("C", ("C",), 4, 0)]
    assert page_headings(entries, 5) == [
        ((),), ((), ("A",), ("A", "B")), (("A", "B"),), (("A", "B"), ("C",)), (("C",),)]
    assert page_headings([], 2) == [(), ()]


def test_locate_is_tolerant_and_prefers_line_starts() -> None:
    text = "The age of a dwarf.\nAge\nDwarves mature slowly.\nHalf‐Elf\nTable: none\nThe Bard"
    assert locate(text, ["Age", "half-elf", "Table: The Bard", "Missing"]) == [
        text.index("\nAge") + 1, text.index("Half"), text.index("The Bard"), None]


def test_sections_place_unlocated_entries_and_sort() -> None:
    text = "Intro text.\nSecond Title\nBody.\nFirst Title\nBody."
    heads = ((("Top",)), ("First Title",), ("Ghost",), ("Second Title",))
    got = [(b.start, b.path, b.located) for b in sections(text, heads)]
    first, second = text.index("First Title"), text.index("Second Title")
    assert got == [(0, ("Top",), True), (second, ("Second Title",), True),
                   (first, ("Ghost",), False)]


def test_build_corpus_records_options_and_hash_changes() -> None:
    specs = [spec(FIXTURES / "lanterns.txt", "lt"), spec(FIXTURES / "lanterns.md", "md")]
    a = build_corpus(specs)
    b = build_corpus(specs)
    c = build_corpus(specs, ChunkingOptions(method="page"))
    assert a.content_hash == b.content_hash != c.content_hash
    assert a.chunking == {**DEFAULT_CHUNKING.describe(), "boilerplate": None}
    d = build_corpus(specs, boilerplate=BoilerplateOptions())
    assert d.chunking["boilerplate"] == BoilerplateOptions().describe()
    assert d.content_hash != a.content_hash
    assert [doc.doc_id for doc in a.documents] == ["lt", "md"]
    assert a.page_count == {"lt": 2, "md": 3}


def test_build_corpus_collects_every_problem(tmp_path: Path) -> None:
    specs = [spec(tmp_path / "a.txt", "a"), spec(tmp_path / "b.pdf", "b"),
             spec(FIXTURES / "lanterns.txt", "lt"), spec(FIXTURES / "lanterns.md", "lt")]
    with pytest.raises(ValidationError) as info:
        build_corpus(specs)
    msgs = [str(p) for p in info.value.problems]
    assert len(msgs) == 3
    assert "a.txt" in msgs[0] and "b.pdf" in msgs[1] and "duplicate document id 'lt'" in msgs[2]


@pytest.mark.shared
@pytest.mark.slow
def test_srd_outline_matches_flattened_json(shared_dir: Path) -> None:
    from pypdf import PdfReader

    from rulegauge.corpus.outline import read_outline

    folder = shared_dir / "corpora" / "srd-5.1"
    entries = read_outline(PdfReader(folder / "SRD5.1-CCBY4.0License.pdf"))
    expected = json.loads((folder / "srd_5_1_outline.json").read_text(encoding="utf-8"))["entries"]
    assert len(entries) == 1958
    assert [(e.title, list(e.path), e.page, e.level) for e in entries] == [
        (x["title"], x["heading_path"], x["page"], x["level"]) for x in expected]


@pytest.mark.shared
@pytest.mark.slow
def test_srd_chunks_carry_outline_paths(shared_dir: Path, srd_pages: PageCache) -> None:
    from rulegauge.corpus.chunking import build_document

    folder = shared_dir / "corpora" / "srd-5.1"
    s = spec(folder / "SRD5.1-CCBY4.0License.pdf", "srd")
    built = build_document(s, page_cache=srd_pages)  # the session's one extraction (conftest)
    expected = json.loads((folder / "srd_5_1_outline.json").read_text(encoding="utf-8"))["entries"]
    check_spans(built.chunks, built.pages)
    assert len(built.pages) == 403
    assert all(len(c.text) <= DEFAULT_CHUNKING.max_chars for c in built.chunks)
    paths = {c.heading_path for c in built.chunks}
    # every chunk's path is an outline path; most outline paths head some chunk
    outline_paths = {tuple(x["heading_path"]) for x in expected}
    assert paths <= outline_paths
    assert len(paths) >= 0.8 * len(outline_paths)
    page3 = [c.heading_path for c in built.chunks if c.page == 3]
    assert ("Races", "Racial Traits", "Age") in page3
    assert ("Races", "Dwarf", "Dwarf Traits") in page3


def test_title_every_gives_each_chunk_its_documents_title_as_context() -> None:
    """``title = "every"``: the searched text is the title (the page's own, else the
    document's), a blank line and the chunk's text; a chunk that begins with the title,
    and every chunk under the default, has no context; spans and texts are unchanged."""
    pages = [*pages_of("Setup. " * 40, "Scoring. " * 40),
             Page("d", 3, "Own title\n\nBody of a record. " + "More words. " * 200, None, (), "Own title")]
    opt = ChunkingOptions(method="size", max_chars=400, overlap_chars=0)
    plain = chunk_pages(DOC, pages, opt)
    every = chunk_pages(DOC, pages, ChunkingOptions(method="size", max_chars=400, overlap_chars=0, title="every"))
    assert [(c.chunk_id, c.text, c.char_start) for c in every] == [(c.chunk_id, c.text, c.char_start) for c in plain]
    check_spans(every, pages)
    assert all(c.context == "" and c.search_text == c.text for c in plain)
    want = ["T" if c.page < 3 else ("" if c.text.startswith("Own title") else "Own title") for c in every]
    assert [c.context for c in every] == want and want.count("") == 1
    assert all(c.search_text == (f"{c.context}\n\n{c.text}" if c.context else c.text) for c in every)
    assert "title" not in opt.describe() and ChunkingOptions(title="every").describe()["title"] == "every"
    with pytest.raises(ConfigError, match="unknown title handling 'all'; choose one of: first, every"):
        ChunkingOptions(title="all")
