"""Depth counted in the metrics' unit (``--depth-unit page``), the short-list warning, and
title handling (``--title every``), through ``goldset import-beir`` and ``rulegauge run``.

The collection is generated here: 150 documents of three ~1,000-character pieces each
(``--chunking size`` makes three chunks of every document), every sentence naming the
tide, so the query matches every chunk; 60 of them (i mod 5 in {3, 4}: the tide named 4
or 5 times a sentence) are relevant to q1 (a question has at most 62 requirements). At
depth 100 chunks an arm's list holds about a third as many documents; at depth 100 pages
it holds 100, and R@100 is (relevant documents among them) / 60 either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rulegauge.arms.results import ArmResult, Hit
from rulegauge.cli import app
from rulegauge.corpus.chunk_columns import ChunkColumns
from rulegauge.pipeline.depth_unit import best_per_page, chunk_depth, page_codes, short_lists
from rulegauge.store.rundir import Run

runner = CliRunner()
N_DOCS = 150
RELEVANT = [i for i in range(N_DOCS) if i % 5 in (3, 4)]
GRID = """metrics = ["nDCG@10", "recall@100"]
[defaults]
k = 60
depth = {depth}
[arms.bm25]
preset = "lucene"
[grid]
k = [60]
arms = [["bm25"]]
"""


def write_collection(folder: Path) -> Path:
    """Our own generated BEIR-format folder (module docstring); q2 names doc 7's title only."""
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(N_DOCS):
            # the tide 1-5 times a sentence: scores differ from document to document, lengths do not
            words = " ".join(["tide"] * (1 + i % 5) + ["foam"] * (4 - i % 5))
            text = " ".join(f"Pool {i:03d} sentence {j:02d} sees {words} over rocks." for j in range(48))
            fh.write(json.dumps({"_id": f"d{i:03d}", "title": "Anemone cove" if i == 7 else f"Pool {i:03d}",
                                 "text": text}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "tide"}) + "\n"
                                          + json.dumps({"_id": "q2", "text": "anemone cove"}) + "\n",
                                          encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q1\td{i:03d}\t1\n" for i in RELEVANT)
        + "q2\td007\t1\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("depth")
    src = write_collection(root / "cove")
    res = runner.invoke(app, ["goldset", "import-beir", str(src), "-o", str(root / "gold")])
    assert res.exit_code == 0, res.output
    for depth in (100, 3):
        (root / f"grid{depth}.toml").write_text(GRID.format(depth=depth), encoding="utf-8")
    return root


def run(root: Path, run_id: str, *args: str, depth: int = 100) -> tuple[Run, str]:
    res = runner.invoke(app, ["run", "-g", str(root / "gold" / "goldset.yaml"), "-c", str(root / f"grid{depth}.toml"),
                              "-o", str(root / "runs"), "--run-id", run_id, "--chunking", "size", *args])
    assert res.exit_code == 0, res.output
    return Run(root / "runs" / run_id), res.output


def recall_100(r: Run, question: str = "q1") -> float:
    m = r.table("metrics")
    row = m[(m["config_id"] == "arm-bm25") & (m["metric"] == "recall@100") & (m["question_id"] == question)]
    return float(row["value"].iloc[0])


