"""The ``embedding`` page aligner: units, mutual matches, where answering sentences are, and the
sample gold set carried onto its German second edition (real model: slow) — at least 80% of the
rulebook's labels to their true pages, none wrong, the rest flagged with the true page among
their candidates (tests/fixtures/migrate/brackwater-de2-truth.toml)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import yaml

from rulegauge.embedding.page_align import (
    MARGIN,
    EmbeddingAligner,
    SentenceLocator,
    Unit,
    margins,
    mutual_matches,
    units,
)
from tests.helpers.common import REPO
from tests.helpers.edition_truth import edition_truth

GOLD = REPO / "goldsets" / "sample.yaml"
DE2 = REPO / "goldsets" / "sample" / "brackwater-rulebook-de2.txt"
TRUTH, true_page = edition_truth("brackwater-de2")


def test_units_join_short_fragments_to_the_next_sentence() -> None:
    got = units(["Row\nMove your pawn across 2 bridges. Pay 1.\n1.\nTide phase comes first", "Short one"])
    assert [u.text for u in got] == ["Row Move your pawn across 2 bridges.",
                                     "Pay 1. 1. Tide phase comes first", "Short one"]
    assert [u.page for u in got] == [1, 1, 2]
    assert [u.text for u in units(["A long enough sentence here. Tail."])] == ["A long enough sentence here. Tail."]


def test_mutual_matches_need_both_directions_and_the_threshold() -> None:
    sim = np.array([[0.95, 0.20, 0.10],
                    [0.90, 0.30, 0.88],   # its best (0) prefers row 0: no match
                    [0.10, 0.86, 0.20]])  # mutual, but below the threshold
    assert mutual_matches(sim, 0.87) == {0: 0}
    assert mutual_matches(sim, 0.85) == {0: 0, 2: 1}
    assert mutual_matches(np.zeros((0, 3)), MARGIN) == {}


def test_the_margin_discounts_a_sentence_that_resembles_many() -> None:
    """Cosine / mean of the two neighbourhoods (NEIGHBOURS = 4 nearest): a close pair among
    close look-alikes (a rule repeated on every page) scores near 1, a distinct pair well above."""
    sim = np.full((5, 5), 0.2)
    np.fill_diagonal(sim, 0.9)
    sim[1, 2:] = sim[2:, 1] = 0.88  # unit 1 resembles everything
    got = margins(sim)
    assert got[0, 0] == pytest.approx(0.9 / ((0.9 + 3 * 0.2) / 4))
    assert got[1, 1] < MARGIN < got[0, 0]
    assert mutual_matches(got, MARGIN) == {0: 0, 2: 2, 3: 3, 4: 4}  # 1 alone is left out


def test_a_sentence_is_where_its_match_is_else_where_its_page_went_whole() -> None:
    old = [Unit(1, "Alpha rule is here."), Unit(1, "Beta rule is here."), Unit(2, "Gamma rule is here.")]
    new = [Unit(1, "a"), Unit(2, "b"), Unit(3, "c")]
    sim = np.eye(3, dtype=np.float32)
    loc = SentenceLocator(EmbeddingAligner(), old, (new, np.eye(3, dtype=np.float32)), sim,
                          matches={1: 2}, whole={1: 1})
    assert loc.share("Beta rule is here.", 3) == 1 and loc.share("Beta rule is here.", 1) == 0  # matched
    assert loc.share("Alpha rule", 1) == Fraction(1)  # unmatched, its page went whole to 1
    assert loc.share("Gamma rule is here.", 2) == 0  # unmatched on a page not aligned whole: nowhere


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    from rulegauge.goldset.migrate import migrate

    return migrate(GOLD, {"bw-rules": DE2}, tmp_path_factory.mktemp("de2") / "sample-de2.yaml")


@pytest.mark.slow
def test_the_sample_is_carried_onto_its_german_edition(migrated) -> None:
    doc = migrated.documents[0]
    assert "it appears to be in another language" in doc.note and "multilingual sentence embeddings" in doc.note
    kinds = {p.old_page: p.kind for p in doc.alignment.pages}
    assert kinds[10] == "moved" and kinds[5] == kinds[6] == "split" and doc.alignment.inserted == (2,)
    for p in doc.alignment.pages:  # every page aligned whole went to its true page
        if p.kind in ("kept", "moved"):
            assert p.whole == (TRUTH["pages"][str(p.old_page)],)
    rules = [m for m in migrated.labels if m.old.startswith("bw-rules#")]
    wrong = [(m.question_id, m.old, m.new) for m in rules if m.carried and m.new != (true_page(m.question_id, m.old),)]
    assert wrong == []
    carried = [m for m in rules if m.carried]
    assert len(carried) >= 0.8 * len(rules) and len(rules) == 57
    flagged = [m for m in rules if not m.carried]
    assert flagged and all(true_page(m.question_id, m.old) in m.candidates for m in flagged)
    assert all(m.old in ("bw-rules#5", "bw-rules#6") for m in flagged)  # the two pages split in two
    prov = yaml.safe_load(migrated.path.read_text(encoding="utf-8"))["provenance"]["documents"][0]
    assert prov["aligned_by"]["method"] == "embedding-sentences" and prov["aligned_by"]["margin"] == MARGIN


def restructured(pages: list[str]) -> tuple[list[str], dict[int, set[int]]]:
    """Blocks of 5 pages reversed, pages 3+4 and 11+12 merged, page 8 split in halves (as
    benchmarks/bench_align.py): the new pages and, per old page, the new pages holding it."""
    order = [i for s in range(0, len(pages), 5) for i in reversed(range(s, min(s + 5, len(pages))))]
    new: list[str] = []
    where: dict[int, set[int]] = {}
    for i in order:
        page = i + 1
        if page in (4, 12):
            continue
        if page in (3, 11):
            new.append(pages[i] + "\n" + pages[i + 1])
            where[page] = where[page + 1] = {len(new)}
        elif page == 8:
            lines = pages[i].splitlines()
            new.extend(["\n".join(lines[:len(lines) // 2]), "\n".join(lines[len(lines) // 2:])])
            where[page] = {len(new) - 1, len(new)}
        else:
            new.append(pages[i])
            where[page] = {len(new)}
    return new, where


@pytest.mark.slow
@pytest.mark.shared
def test_real_rules_in_another_language_are_never_aligned_to_a_wrong_page() -> None:
    """AisleRiot's rules (../shared), English against the German translation restructured:
    no old page aligned whole to a page that does not hold it; most aligned, the rest flagged."""
    from tests.helpers.common import SHARED

    folder = SHARED / "corpora" / "aisleriot"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    english = (folder / "aisleriot-en.txt").read_text(encoding="utf-8").split("\f")[:30]
    german, where = restructured((folder / "aisleriot-de.txt").read_text(encoding="utf-8").split("\f")[:30])
    got = EmbeddingAligner().realign(english, german).alignment
    whole = [(p.old_page, p.whole[0]) for p in got.pages if p.kind in ("kept", "moved")]
    assert [(o, n) for o, n in whole if n not in where[o]] == []
    assert len(whole) >= 20

