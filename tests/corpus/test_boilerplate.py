"""Boilerplate filter: running headers/footers, page numbers, web noise."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.core.errors import RegistryError
from rulegauge.corpus.boilerplate import RULES, BoilerplateOptions, clean_pages
from rulegauge.corpus.loaders import load_document
from rulegauge.corpus.records import Page
from tests.helpers.documents import FIXTURES, spec


def pages_of(*texts: str) -> list[Page]:
    return [Page("d", i, t) for i, t in enumerate(texts, start=1)]


def test_rules_registered_in_order() -> None:
    assert RULES.names() == ["repeated", "page_number", "web_noise", "tail", "teaser"]
    with pytest.raises(RegistryError, match="choose one of: repeated"):
        clean_pages(pages_of("x"), BoilerplateOptions(rules=("headers",)))


def test_running_header_and_footer_removed_with_digits_masked() -> None:
    texts = [f"Harbour Lanterns Rulebook v2 {n}\nHarbour Lanterns\nBody of page {n}.\nPage {n} of 4"
             for n in range(1, 5)]
    pages = pages_of(*texts)
    cleaned, report = clean_pages(pages)
    # the two-line header is peeled line by line; the footer is a page number
    assert [p.text for p in cleaned] == [f"Body of page {n}." for n in range(1, 5)]
    assert report.by_reason == (("repeated", 12),)
    assert report.lines_removed == 12
    assert report.examples[0] == ("repeated", "Harbour Lanterns Rulebook v2 1")
    assert pages[0].text == texts[0]  # inputs untouched


def test_repeated_section_title_below_a_unique_first_line_stays() -> None:
    texts = [f"Game {name}\nSetup\nDeal the cards for {name}.\nStrategy\nPlay slowly."
             for name in ("Accordion", "Agnes", "Athena", "Bakers Dozen")]
    cleaned, report = clean_pages(pages_of(*texts))
    assert [p.text for p in cleaned] == texts
    assert report.lines_removed == 0 and report.by_reason == ()


def test_too_few_pages_for_repetition() -> None:
    texts = ["Header\nOne.", "Header\nTwo."]  # 2 pages < min_pages 3
    cleaned, _ = clean_pages(pages_of(*texts))
    assert [p.text for p in cleaned] == texts


@pytest.mark.parametrize("line", ["12", "- 12 -", "Page 3", "3 / 40", "page 7 of 9", "xiv"])
def test_page_number_lines_at_edges(line: str) -> None:
    cleaned, report = clean_pages(pages_of(f"{line}\nRules text.", f"Rules text.\n{line}"))
    assert [p.text for p in cleaned] == ["Rules text.", "Rules text."]
    assert report.by_reason == (("page_number", 2),)


def test_page_number_in_the_middle_stays() -> None:
    text = "Scoring\n12\nA lit lantern scores two points."
    cleaned, _ = clean_pages(pages_of(text))
    assert cleaned[0].text == text


def test_web_page_noise_and_tail() -> None:
    _, pages = load_document(spec(FIXTURES / "webpage.txt"))
    cleaned, report = clean_pages(pages)
    text = cleaned[0].text
    for gone in ("Skip to content", "Read more", "Share this post", "cookie", "Related posts",
                 "Rainy evening games", "Interview with"):
        assert gone not in text
    for kept in ("VARIANT RULES", "A coin can be spent exactly like a lantern token.",
                 "richest sailor wins the evening."):
        assert kept in text
    assert dict(report.by_reason) == {"web_noise": 4, "tail": 3}
    removed = sum(len(line.replace(" ", "")) for line in (
        "Skip to content", "Read more", "Share this post",
        "We use cookies to improve your experience. By browsing you accept our cookie policy.",
        "Related posts",
        "Rainy evening games: our top five picks for small tables and short nights, with photos...",
        "Interview with the harbour artist about lanterns, boats and painting the sea at night..."))
    total = len("".join(pages[0].text.split()))
    assert report.page_share == ((1, pytest.approx(removed / total)),)


def test_rule_words_are_not_web_noise() -> None:
    text = "Search\nThe active player searches the ruins.\nHome\nReturn to port."
    cleaned, _ = clean_pages(pages_of(text))
    assert cleaned[0].text == text


def test_teasers_need_two_on_a_page() -> None:
    one = "Rules\nRemove every card except the faces, and you have won when the table looks like this..."
    teaser = "A long excerpt of a blog post about lanterns and boats on rainy evenings that goes on…"
    cleaned, report = clean_pages(pages_of(one, f"Rules text.\n{teaser}\n{teaser}"))
    assert cleaned[0].text == one
    assert cleaned[1].text == "Rules text."
    assert report.by_reason == (("teaser", 2),)


def test_report_examples_are_distinct_and_capped(tmp_path: Path) -> None:
    texts = [f"Lantern Guide page {n}\nBody {n}." for n in range(1, 7)]
    _, report = clean_pages(pages_of(*texts), BoilerplateOptions(examples=2))
    assert report.examples == (("repeated", "Lantern Guide page 1"),
                               ("repeated", "Lantern Guide page 2"))
    assert report.doc_id == "d"


def test_empty_document() -> None:
    cleaned, report = clean_pages([], doc_id="empty")
    assert cleaned == [] and report.doc_id == "empty" and report.lines_removed == 0


@pytest.mark.shared
def test_aisleriot_loses_nothing(shared_dir: Path) -> None:
    for lang in ("en", "de", "fr", "es", "ru"):
        path = shared_dir / "corpora" / "aisleriot" / f"aisleriot-{lang}.txt"
        _, pages = load_document(spec(path))
        _, report = clean_pages(pages)
        assert report.lines_removed == 0, (lang, report.examples)


@pytest.mark.shared
def test_archaeology_web_page_blog_tail_removed(shared_dir: Path) -> None:
    path = shared_dir / "corpora" / "archaeology-texts" / "en-archeotrek-web-page.txt"
    _, pages = load_document(spec(path))
    cleaned, report = clean_pages(pages)
    assert "Latest from Blog" not in cleaned[0].text
    assert "Counting scores" in cleaned[0].text
    assert dict(report.by_reason)["tail"] >= 10
