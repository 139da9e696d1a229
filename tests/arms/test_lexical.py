"""bm25 and boost arms on a tiny hand-made corpus."""

import math

import pytest

from rulegauge.arms import ARMS, ArmContext, load_builtin_arms
from rulegauge.arms.bm25 import BM25Arm
from rulegauge.arms.boost import BoostArm
from rulegauge.core.errors import ConfigError
from tests.helpers.common import q

load_builtin_arms()


def test_arms_registered():
    assert {"bm25", "boost"} <= set(ARMS.names())


def test_bm25_finds_matching_chunk_and_floors_common_terms(tiny_corpus, tmp_path):
    arm = BM25Arm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [res] = arm.search([q("q1", "How many points does a lit lantern score?")], depth=10)
    assert res.hits[0].chunk_id in {"rb#p0003.c000", "er#p0001.c000"}
    assert [h.rank for h in res.hits] == list(range(1, len(res.hits) + 1))
    assert all(h.score > 0 for h in res.hits)
    # "lantern" is in 3 of 5 chunks: rank-bm25 would give it a negative idf; we floor it
    n, df = 5, 3
    assert math.log((n - df + 0.5) / (df + 0.5)) < 0
    assert arm.idf("lantern") > 0
    assert arm.describe()["floored_terms"] >= 1


def test_bm25_ties_break_by_chunk_id(tiny_corpus, tmp_path):
    arm = BM25Arm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [res] = arm.search([q("q", "boat")], depth=10)
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    for a, b in zip(res.hits, res.hits[1:], strict=False):
        if a.score == b.score:
            assert a.chunk_id < b.chunk_id


def test_bm25_rejects_bad_params():
    with pytest.raises(ConfigError):
        BM25Arm(idf_floor="nope")


def test_boost_carries_rulebook_and_matched_errata_only(tiny_corpus, tmp_path):
    arm = BoostArm(match_threshold=1.0)
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    matched, plain = arm.search([q("a", "lit lantern score points correction"),
                                 q("b", "harbour board setup")], depth=10)
    ids = [h.chunk_id for h in matched.hits]
    assert ids[0] == "er#p0001.c000"  # matched errata first
    assert set(ids) == {"er#p0001.c000", "rb#p0001.c000", "rb#p0002.c000", "rb#p0003.c000"}
    assert "faq#p0001.c000" not in ids
    assert {h.chunk_id for h in plain.hits} == {"rb#p0001.c000", "rb#p0002.c000", "rb#p0003.c000"}
    assert plain.hits[0].chunk_id == "rb#p0001.c000"
