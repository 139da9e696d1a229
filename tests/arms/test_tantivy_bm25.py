"""The tantivy arm: tantivy's BM25 against its formula, analyser parameters, ties, bad input."""

from __future__ import annotations

import math
import re

import pytest

from rulegauge.arms import ArmContext
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus
from tests.helpers.common import q
from tests.helpers.engines import require_tantivy


@pytest.fixture(autouse=True)
def _tantivy() -> None:
    require_tantivy()


def lucene_bm25(texts: dict[str, str], query: list[str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """tantivy's BM25 (query/bm25.rs): idf ln(1 + (N - n + 0.5) / (n + 0.5)); short documents,
    so the one-byte field norms are exact lengths."""
    toks = {cid: re.findall(r"[^\W_]+", t.lower()) for cid, t in texts.items()}
    n = len(toks)
    avgdl = sum(len(t) for t in toks.values()) / n
    out = {}
    for cid, t in toks.items():
        s = 0.0
        for term in query:
            df = sum(term in d for d in toks.values())
            tf = t.count(term)
            if df and tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avgdl))
        if s > 0:
            out[cid] = s
    return out


def test_scores_follow_tantivys_bm25(tiny_corpus, tmp_path):
    from rulegauge.arms.tantivy_bm25 import TantivyArm

    arm = TantivyArm()
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [res] = arm.search([q("q1", "Lit lantern, points?")], depth=10)
    expect = lucene_bm25({c.chunk_id: c.text for c in tiny_corpus.chunks}, ["lit", "lantern", "points"])
    assert {h.chunk_id: h.score for h in res.hits} == pytest.approx(expect, rel=1e-5)  # f32 scores
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    assert arm.describe()["version"]


def test_ties_break_by_chunk_id(tmp_path):
    from rulegauge.arms.tantivy_bm25 import TantivyArm

    docs = [Document("d", "rulebook", "G", "e", "en", "D")]
    text = "same words here"
    pages = [Page("d", p, text) for p in (1, 2, 3)]
    chunks = [Chunk(chunk_key("d", p, 0), "d", p, ("H",), text, 0, len(text)) for p in (3, 1, 2)]
    arm = TantivyArm()
    arm.prepare(make_corpus(docs, pages, chunks), ArmContext(tmp_path))
    [res] = arm.search([q("q", "words")], depth=2)
    assert [h.chunk_id for h in res.hits] == [chunk_key("d", 1, 0), chunk_key("d", 2, 0)]


def test_stemmer_and_tokenizer_parameters(tiny_corpus, tmp_path):
    from rulegauge.arms.tantivy_bm25 import NO_MATCH, NO_TOKENS, TantivyArm

    plain, stem = TantivyArm(), TantivyArm(stemmer="english")
    for arm in (plain, stem):
        arm.prepare(tiny_corpus, ArmContext(tmp_path))
    [none] = plain.search([q("q", "scored")], 10)
    assert (none.hits, none.empty_reason) == ((), NO_MATCH)
    assert stem.search([q("q", "scored")], 10)[0].hits[0].chunk_id == "rb#p0003.c000"
    assert plain.search([q("q", "?!")], 10)[0].empty_reason == NO_TOKENS
    ws = TantivyArm(tokenizer="whitespace")
    ws.prepare(tiny_corpus, ArmContext(tmp_path))
    assert not ws.search([q("q", "Setup")], 10)[0].hits  # "Setup." keeps its full stop
    assert ws.search([q("q", "Setup.")], 10)[0].hits


@pytest.mark.parametrize("kw", [{"tokenizer": "ngram"}, {"tokenizer": "regex"}, {"stemmer": "klingon"},
                                {"remove_long": -1}])
def test_bad_parameters_are_config_errors(kw):
    from rulegauge.arms.tantivy_bm25 import TantivyArm

    with pytest.raises(ConfigError, match="tantivy"):
        TantivyArm(**kw)
