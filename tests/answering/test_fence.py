"""The answer fence: letter density, glyph-index tokens, blobs; real ruling pages."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pytest

from rulegauge.answering.fence import (
    DEFAULT_PARAMS,
    FENCE_VERSION,
    GLYPH_PATTERNS,
    SERVICE_PARAMS,
    FenceParams,
    check,
)
from tests.helpers.common import SHARED

_REPORTED = re.compile(r"answer fence: (passed|failed) \S+ letter density ([0-9.]+) of (\d+) "
                       r"non-space chars \(floor ([0-9.]+)\); "
                       r"(\d+) glyph-index tokens \(max (\d+)\)")


def test_letter_density_is_letters_over_nonspace_markers_and_markdown_included() -> None:
    r = check("**Yes**, two [1].")
    # letters: Y e s t w o = 6; non-space: ** Yes ** , two [1] . = 2+3+2+1+3+3+1 = 15
    assert (r.letters, r.nonspace_chars) == (6, 15)
    assert r.letter_density == 6 / 15
    assert not r.passed and "below floor 0.45" in r.reason


def test_floor_is_inclusive() -> None:
    # 9 letters, 11 non-space characters -> 9/11 >= 0.45; 9 letters, 20 non-space -> 0.45 exactly
    assert check("abcdefghi 12").passed
    exact = check("abcdefghi " + "1" * 11)
    assert exact.letter_density == 9 / 20 and exact.passed


@pytest.mark.parametrize("text", [
    "Да, каждый игрок берёт пять жетонов фонарей [1].",
    "بله، هر بازیکن پنج ژتون فانوس برمی‌دارد [۱].",
    "## Setup\n\n1. **Shuffle** the deck.[1]\n* Deal 4 cards to each player.[2]\n\n"
    "> Note: see [3].",
    "Ja, jeder Spieler nimmt fünf Laternenmarker [1][2].",
])
def test_other_scripts_and_markdown_pass(text: str) -> None:
    r = check(text)
    assert r.passed, r.reason
    assert r.reason == "ok" and r.glyph_tokens == 0


def test_glyph_soup_fails() -> None:
    r = check("(cid:71)(cid:72)(cid:79)(cid:79)(cid:82) (cid:87)(cid:75)(cid:72)")
    assert not r.passed
    assert r.glyph_tokens == 8 and dict(r.glyph_counts) == {"cid": 8}
    assert "8 glyph-index tokens (max 2)" in r.reason


def test_two_glyph_tokens_pass_three_fail() -> None:
    base = "The marketplace holds five cards face up for trading "
    assert check(base + "/g12 glyph7").passed
    r = check(base + "/g12 glyph7 /uni00A0")
    assert not r.passed and dict(r.glyph_counts) == {"slash_g": 1, "glyph": 1, "uni": 1}


def test_every_pattern_counts_what_it_documents() -> None:
    text = "a (cid:1) /g2 glyph3 /uni0041 \x07 \ufffd \ue001 b"
    r = check(text, FenceParams(max_glyph_tokens=100))
    assert dict(r.glyph_counts) == {p.name: 1 for p in GLYPH_PATTERNS}
    assert r.glyph_tokens == len(GLYPH_PATTERNS)


def test_url_paths_newlines_and_tabs_are_not_glyph_tokens() -> None:
    r = check("See https://example.com/g12 and http://x.org/uni0041.\n\tIndented line.")
    assert r.glyph_tokens == 0 and r.passed


def test_base64_blob_fails_though_its_letter_density_passes() -> None:
    blob = base64.b64encode(np.random.default_rng(7).bytes(120)).decode()
    r = check(f"Here is the answer: {blob}")
    assert r.letter_density >= 0.45
    assert not r.passed and r.blobs == 1 and "base64 blob" in r.reason
    # the service's own two rules would let it through
    assert check(f"Here is the answer: {blob}", SERVICE_PARAMS).passed


def test_long_words_and_lowercase_paths_are_not_blobs() -> None:
    text = ("Donaudampfschifffahrtsgesellschaftskapitaenswitwe rules. "
            "See rules/section-2024/lanterns-and-harbours-full-text.")
    assert check(text).blobs == 0


@pytest.mark.parametrize("text", ["!!!!????......----", "... --- *** ### ||| ~~~ ===",
                                  "1234 5678 90"])
def test_punctuation_and_digit_runs_fail(text: str) -> None:
    r = check(text)
    assert not r.passed and r.letter_density == 0.0


def test_empty_answer_fails_with_density_zero_by_convention() -> None:
    for text in ("", "   \n\t "):
        r = check(text)
        assert (r.passed, r.reason) == (False, "empty answer")
        assert (r.letter_density, r.nonspace_chars) == (0.0, 0)


def test_params_are_versioned_and_fingerprinted() -> None:
    assert DEFAULT_PARAMS.version == FENCE_VERSION
    assert DEFAULT_PARAMS.fingerprint() == FenceParams().fingerprint()
    assert FenceParams(min_letter_density=0.5).fingerprint() != DEFAULT_PARAMS.fingerprint()
    assert DEFAULT_PARAMS.describe()["patterns"][0]["name"] == "cid"


def _answer_text(page: str) -> str:
    """The answer of a ruling page: the lines after 'Asked with:' up to the first
    '[1] ' reference line (see docs/answering.md)."""
    lines = page.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Asked with:"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("[1] "))
    return "\n".join(lines[start + 1:end])


def _ruling_pages() -> list[Path]:
    return sorted((SHARED / "rulings").glob("*.txt")) if (SHARED / "rulings").is_dir() else []


@pytest.mark.shared
def test_ruling_pages_pass_with_the_density_they_report() -> None:
    pages = _ruling_pages()
    if not pages:
        pytest.skip(f"no ruling pages under {SHARED / 'rulings'}")
    for path in pages:
        page = path.read_text(encoding="utf-8")
        reported = _REPORTED.search(page)
        assert reported, f"{path.name}: no answer-fence line"
        verdict, density, nonspace, _, glyphs, _ = reported.groups()
        r = check(_answer_text(page))
        assert abs(r.letter_density - float(density)) <= 0.02, path.name
        assert r.nonspace_chars == int(nonspace), path.name
        assert r.glyph_tokens == int(glyphs), path.name
        assert r.passed == (verdict == "passed"), path.name


@pytest.mark.shared
def test_ruling_answer_turned_to_glyph_debris_fails() -> None:
    pages = _ruling_pages()
    if not pages:
        pytest.skip(f"no ruling pages under {SHARED / 'rulings'}")
    answer = _answer_text(pages[0].read_text(encoding="utf-8"))
    as_cids = re.sub(r"[A-Za-z]", lambda m: f"(cid:{ord(m.group(0))})", answer)
    as_glyphs = re.sub(r"[A-Za-z]+", lambda m: f"/g{len(m.group(0))}", answer)
    for debris in (as_cids, as_glyphs):
        r = check(debris)
        assert not r.passed and r.glyph_tokens > 2
