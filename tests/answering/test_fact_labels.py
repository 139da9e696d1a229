"""Hand labels for reference facts: loading with file:line errors, agreement as defined
(accuracy, Cohen's kappa, precision, recall), and the sample's figures in the docs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from rulegauge.answering.fact_labels import FactLabel, agreement, load_labels, matcher_verdict
from rulegauge.core.errors import ValidationError
from rulegauge.goldset.parse import load_goldset
from tests.helpers.common import REPO

LABELS = REPO / "goldsets" / "sample-fact-labels.yaml"


@pytest.fixture(scope="module")
def sample():  # type: ignore[no-untyped-def]
    return load_goldset(REPO / "goldsets" / "sample.yaml", check_pages=False)


def _lab(stated: bool, kind: str = "k") -> FactLabel:
    return FactLabel("q", 0, stated, kind, "a", 1)


def test_agreement_formulas() -> None:
    labels = [_lab(True), _lab(True), _lab(False), _lab(False, "n")]
    said = iter([True, False, False, True])
    a = agreement(labels, lambda _lab: next(said))
    # 2 of 4 agree; p_o = 1/2, p_e = (2/4)(2/4) + (2/4)(2/4) = 1/2 -> kappa 0
    assert a.accuracy == 2 / 4 and a.kappa == pytest.approx(0.0)
    assert a.precision == 1 / 2 and a.recall == 1 / 2
    assert a.by_kind == {"k": (2, 3), "n": (0, 1)} and len(a.disagreements) == 2


def test_no_verdict_is_counted_apart_never_as_not_stated() -> None:
    said = iter([True, None, False])
    a = agreement([_lab(True), _lab(False), _lab(False)], lambda _lab: next(said))
    assert a.items == 3 and a.no_verdict == 1 and a.accuracy == 1.0
    assert [v for _, v in a.disagreements] == [None]


def test_constant_verdicts_have_no_kappa() -> None:
    a = agreement([_lab(True), _lab(False)], lambda _lab: True)
    assert math.isnan(a.kappa) and a.accuracy == 1 / 2


def test_sample_labels_cover_every_trap(sample) -> None:  # type: ignore[no-untyped-def]
    labels = load_labels(LABELS, sample)
    assert len(labels) >= 60
    kinds = {lab.kind for lab in labels}
    assert {"stated", "negation", "near-miss", "short-words", "order", "language"} <= kinds
    assert sum(lab.kind == "negation" for lab in labels) >= 10


def test_matcher_agreement_on_the_sample_is_the_documented_one(sample) -> None:  # type: ignore[no-untyped-def]
    a = agreement(load_labels(LABELS, sample), matcher_verdict(sample))
    assert a.accuracy >= 0.95 and a.kappa >= 0.9
    doc = (REPO / "docs" / "answering.md").read_text(encoding="utf-8")
    m = re.search(r"matcher: (\d+) labelled pairs, accuracy ([\d.]+), Cohen's kappa ([\d.]+)", doc)
    assert m, "docs/answering.md quotes `rulegauge facts agreement` on the sample"
    assert (int(m[1]), m[2], m[3]) == (a.items, f"{a.accuracy:.3f}", f"{a.kappa:.3f}")


def test_bad_labels_name_file_and_line(tmp_path: Path, sample) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "l.yaml"
    p.write_text("""labels: x
items:
  - {q: bw-13, fact: 0, stated: true, kind: stated, answer: "ok"}
  - {q: nope, fact: 0, stated: true, kind: stated, answer: "a"}
  - {q: bw-13, fact: 9, stated: true, kind: stated, answer: "a"}
  - {q: bw-13, fact: 0, stated: "yes", kind: stated, answer: "a", extra: 1}
  - just text
""")
    with pytest.raises(ValidationError) as e:
        load_labels(p, sample)
    text = str(e.value)
    assert f"{p}:4: question 'nope' is not in" in text
    assert f"{p}:5: question bw-13 has 1 fact(s); fact 9 does not exist" in text
    assert f"{p}:6: stated: must be bool" in text and f"{p}:6: unknown field(s) extra" in text
    assert f"{p}:7: an item must be a mapping" in text
    assert ":3:" not in text