def test_depth_in_pages_gives_r_at_100_over_100_documents(imported):
    pages, out_pages = run(imported, "pages", "--depth-unit", "page")
    chunks, out_chunks = run(imported, "chunks")
    assert len(pages.table("chunks")) == 3 * N_DOCS  # three chunks a document
    ranks = pages.table("arm_ranks")
    q1 = ranks[(ranks["question_id"] == "q1")]
    # one chunk per document, ranks 1..100, best first: R@100 = relevant among 100 documents / 60
    assert len(q1) == 100 and q1["doc_id"].str.cat(q1["page"].astype(str)).nunique() == 100
    assert list(q1["rank"]) == list(range(1, 101)) and q1["score"].is_monotonic_decreasing
    relevant = {int(p) for p in q1["page"]} & {i + 1 for i in RELEVANT}  # page i + 1 is document d<i>
    assert recall_100(pages) == pytest.approx(len(relevant) / len(RELEVANT)) and len(relevant) == 60
    # counted in chunks: 100 chunks hold fewer documents, R@100 = relevant among those / 60
    c1 = chunks.table("arm_ranks")
    c1 = c1[c1["question_id"] == "q1"]
    held = c1.drop_duplicates(["doc_id", "page"])
    assert len(c1) == 100 and len(held) < 100
    found = {int(p) for p in held["page"]} & {i + 1 for i in RELEVANT}
    assert recall_100(chunks) == pytest.approx(len(found) / len(RELEVANT)) and len(found) < 60
    # the page list's first documents are the chunk list's, in order (the best chunk of each)
    assert list(q1["page"])[: len(held)] == list(held["page"])
    info = pages.manifest["arms"]["bm25"]
    assert (info["depth"], info["depth_unit"], info["chunk_depth"]) == (100, "page", 300)
    assert pages.manifest["depth_unit"] == "page" and "short_lists" not in info
    assert "warning: arm bm25" not in out_pages
    # the short-list warning: arm, count, the questions affected
    short = chunks.manifest["arms"]["bm25"]["short_lists"]
    assert (short["questions"], short["of"], short["ids"], short["fewest"]) == (1, 2, ["q1"], len(held))
    assert (f"warning: arm bm25: 1 of 2 questions hold fewer than 100 distinct pages in its list "
            f"(as few as {len(held)}; depth 100 chunks)") in out_chunks and ": q1;" in out_chunks


def test_a_depth_below_the_cutoff_warns_in_pages_too(imported):
    r, out = run(imported, "shallow", "--depth-unit", "page", depth=3)
    assert r.manifest["arms"]["bm25"]["short_lists"]["ids"] == ["q1"]  # q2 matches doc 7 only: not cut
    assert "warning: arm bm25: 1 of 2 questions hold fewer than 100" in out and "depth 3 pages" in out
    top3 = {int(p) for p in r.table("arm_ranks").query("question_id == 'q1'")["page"]}
    assert len(top3) == 3 and recall_100(r) == pytest.approx(len(top3 & {i + 1 for i in RELEVANT}) / 60)


def test_title_every_searches_the_title_in_every_chunk(imported):
    every, _ = run(imported, "every", "--title", "every")
    first, _ = run(imported, "first")  # the default: the title where the text has it
    assert every.manifest["corpus"]["chunking"]["title"] == "every"
    assert "title" not in first.manifest["corpus"]["chunking"]  # the default leaves the hash as it was
    doc7 = [f"corpus-00001#p0008.c00{i}" for i in range(3)]  # document d007 is page 8 of the corpus file
    for r, want in ((every, doc7), (first, doc7[:1])):
        ranks = r.table("arm_ranks")  # q2 names doc 7's title: found in every chunk, or in the first
        assert sorted(ranks[ranks["question_id"] == "q2"]["chunk_id"]) == want
    # the chunks' stored text is the page's own slice either way
    assert list(every.table("chunks")["text"]) == list(first.table("chunks")["text"])


def test_unit_options_are_checked(imported):
    base = ["run", "-g", str(imported / "gold" / "goldset.yaml"), "-c", str(imported / "grid100.toml"),
            "-o", str(imported / "runs")]
    bad = runner.invoke(app, [*base, "--run-id", "bad", "--depth-unit", "document"])
    assert bad.exit_code == 2 and "unknown depth unit 'document'; choose one of: chunk, page" in bad.output
    bad = runner.invoke(app, [*base, "--run-id", "bad", "--title", "all"])
    assert bad.exit_code == 2 and "unknown title handling 'all'" in bad.output
    assert not (imported / "runs" / "bad").exists()
    done, _ = run(imported, "resumed", "--depth-unit", "page", depth=3)
    again = runner.invoke(app, [*base, "--from", str(done.path), "--depth-unit", "page", "--run-id", "bad"])
    assert again.exit_code == 2 and "takes its source run's" in again.output
    # a resumed run counts depth as it began: another unit is refused, the run left as it was
    before = done.path.joinpath("manifest.json").read_bytes()
    other = runner.invoke(app, ["run", "-g", str(imported / "gold" / "goldset.yaml"), "-c",
                                str(imported / "grid3.toml"), "-o", str(imported / "runs"), "--run-id", "resumed",
                                "--chunking", "size"])
    assert other.exit_code == 2 and "depth unit: run has page, options give chunk" in other.output
    assert done.manifest["status"] == "complete" and done.path.joinpath("manifest.json").read_bytes() == before


