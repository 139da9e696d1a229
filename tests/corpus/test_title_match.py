"""title_match.PageView.match_starts: the str.find path gives the regular expression's offsets."""

from __future__ import annotations

import re

import numpy as np

from rulegauge.corpus.title_match import PageView, _fast_title, title_pattern


def regex_starts(text: str, title: str) -> list[int]:
    """Every start of the title's pattern, overlapping ones included (the oracle)."""
    rx = re.compile(title_pattern(title), re.IGNORECASE)
    out, m = [], rx.search(text)
    while m is not None:
        out.append(m.start())
        m = rx.search(text, m.start() + 1)
    return out


WORDS = ["age", "Age", "AGE", "half-elf", "half--elf", "half\u2013elf", "don't", "don`t", "don\u2019t",
         "the", "bard", "Table:", "x", "xx", "a", "A", "_a", "a_", "a1", "(opt)", "-x", "x-", "'t", "t'",
         "ki", "set", "SET"]
SEPS = [" ", "  ", "\n", "\n  ", "\t", " \n", "\n\n", "-", "--", ". ", "\x1c", "\x0b", "'", "`", "_", ""]


def test_fast_path_equals_regex_on_seeded_ascii_pages() -> None:
    rng = np.random.default_rng(2026)
    fast_used = found = 0
    for _ in range(3000):
        text = "".join(str(rng.choice(WORDS)) + str(rng.choice(SEPS)) for _ in range(int(rng.integers(0, 20))))
        view = PageView(text)
        for _ in range(4):
            title = " ".join(str(rng.choice(WORDS)) for _ in range(int(rng.integers(1, 4))))
            want = regex_starts(text, title)
            assert view.match_starts(title) == want, (text, title)
            fast_used += text.isascii() and _fast_title(title) is not None
            found += bool(want)
    assert fast_used > 4000 and found > 1000  # both paths and real matches were exercised


def test_titles_the_fast_path_leaves_to_the_regex() -> None:
    assert _fast_title("Half-Elf Traits") == "half-elf traits"
    assert _fast_title("Don\u2019t Panic") == "don't panic"
    for title in ("-x", "x-", "a--b", "caf\u00e9", "K\u212ai"):
        assert _fast_title(title) is None, title


def test_offsets_map_back_through_collapsed_runs() -> None:
    text = "Intro  \n\n   Half --- Elf\tTRAITS and   half-elf   traits"
    view = PageView(text)
    assert view.match_starts("half-elf traits") == [text.index("half-elf")]
    assert view.match_starts("elf traits") == regex_starts(text, "elf traits") == [
        text.index("Elf\t"), text.index("elf   traits")]
    assert view.match_starts("half elf") == []  # a dash run is not whitespace
    assert PageView("caf\u00e9 bar").match_starts("bar") == [5]  # non-ASCII page: the regex
