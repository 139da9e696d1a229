"""goldsets/sample-twelve.yaml is a verbatim subset of the embedded sample (same documents,
same questions, pages and facts), so figures measured on it are figures on the sample's
questions."""

from __future__ import annotations

from rulegauge.goldset.parse import load_goldset
from tests.helpers.common import REPO


def test_sample_twelve_is_a_verbatim_subset_of_the_sample() -> None:
    sample = load_goldset(REPO / "goldsets" / "sample.yaml")
    twelve = load_goldset(REPO / "goldsets" / "sample-twelve.yaml")
    assert twelve.documents == sample.documents
    by_id = {q.question_id: q for q in sample.questions}
    assert len(twelve.questions) == 12
    for q in twelve.questions:
        assert q == by_id[q.question_id], q.question_id
    # the four questions production's sample ruling pages answer are all in it
    assert {"bw-13", "bw-14", "bw-30", "bw-52"} <= {q.question_id for q in twelve.questions}
    assert sum(not q.answerable for q in twelve.questions) == 2
