"""Glyph debris named as what it is: PDF glyph ids/names, or characters any text can hold."""

from rulegauge.corpus.glyphs import glyph_summary, glyph_tokens
from rulegauge.corpus.page_checks import PAGE_CHECKS, IngestThresholds
from rulegauge.corpus.records import Page


def check(text: str) -> str | None:
    return PAGE_CHECKS.get("glyph_debris")(Page("d", 1, text), IngestThresholds(), 0.0)


def test_replacement_characters_in_plain_text_are_not_called_pdf_glyphs():
    msg = check("The caf\ufffd rules: \ufffd\ufffd tokens per turn.")
    assert msg == "3 U+FFFD replacement characters (bytes a decoder or extractor could not map), e.g. U+FFFD"
    assert "PDF" not in msg


def test_pdf_glyph_names_are_counted_together_and_kinds_most_frequent_first():
    msg = check("(cid:12)(cid:13) /g12 text \ufffd \ue001")
    assert msg == ("3 PDF glyph ids or names (a font without a ToUnicode map), e.g. (cid:12); "
                   "1 U+FFFD replacement characters (bytes a decoder or extractor could not map), e.g. U+FFFD; "
                   "1 private-use code points (symbol-font glyphs or custom characters), e.g. U+E001")
    # the count is still every token, as the answer fence counts them
    assert len(glyph_tokens("(cid:12)(cid:13) /g12 text \ufffd \ue001")) == 5


def test_clean_text_has_no_debris():
    assert check("Each player takes five lantern tokens.") is None
    assert glyph_summary("") is None
