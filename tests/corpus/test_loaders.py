"""Loaders: formats, page numbering, labels, headings, Unicode, and errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from rulegauge.core.errors import RegistryError, ValidationError
from rulegauge.corpus.loaders import LOADERS, SUFFIXES, count_pages, format_of, load_document, page_labels
from rulegauge.corpus.records import DocumentSpec
from tests.helpers.documents import FIXTURES, make_pdf, spec


@pytest.fixture
def rulebook_pdf(tmp_path: Path) -> Path:
    return make_pdf(
        tmp_path / "rules.pdf",
        [["Harbour Lanterns"],
         ["Setup", "Each player takes five lantern tokens.", "Turn Order",
          "Move your boat up to three spaces."],
         ["Scoring", "A lit lantern scores two points."]],
        outline=[(0, "Setup", 1), (1, "Turn Order", 1), (0, "Scoring", 2)],
        labels=[(0, 0, "/r", None, 1), (1, 2, "/D", None, 1)],
        title="Harbour Lanterns Rulebook")


def test_registry_and_suffixes() -> None:
    assert LOADERS.names() == ["pdf", "text", "markdown", "jsonl", "collection"]
    assert "collection" not in SUFFIXES.values()  # only by the option format: collection
    assert SUFFIXES[".md"] == "markdown" and SUFFIXES[".txt"] == "text"
    assert format_of("x.TXT") == "text"
    assert format_of("notes.data", {"format": "text"}) == "text"
    with pytest.raises(RegistryError, match="choose one of: pdf, text, markdown, jsonl, collection"):
        format_of("x.txt", {"format": "docx"})
    with pytest.raises(ValidationError, match="cannot infer the format"):
        format_of("x.docx")


def test_pdf_pages_labels_outline_title(rulebook_pdf: Path) -> None:
    doc, pages = load_document(spec(rulebook_pdf))
    assert [p.page for p in pages] == [1, 2, 3]
    assert [p.label for p in pages] == ["i", "1", "2"]
    assert page_labels(spec(rulebook_pdf)) == ["i", "1", "2"]
    assert count_pages(spec(rulebook_pdf)) == 3
    assert pages[1].text.startswith("Setup\nEach player takes five lantern tokens.")
    assert doc.title == "Harbour Lanterns Rulebook"
    assert doc.source_sha256 == hashlib.sha256(rulebook_pdf.read_bytes()).hexdigest()
    assert pages[0].outline_headings == ((),)
    assert pages[1].outline_headings == ((), ("Setup",), ("Setup", "Turn Order"))
    assert pages[2].outline_headings == (("Setup", "Turn Order"), ("Scoring",))


def test_pdf_without_labels_gives_none(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "plain.pdf", [["one"], ["two"]])
    assert page_labels(spec(pdf)) == [None, None]
    doc, pages = load_document(spec(pdf))
    assert doc.title == "plain"  # no metadata title: the file stem
    assert all(p.outline_headings == () for p in pages)


def test_pdf_cyrillic_and_persian_intact(tmp_path: Path) -> None:
    ru, fa = "Каждый игрок берёт пять жетонов", "هر بازیکن پنج ژتون برمی‌دارد"
    # PDFs store right-to-left glyphs in visual order; extraction restores logical order
    pdf = make_pdf(tmp_path / "intl.pdf", [[ru], [fa[::-1]]])
    _, pages = load_document(spec(pdf))
    assert pages[0].text == ru
    assert pages[1].text == fa


def test_spec_title_wins(rulebook_pdf: Path) -> None:
    s = DocumentSpec("d", str(rulebook_pdf), "rulebook", "G", "en-1", "en", "My Title")
    assert load_document(s)[0].title == "My Title"


def test_text_pages_split_at_form_feed() -> None:
    doc, pages = load_document(spec(FIXTURES / "lanterns.txt"))
    assert len(pages) == 2  # the trailing form feed ends page 2, it does not open page 3
    assert count_pages(spec(FIXTURES / "lanterns.txt")) == 2
    assert pages[0].text.startswith("HARBOUR LANTERNS\n\nA light-hearted game")
    assert pages[1].text.startswith("The tide card is revealed")
    assert [p.label for p in pages] == [None, None]
    assert doc.title == "lanterns"


def test_markdown_pages_and_headings() -> None:
    _, pages = load_document(spec(FIXTURES / "lanterns.md"))
    assert len(pages) == 3  # <!-- pagebreak --> and a form feed
    assert pages[0].text.startswith("Harbour Lanterns\n\nA light-hearted game")
    assert "# not a heading" in pages[0].text  # fenced code is left alone
    assert "<!-- pagebreak -->" not in pages[1].text
    assert pages[0].outline_headings == ((), ("Harbour Lanterns",),
                                         ("Harbour Lanterns", "Setup"))
    assert pages[1].outline_headings == (
        ("Harbour Lanterns", "Setup"), ("Harbour Lanterns", "Playing"),
        ("Harbour Lanterns", "Playing", "Moving"))
    assert pages[2].outline_headings == (("Harbour Lanterns", "Playing", "Moving"),
                                         ("Harbour Lanterns", "Playing", "Lighting"))
    assert pages[2].text.startswith("Lighting\n")  # closing #s removed too


def test_jsonl_pages_labels_headings_cyrillic() -> None:
    _, pages = load_document(spec(FIXTURES / "lanterns.jsonl"))
    assert [p.page for p in pages] == [1, 2, 3, 4]
    assert pages[2].text == ""  # absent from the file: an empty page
    assert [p.label for p in pages] == ["i", "1", None, "3"]
    assert pages[0].text == "Огни гавани\n\nПравила игры для двух-четырёх моряков."
    assert pages[1].outline_headings == (("Огни гавани",), ("Огни гавани", "Подготовка"))
    assert pages[3].outline_headings == (("Огни гавани", "Подготовка"),)
    assert page_labels(spec(FIXTURES / "lanterns.jsonl")) == ["i", "1", None, "3"]
    assert count_pages(spec(FIXTURES / "lanterns.jsonl")) == 4


def test_persian_text_intact() -> None:
    raw = (FIXTURES / "persian.txt").read_text(encoding="utf-8")
    _, pages = load_document(spec(FIXTURES / "persian.txt"))
    assert pages[0].text == raw.strip()
    assert "\u200c" in pages[0].text


def test_bad_jsonl_reports_every_line() -> None:
    with pytest.raises(ValidationError) as info:
        load_document(spec(FIXTURES / "bad.jsonl"))
    where = [p.where for p in info.value.problems]
    path = str(FIXTURES / "bad.jsonl")
    assert where == [f"{path}:2", f"{path}:3", f"{path}:4", f"{path}:5", f"{path}:5"]
    text = str(info.value)
    assert "'page' must be an integer >= 1" in text and "invalid JSON" in text
    assert "page 1 appears twice" in text and "unknown key 'lable'" in text
    assert "'text' must be a string" in text


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.pdf"
    for fn in (load_document, count_pages, page_labels):
        with pytest.raises(ValidationError, match=r"nowhere\.pdf.*file not found"):
            fn(spec(missing))


def test_invalid_utf8_names_line(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("first line\nsecond: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValidationError, match=r"latin1.txt:2: not valid UTF-8"):
        load_document(spec(bad))


def test_not_a_pdf(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pdf"
    fake.write_text("this is not a PDF", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"fake\.pdf"):
        load_document(spec(fake))


def test_format_option_overrides_suffix(tmp_path: Path) -> None:
    f = tmp_path / "pages.data"
    f.write_text(json.dumps({"page": 1, "text": "Setup"}) + "\n", encoding="utf-8")
    _, pages = load_document(spec(f, format="jsonl"))
    assert pages[0].text == "Setup"


def test_crlf_and_pdf_word_separators_normalised(tmp_path: Path) -> None:
    f = tmp_path / "crlf.txt"
    f.write_bytes(b"Setup\r\nEach\t\r \xc2\xa0player takes tokens.\r\n")
    _, pages = load_document(spec(f))
    assert pages[0].text == "Setup\nEach player takes tokens."
