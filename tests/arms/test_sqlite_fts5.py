"""The sqlite-fts5 arm: FTS5's bm25() against its formula, ties, query quoting, bad input."""

from __future__ import annotations

import math
import re

import pytest

from rulegauge.arms import ArmContext
from rulegauge.arms.sqlite_fts5 import NO_MATCH, NO_TOKENS, SqliteFts5Arm, fts5_query
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus
from tests.helpers.common import q


def fts5_bm25(texts: dict[str, str], query: list[str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """FTS5's bm25() (ext/fts5/fts5_aux.c), negated: idf floored at 1e-6, lengths in tokens."""
    toks = {cid: re.findall(r"\w+", t.lower()) for cid, t in texts.items()}
    n = len(toks)
    avgdl = sum(len(t) for t in toks.values()) / n
    out = {}
    for cid, t in toks.items():
        s = 0.0
        for term in query:
            df = sum(term in d for d in toks.values())
            idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            tf = t.count(term)
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avgdl))
        if s > 0:
            out[cid] = s
    return out


def test_scores_follow_the_fts5_bm25_formula(tiny_corpus, tmp_path):
    arm = SqliteFts5Arm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [res] = arm.search([q("q1", "lit lantern points?")], depth=10)
    expect = fts5_bm25({c.chunk_id: c.text for c in tiny_corpus.chunks}, ["lit", "lantern", "points"])
    assert {h.chunk_id: h.score for h in res.hits} == pytest.approx(expect, rel=1e-9)
    assert [h.rank for h in res.hits] == list(range(1, len(expect) + 1))
    assert arm.describe()["version"]


def test_ties_break_by_chunk_id_and_depth_cuts(tmp_path):
    docs = [Document("d", "rulebook", "G", "e", "en", "D")]
    text = "same words here"
    pages = [Page("d", p, text) for p in (3, 1, 2)]
    chunks = [Chunk(chunk_key("d", p, 0), "d", p, ("H",), text, 0, len(text)) for p in (1, 2, 3)]
    arm = SqliteFts5Arm()
    arm.prepare(make_corpus(docs, pages, chunks), ArmContext(tmp_path))
    [res] = arm.search([q("q", "words")], depth=2)
    assert [h.chunk_id for h in res.hits] == [chunk_key("d", 1, 0), chunk_key("d", 2, 0)]
    assert res.hits[0].score == res.hits[1].score


def test_question_text_is_never_fts5_syntax(tiny_corpus, tmp_path):
    assert fts5_query('boat AND "four" (NEAR) -x*') == '"boat" OR "AND" OR "four" OR "NEAR" OR "x"'
    assert fts5_query("boat boat spaces", "all") == '"boat" AND "spaces"'
    arm = SqliteFts5Arm(match="all")
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    got = arm.search([q("a", "boat NOT spaces"), q("b", "?!"), q("c", "zebra boat")], depth=5)
    assert got[0].hits == ()  # "NOT" is a word to find, not an operator: no chunk has it
    assert (got[1].hits, got[1].empty_reason) == ((), NO_TOKENS)
    assert (got[2].hits, got[2].empty_reason) == ((), NO_MATCH)


def test_porter_tokenizer_stems(tiny_corpus, tmp_path):
    plain, porter = SqliteFts5Arm(), SqliteFts5Arm(tokenize="porter unicode61")
    for arm in (plain, porter):
        arm.prepare(tiny_corpus, ArmContext(tmp_path))
    assert plain.search([q("q", "scoring lanterns")], 10)[0].hits[0].chunk_id == "rb#p0003.c000"
    assert not plain.search([q("q", "scored")], 10)[0].hits
    assert porter.search([q("q", "scored")], 10)[0].hits


@pytest.mark.parametrize("kw", [{"match": "some"}, {"tokenize": "nosuch"}, {"tokenize": "x'); DROP"}])
def test_bad_parameters_are_config_errors(kw):
    with pytest.raises(ConfigError, match="sqlite-fts5"):
        SqliteFts5Arm(**kw)
