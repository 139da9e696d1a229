"""``benchmarks/bench_embed.py --cold N``: the generated collection is N chunks of rule prose.

The cold run's figures are per chunk, so the generator must give exactly one chunk per page
under the default chunking, the same pages for the same seed, and a gold set that loads
with every question's page in the corpus (no model, no timing here).
"""

import importlib.util

from rulegauge.corpus.chunking import build_corpus
from rulegauge.goldset.parse import check_corpus, load_goldset
from tests.helpers.common import REPO

_spec = importlib.util.spec_from_file_location("bench_embed", REPO / "benchmarks" / "bench_embed.py")
assert _spec is not None and _spec.loader is not None
bench_embed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_embed)


def test_rule_pages_are_seeded_and_sized():
    pages = bench_embed.rule_pages(40, seed=3)
    assert pages == bench_embed.rule_pages(40, seed=3) != bench_embed.rule_pages(40, seed=4)
    assert all(len(p) <= 1150 for p in pages) and min(map(len, pages)) >= 400
    assert all(p.endswith(".") and p[0].isupper() for p in pages)
    assert len(set(pages)) == 40


def test_cold_corpus_is_one_chunk_per_page_and_its_gold_set_loads(tmp_path):
    gs = load_goldset(bench_embed.write_cold_corpus(tmp_path, 37, questions=5, docs=4))
    corpus = build_corpus(gs.documents)
    assert len(corpus.chunks) == 37
    assert len(gs.questions) == 5
    check_corpus(gs, corpus)  # every question's page exists