def test_best_per_page_and_chunk_depth_by_formula():
    chunks = ChunkColumns.of([type("C", (), {"chunk_id": f"{d}#p{p:04d}.c{i:03d}", "doc_id": d, "page": p})()
                              for d, p, i in (("a", 1, 0), ("a", 1, 1), ("a", 2, 0), ("b", 1, 0), ("b", 1, 1),
                                              ("b", 1, 2))])
    codes = page_codes(chunks)
    assert codes.tolist() == [0, 0, 1, 2, 2, 2]
    assert chunk_depth(codes, 1) == 3 and chunk_depth(codes, 2) == 3 + 2 and chunk_depth(codes, 9) == 6
    hits = tuple(Hit(chunks.ids[r], n, s) for n, (r, s) in enumerate([(4, 9.0), (3, 8.0), (0, 7.0), (2, 6.0),
                                                                       (1, 5.0)], start=1))
    best = best_per_page(ArmResult("q", "x", hits), chunks, codes, 2)
    assert [(h.chunk_id, h.rank, h.score) for h in best.hits] == [("b#p0001.c001", 1, 9.0), ("a#p0001.c000", 2, 7.0)]
    # short: asked 5 of 6 chunks, 5 returned, 3 pages < cutoff 10 (target: the corpus's 3 pages: not short)
    assert short_lists([ArmResult("q", "x", hits)], chunks, codes, 10, 5) is None
    found = short_lists([ArmResult("q", "x", hits[:2])], chunks, codes, 10, 2)
    assert found == {"cutoff": 10, "target": 3, "questions": 1, "of": 1, "fewest": 1, "ids": ["q"]}
    assert short_lists([ArmResult("q", "x", hits[:1])], chunks, codes, 10, 2) is None  # the arm had no more
    assert np.array_equal(page_codes(ChunkColumns.of([])), np.zeros(0))


def test_a_foreign_hit_is_a_page_of_its_own_when_depth_counts_pages():
    chunks = ChunkColumns.of([type("C", (), {"chunk_id": f"{d}#p{p:04d}.c{i:03d}", "doc_id": d, "page": p})()
                              for d, p, i in (("a", 1, 0), ("a", 1, 1), ("a", 2, 0))])
    over = chunks.with_foreign(["x#1", "a#1"])  # "a#1" is no chunk id: a reply id like any other
    codes = page_codes(over)
    assert len(set(codes.tolist())) == 4 and codes[3] != codes[4]  # two foreign pages, none merged with a#1
    hits = tuple(Hit(over.ids[r], n, 1.0 / n) for n, r in enumerate([3, 0, 1, 4, 2], start=1))
    result = ArmResult("q", "x", hits, foreign=frozenset({"x#1", "a#1"}))
    best = best_per_page(result, over, codes, 3)
    assert [(h.chunk_id, h.rank) for h in best.hits] == [("x#1", 1), ("a#p0001.c000", 2), ("a#1", 3)]
    # short: 3 of the corpus's 3 chunks asked (asked >= the corpus: never short, whatever the foreign rows)
    assert short_lists([result], over, codes, 10, 3) is None
    found = short_lists([ArmResult("q", "x", hits[:1], foreign=frozenset({"x#1"}))], over, codes, 10, 1)
    assert found is not None and (found["target"], found["fewest"]) == (2, 1)  # the corpus's 2 pages; 1 listed
    assert short_lists([ArmResult("q", "x", hits[:2], foreign=frozenset({"x#1"}))], over, codes, 10, 2) is None
