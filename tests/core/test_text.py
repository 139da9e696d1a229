"""Normalisation and tokenisation across rulegauge' six languages."""

from __future__ import annotations

import pytest

from rulegauge.core.text import (
    STEMMERS,
    Tokenizer,
    fold,
    guess_language,
    letters_ratio,
    normalise,
    tokenize,
)
from rulegauge.corpus.glyphs import glyph_tokens

ZWNJ = "\u200c"


@pytest.mark.parametrize("raw, expected", [
    ("Setup\r\nEach player\r", "Setup\nEach player"),
    ("old\rmac", "old\nmac"),
    # pypdf output of some PDFs: TAB CR SPACE NBSP between words is a separator
    ("Hit\t\r \xa0Points\t\r \xa0\nBard", "Hit Points\nBard"),
    ("a\x07bullet", "a bullet"),
    ("rule-\nbook and Harbour-\nLanterns", "rulebook and Harbour-Lanterns"),
    ("soft\u00adhyphen", "softhyphen"),
    ("  many   spaces\t\there  ", "many spaces here"),
    ("one\n\n\n\n two", "one\n\ntwo"),
    ("e\u0301t\u00e9", "\u00e9t\u00e9"),  # NFC
])
def test_normalise_rules(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


@pytest.mark.parametrize("raw", [
    "Hit\t\r \xa0Points\r\n\r\nrule-\nbook", "فانوس‌های بندر", "Ёлка\r\rEnd", "a \r b\rc",
])
def test_normalise_idempotent(raw: str) -> None:
    assert normalise(normalise(raw)) == normalise(raw)


def test_normalise_keeps_zwnj_and_cyrillic() -> None:
    fa = "رئیس‌جمهور"
    assert normalise(fa) == fa
    assert normalise("Ёж и ёлка") == "Ёж и ёлка"


@pytest.mark.parametrize("language, text, tokens", [
    ("en", "The Chancellor's veto, 3 times!", ["the", "chancellor", "s", "veto", "3", "times"]),
    ("de", "Straße und Vetorecht: Spieler", ["strasse", "und", "vetorecht", "spieler"]),
    ("fr", "L’équipe joue à l'été", ["l", "équipe", "joue", "à", "l", "été"]),
    ("es", "¿Qué pasa si el jugador?", ["qué", "pasa", "si", "el", "jugador"]),
    ("ru", "Ёлка и ЁЖ: Игроки", ["елка", "и", "еж", "игроки"]),
    ("fa", "رئیس‌جمهور ۳ كتاب يك", ["رئیس", "جمهور", "3", "کتاب", "یک"]),
])
def test_tokenize_languages(language: str, text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_persian_folding() -> None:
    # Arabic yeh / alef maksura / kaf become Persian forms; ZWNJ splits like a space
    assert tokenize("علي كتاب") == tokenize("علی کتاب")
    assert tokenize("موسى") == tokenize("موسی")
    assert tokenize("رئیس‌جمهور") == tokenize("رئیس جمهور")
    # ezafe marks and tatweel disappear; heh with yeh above folds to heh
    assert tokenize("جلسهٔ") == tokenize("جلسه") == tokenize("جلسۀ") == tokenize("جلـسه")
    assert tokenize("۱۲۳ ٤٥") == ["123", "45"]
    assert fold("ЁЛКА") == "елка"


@pytest.mark.parametrize("language, words, stems", [
    ("en", "players playing rules", ["player", "play", "rule"]),
    ("de", "Spieler Spielers Karten", ["spiel", "spiel", "kart"]),
    ("fr", "joueurs cartes jouent", ["joueur", "cart", "jouent"]),
    ("es", "jugadores cartas jugando", ["jugador", "cart", "jug"]),
    ("ru", "игроки игрок маркеров", ["игрок", "игрок", "маркер"]),
    ("fa", "کارتها بازیکنان", ["کارت", "بازیکن"]),
])
def test_stemming_per_language(language: str, words: str, stems: list[str]) -> None:
    assert Tokenizer(stem_language=language)(words) == stems


def test_persian_stemming_drops_zwnj_affixes() -> None:
    tok = Tokenizer(stem_language="fa")
    assert tok(f"کارت{ZWNJ}ها") == tok("کارتها") == ["کارت"]
    # a compound of two words keeps both parts
    assert tok(f"رئیس{ZWNJ}جمهور") == tok("رئیس جمهور")


def test_stemmers_cover_the_languages() -> None:
    assert set(STEMMERS) == {"en", "de", "fr", "es", "ru", "fa"}
    assert Tokenizer(stem_language="xx")("Players") == ["players"]  # unknown: unstemmed


def test_tokenizer_min_len_and_stopwords() -> None:
    tok = Tokenizer(min_len=3, stopwords=frozenset({"the"}))
    assert tok("The 3 big boats of the bay") == ["3", "big", "boats", "bay"]


@pytest.mark.parametrize("text, language", [
    ("Each player takes the tokens and you move your boat.", "en"),
    ("Der Spieler nimmt die Karten und legt sie auf den Stapel.", "de"),
    ("Le joueur prend les cartes et les pose sur la table.", "fr"),
    ("El jugador toma las cartas y las pone en la mesa.", "es"),
    ("Игрок берёт карты и кладёт их на стол.", "ru"),
    ("بازیکن کارت‌ها را برمی‌دارد.", "fa"),
    ("12345 !!!", "en"),
])
def test_guess_language(text: str, language: str) -> None:
    assert guess_language(text) == language


def test_glyph_tokens_and_letters_ratio() -> None:
    assert glyph_tokens("(cid:12) a /g123 glyph7 /uni00E9 ok") == [
        "(cid:12)", "/g123", "glyph7", "/uni00E9"]
    assert glyph_tokens("grid 12 and /go home") == []
    assert letters_ratio("ab 1!") == (2, 4)
