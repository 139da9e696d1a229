"""outline.locate: one compiled pattern per title gives what the two-pattern search gave."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from rulegauge.corpus.outline import _variants, locate
from rulegauge.corpus.title_match import title_pattern


def locate_reference(text: str, titles: Sequence[str]) -> list[int | None]:
    """The implementation before 2026-11-30 (two regexes per variant), kept as the oracle."""
    out: list[int | None] = []
    cursor = 0
    for title in titles:
        hit: int | None = None
        for variant in _variants(title) if title.split() else []:
            pat = title_pattern(variant)
            at_line = re.compile(r"(?m)^[^\S\n]*(" + pat + ")", re.IGNORECASE)
            anywhere = re.compile(pat, re.IGNORECASE)
            for rx, frm, group in ((at_line, cursor, 1), (at_line, 0, 1),
                                   (anywhere, cursor, 0), (anywhere, 0, 0)):
                m = rx.search(text, frm)
                if m is not None:
                    hit = m.start(group)
                    break
            if hit is not None:
                break
        out.append(hit)
        if hit is not None:
            cursor = max(cursor, hit + 1)
    return out


WORDS = ["age", "Age", "AGE", "half-elf", "half\u2013elf", "don't", "don\u2019t", "the", "bard",
         "Table:", "x", "xx", "a", "A", "\u017fet", "set", "ki", "K\u212ai"]
SEPS = [" ", "  ", "\n", "\n  ", "\n\t", " \n", "\n\n", "-", ". "]


def test_locate_matches_reference_on_seeded_texts() -> None:
    rng = np.random.default_rng(12)
    for _ in range(600):
        n = int(rng.integers(0, 30))
        text = "".join(str(rng.choice(WORDS)) + str(rng.choice(SEPS)) for _ in range(n))
        if rng.random() < 0.3:
            text = "  " + text
        titles = []
        for _ in range(int(rng.integers(0, 5))):
            k = int(rng.integers(0, 4))
            titles.append(" ".join(str(rng.choice(WORDS)) for _ in range(k)))
        assert locate(text, titles) == locate_reference(text, titles), (text, titles)


def test_locate_edge_cases_match_reference() -> None:
    cases = [
        ("Age\nage\n  AGE x", ["age", "age", "age", "age"]),
        ("a a a\n a a", ["a a", "a a", "a a"]),
        ("Table: The Bard\nThe Bard", ["Table: The Bard", "Other: The Bard", "The Bard"]),
        ("", ["x"]), ("x", ["", "   ", "x"]), ("\n\n  \n", ["x"]),
        ("pre half-elf\nhalf\u2014elf", ["half-elf", "half-elf"]),
        ("  don\u2019t\ndon't", ["don't", "don't", "don't"]),
    ]
    for text, titles in cases:
        assert locate(text, titles) == locate_reference(text, titles), (text, titles)


ASCII_WORDS = ["age", "Age", "AGE", "half-elf", "half--elf", "don't", "don`t", "the", "bard", "Table:",
               "x", "xx", "a", "A", "ki", "set", "SET"]
ABSENT = ["zz", "half-orc", "wo'n", "Q"]


def test_locate_matches_reference_on_ascii_texts() -> None:
    """ASCII pages: titles ruled out without a pattern must be exactly those never found."""
    rng = np.random.default_rng(13)
    found = 0
    for _ in range(600):
        n = int(rng.integers(0, 25))
        text = "".join(str(rng.choice(ASCII_WORDS)) + str(rng.choice(SEPS)) for _ in range(n))
        assert text.isascii()
        titles = [" ".join(str(rng.choice(ASCII_WORDS + ABSENT)) for _ in range(int(rng.integers(1, 4))))
                  for _ in range(int(rng.integers(0, 5)))]
        got = locate(text, titles)
        assert got == locate_reference(text, titles), (text, titles)
        found += sum(x is not None for x in got)
    assert found > 100
