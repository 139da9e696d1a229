"""Citation markers: parsing, mapping to passages read, per-answer figures."""

from __future__ import annotations

import pytest

from rulegauge.answering.citations import (
    MAX_RANGE,
    CitedPassage,
    citation_stats,
    parse_markers,
    resolve,
)


def numbers(text: str) -> list[tuple[int, ...]]:
    return [m.numbers for m in parse_markers(text)]


@pytest.mark.parametrize("text, expected", [
    ("Yes [1].", [(1,)]),
    ("Yes [1, 3].", [(1, 3)]),
    ("Yes [1,3]", [(1, 3)]),
    ("Yes [2-4].", [(2, 3, 4)]),
    ("Yes [2–4].", [(2, 3, 4)]),
    ("Yes [2 — 4].", [(2, 3, 4)]),
    ("Yes [4-2].", [(2, 3, 4)]),
    ("Yes [1, 3-4, 3].", [(1, 3, 4)]),
    ("Yes [ 2 ].", [(2,)]),
    ("Discard half.[3][2] Then dig.", [(3,), (2,)]),
    ("Cards [0] and [12].", [(0,), (12,)]),
])
def test_marker_forms(text: str, expected: list[tuple[int, ...]]) -> None:
    assert numbers(text) == expected


@pytest.mark.parametrize("text", [
    "See [1](https://example.com/rules).",
    "See ![1](figure.png).",
    "See [the rules][1].",
    "[1]: https://example.com/rules",
    "Versions [1.5] and [a] and [1a] and [].",
])
def test_markdown_links_and_non_numbers_are_not_markers(text: str) -> None:
    assert numbers(text) == []


def test_marker_spans_and_text() -> None:
    text = "Move three spaces [2, 4]. Lanterns [1]."
    ms = parse_markers(text)
    assert [(m.text, text[m.start:m.end]) for m in ms] == [("[2, 4]", "[2, 4]"), ("[1]", "[1]")]
    assert [m.start for m in ms] == [text.index("[2"), text.index("[1]")]


def test_a_colon_after_a_marker_inside_a_line_is_still_a_marker() -> None:
    assert numbers("As the rulebook says [1]: move three.") == [(1,)]


def test_wide_ranges_keep_their_endpoints_only() -> None:
    assert numbers(f"[1-{MAX_RANGE}]") == [tuple(range(1, MAX_RANGE + 1))]
    assert numbers("[1-1000]") == [(1, 1000)]


PASSAGES = [CitedPassage(1, "rb#p0002.c000", "rb", 2), CitedPassage(2, "er#p0001.c000", "er", 1),
            CitedPassage(3, "rb#p0002.c001", "rb", 2), CitedPassage(4, "faq#p0001.c000", "faq", 1)]


def test_resolve_maps_numbers_to_passages_and_flags_dangling() -> None:
    cits = resolve(parse_markers("A [1, 2]. B [7]. C [0]."), PASSAGES, {"rb#2", "rb#3"})
    got = [(c.n, c.chunk_id, c.page_id, c.dangling, c.relevant) for c in cits]
    assert got == [(1, "rb#p0002.c000", "rb#2", False, True),
                   (2, "er#p0001.c000", "er#1", False, False),
                   (7, None, None, True, False),
                   (0, None, None, True, False)]
    assert [c.marker for c in cits] == ["[1, 2]", "[1, 2]", "[7]", "[0]"]


def test_citation_stats_formulas() -> None:
    reqs = [["rb#2"], ["er#1", "er#2"], ["rb#9"]]
    text = "A [1][3]. B [2]. C [4]. D [9] [9] [8]."
    cits = resolve(parse_markers(text), PASSAGES, {p for r in reqs for p in r})
    s = citation_stats(cits, reqs)
    # cited pages: rb#2 (twice, via [1] and [3]), er#1, faq#1 -> 3 distinct, 2 relevant
    assert s.cited_pages == frozenset({"rb#2", "er#1", "faq#1"})
    assert s.precision == 2 / 3
    assert s.recall == 2 / 3  # rb#2 and er#1 requirements met, rb#9 not
    assert s.dangling == 2  # numbers 8 and 9
    assert s.resolved == 4


def test_citation_stats_defaults() -> None:
    none = citation_stats((), [["rb#2"]])
    assert (none.precision, none.recall, none.dangling, none.resolved) == (0.0, 0.0, 0, 0)
    dangling_only = citation_stats(resolve(parse_markers("[5]"), PASSAGES, set()), [["rb#2"]])
    assert (dangling_only.precision, dangling_only.dangling) == (0.0, 1)
    unanswerable = citation_stats(resolve(parse_markers("[1]"), PASSAGES, set()), [])
    assert (unanswerable.precision, unanswerable.recall) == (0.0, 0.0)
