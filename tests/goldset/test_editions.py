"""Editions that share no text: said so (another language?), aligned by an aligner reached by
name, and every label flagged, never guessed, when none can run. No model here: the real
aligner on the sample's German edition is tests/embedding/test_page_align.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from fractions import Fraction

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.goldset import align as al
from rulegauge.goldset.editions import OTHER_LANGUAGE, realign, word_overlap
from rulegauge.goldset.migrate import migrate
from rulegauge.goldset.relabel import DocumentMigration
from tests.helpers.common import REPO

SAMPLE = REPO / "goldsets" / "sample"
OLD = (SAMPLE / "brackwater-rulebook.txt").read_text(encoding="utf-8").split("\f")
EN2 = (SAMPLE / "brackwater-rulebook-en2.txt").read_text(encoding="utf-8").split("\f")
DE2 = (SAMPLE / "brackwater-rulebook-de2.txt").read_text(encoding="utf-8").split("\f")


def migration(new: Sequence[str]) -> DocumentMigration:
    return DocumentMigration("bw-rules", "old.txt", "new-de.txt", "a", "b", tuple(OLD), tuple(new),
                             al.align(OLD, new))


class Planted:
    """A page aligner that knows the answer: old page i is new page i (or raises)."""

    name = "t-planted"
    description = "a planted aligner"

    def __init__(self, error: bool = False) -> None:
        self.error = error

    def realign(self, old: Sequence[str], new: Sequence[str]) -> al.Realigned:
        if self.error:
            raise RulegaugeError("aligning pages across languages needs the [dense] extra")
        found = [(((i, Fraction(1)),), Fraction(1)) for i in range(1, len(old) + 1)]
        return al.Realigned(al.assemble(found, len(new)), al_locator(), {"method": "planted"})


def al_locator() -> al.Locate:
    class Nowhere:
        def share(self, sentence: str, page: int) -> Fraction:
            return Fraction(0)
    return Nowhere()


@pytest.fixture(scope="module", autouse=True)
def planted() -> None:
    for name, obj in (("t-planted", Planted()), ("t-broken", Planted(error=True))):
        if name not in al.ALIGNERS.registered():
            al.ALIGNERS.add(name, obj)


def test_word_overlap_tells_another_language_from_another_printing() -> None:
    assert word_overlap(OLD, DE2) < OTHER_LANGUAGE  # numbers and a few names
    assert word_overlap(OLD, EN2) > Fraction(9, 10)
    assert word_overlap(OLD, []) == 0


def test_shingles_find_no_text_in_the_translation_only() -> None:
    assert al.shares_no_text(al.align(OLD, DE2))
    assert not al.shares_no_text(al.align(OLD, EN2))
    assert not al.shares_no_text(al.align([], DE2))


def test_an_edition_that_shares_text_is_left_to_the_shingles() -> None:
    dm = migration(EN2)
    assert realign(dm, "t-planted") is dm


def test_an_edition_that_shares_none_is_aligned_by_name_and_the_note_says_why() -> None:
    got = realign(migration(DE2), "t-planted")
    assert [p.kind for p in got.alignment.pages] == ["kept"] * 12
    assert got.note.startswith("bw-rules: no page of new-de.txt shares a run of 5 words with the old edition (")
    assert "it appears to be in another language); pages aligned by a planted aligner" in got.note
    assert got.aligned_by["method"] == "planted" and got.aligned_by["aligner"] == "t-planted"


def test_an_aligner_that_cannot_run_leaves_every_page_removed_and_says_so() -> None:
    got = realign(migration(DE2), "t-broken")
    assert all(p.kind == "removed" for p in got.alignment.pages)
    assert "another language" in got.note and "needs the [dense] extra" in got.note
    assert got.note.endswith("every label is flagged")


def test_migrate_without_an_aligner_flags_every_label_and_writes_why(tmp_path, monkeypatch) -> None:
    """The issue's run: a translated edition, nothing aligned; now the provenance says why."""
    import yaml

    from rulegauge.goldset import editions

    monkeypatch.setattr(editions, "ALIGNER", "t-broken")
    m = migrate(REPO / "goldsets" / "sample.yaml", {"bw-rules": SAMPLE / "brackwater-rulebook-de2.txt"},
                tmp_path / "de2.yaml")
    moved = [x for x in m.labels if x.old.startswith("bw-rules")]
    assert moved and all(not x.carried and x.flag == "page removed in the new edition" for x in moved)
    doc = yaml.safe_load((tmp_path / "de2.yaml").read_text(encoding="utf-8"))["provenance"]["documents"][0]
    assert "another language" in doc["note"] and doc["aligned_by"]["aligner"] == "t-broken"


def test_the_embedding_aligner_is_declared_and_not_imported_by_the_kernel() -> None:
    code = ("import sys; from rulegauge.goldset import align, editions, migrate; "
            "assert 'embedding' in align.ALIGNERS.names(); "
            "assert not [m for m in sys.modules if m.startswith('rulegauge.embedding')], 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)
