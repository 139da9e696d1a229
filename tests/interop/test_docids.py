"""Ids survive the round trip (issue 45 item 6): a run over an imported collection records
its collection documents, and a TREC export writes the collection's own ids, so
ir_measures scores the export on the collection's own qrels as it is, to the run's own
figures. Also: a question with more than 62 requirements (issue 43 item 6) runs, and its
recall is the share of its relevant documents found, as ir_measures' R@k."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core.errors import ValidationError
from rulegauge.interop.docids import collection_docids
from rulegauge.store.provenance import COLLECTION_DOCUMENTS
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES, REPO

ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (a dev dependency) is the oracle")

TIDEPOOL = FIXTURES / "beir" / "tidepool"
GRID = REPO / "docs" / "grids" / "beir-bm25.toml"
RUN_FLAGS = ("--chunking", "page", "--depth-unit", "page", "-q")


def beir_qrels(folder: Path) -> list[ir_measures.Qrel]:
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return [ir_measures.Qrel(q, d, int(s)) for q, d, s in (line.split("\t") for line in lines)]


def import_and_run(src: Path, root: Path, *metrics: str) -> Run:
    runner = CliRunner()
    res = runner.invoke(app, ["goldset", "import-beir", str(src), "-o", str(root / "g")])
    assert res.exit_code == 0, res.output
    flags = [a for m in metrics for a in ("-m", m)]
    res = runner.invoke(app, ["run", "-g", str(root / "g" / "goldset.yaml"), "-c", str(GRID), *RUN_FLAGS,
                              *flags, "-o", str(root / "runs"), "--run-id", "t"])
    assert res.exit_code == 0, res.output
    return Run(root / "runs" / "t")


def export(root: Path, *args: str) -> Path:
    res = CliRunner().invoke(app, ["export", "t", "--runs-dir", str(root / "runs"), "--format", "trec",
                                   "-o", str(root / "trec"), *args])
    assert res.exit_code == 0, res.output
    return root / "trec"


def means(run: Run, config: str) -> dict[str, float]:
    m = run.table("metrics")
    m = m[(m["config_id"] == config) & m["answerable"]]
    return {str(k): float(v) for k, v in m.groupby("metric")["value"].mean().items()}


@pytest.fixture(scope="module")
def tidepool(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    root = tmp_path_factory.mktemp("tidepool")
    run = import_and_run(TIDEPOOL, root)
    return run, export(root)


def test_the_manifest_names_the_collection_documents(tidepool):
    run, _ = tidepool
    assert run.manifest["corpus"][COLLECTION_DOCUMENTS] == ["corpus-00001"]


@pytest.mark.parametrize("config", ["arm-bm25", "rrf_k60_bm25"])
def test_an_export_scores_on_the_collections_own_qrels_as_the_run_does(tidepool, config):
    """The done-when of issue 45 item 6: ir_measures on BEIR's qrels/test.tsv and the
    export's run file, no mapping, gives the run's nDCG@10 and R@100 to 4 decimals."""
    run, trec = tidepool
    ranked = list(ir_measures.read_trec_run(str(trec / f"{config}.trec")))
    got = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.R @ 100], beir_qrels(TIDEPOOL), ranked)
    ours = means(run, config)
    assert round(got[ir_measures.nDCG @ 10], 4) == round(ours["nDCG@10"], 4)
    assert round(got[ir_measures.R @ 100], 4) == round(ours["recall@100"], 4)
    ids = {json.loads(line)["_id"] for line in (TIDEPOOL / "corpus.jsonl").read_text(encoding="utf-8").splitlines()}
    assert {r.doc_id for r in ranked} <= ids  # every docid is one of the collection's


def test_the_exported_qrels_hold_the_collections_relevant_pairs(tidepool):
    _, trec = tidepool
    mine = {(r.query_id, r.doc_id) for r in ir_measures.read_trec_qrels(str(trec / "qrels.txt"))}
    assert mine == {(q.query_id, q.doc_id) for q in beir_qrels(TIDEPOOL) if q.relevance >= 1}
    arm = {r.doc_id for r in ir_measures.read_trec_run(str(trec / "arms" / "bm25.trec"))}
    assert all("#" not in d for d in arm)


def test_the_exported_qrels_come_back_through_from_qrels(tidepool, tmp_path):
    """The other half of the round trip: ``goldset from-qrels`` reads the collection's ids
    of an export back as the pages they name, the imported gold set's requirements."""
    from rulegauge.goldset.parse import load_goldset
    from rulegauge.interop.qrels import goldset_from_qrels

    run, trec = tidepool
    imported = Path(run.manifest["goldset"]["path"])
    qs = run.table("questions")
    (tmp_path / "qs.tsv").write_text("".join(f"{r.question_id}\t{r.question}\n" for r in qs.itertuples()),
                                     encoding="utf-8")
    back = load_goldset(goldset_from_qrels(trec / "qrels-requirements.txt", tmp_path / "qs.tsv", imported,
                                           tmp_path / "back.yaml"), allow_outside=True)
    want = {q.question_id: sorted(map(str, (r for req in q.requirements for r in req)))
            for q in load_goldset(imported).questions}
    assert {q.question_id: sorted(map(str, (r for req in q.requirements for r in req)))
            for q in back.questions} == want


def test_chunk_level_keeps_chunk_ids(tidepool, tmp_path):
    run, _ = tidepool
    from rulegauge.interop.export import export_run

    result = export_run(run, tmp_path / "c", level="chunk", configs=["arm-bm25"], arms=[])
    first = (tmp_path / "c" / "arm-bm25.trec").read_text(encoding="utf-8").split()[2]
    assert first in set(run.table("chunks")["chunk_id"]) and result.files


class Side:
    """A run as the export reads it, with its manifest and chunks replaced."""

    def __init__(self, run: Run, manifest: dict, chunks: pd.DataFrame | None = None) -> None:
        self.run, self.manifest, self._chunks = run, manifest, chunks
        self.run_id = run.run_id

    def has_table(self, name: str) -> bool:
        return self.run.has_table(name)

    def table(self, name: str) -> pd.DataFrame:
        return self._chunks if name == "chunks" and self._chunks is not None else self.run.table(name)


def test_a_run_without_the_record_exports_page_ids_as_before(tidepool, tmp_path):
    from rulegauge.interop.export import export_run

    run, _ = tidepool
    old = {**run.manifest, "corpus": {k: v for k, v in run.manifest["corpus"].items() if k != COLLECTION_DOCUMENTS}}
    export_run(Side(run, old), tmp_path / "old", configs=["arm-bm25"], arms=[])
    first = (tmp_path / "old" / "arm-bm25.trec").read_text(encoding="utf-8").split()[2]
    assert first.startswith("corpus-00001#")


@pytest.mark.parametrize(("label", "why"), [("tp 01", "holds whitespace"), ("tp02", "is also page")])
def test_ids_a_trec_file_cannot_hold_are_refused_by_name(tidepool, label, why):
    run, _ = tidepool
    chunks = run.table("chunks").copy()
    chunks.loc[chunks["page"] == 1, "page_label"] = label
    with pytest.raises(ValidationError) as err:
        collection_docids(Side(run, run.manifest, chunks))
    assert "page corpus-00001#1" in str(err.value) and why in str(err.value)


def many_relevant(folder: Path) -> Path:
    """120 documents sharing the query's words; query qbig judges 80 of them relevant
    (every third left out; grades 1 and 2), qsmall two (and one judged 0)."""
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{i:03d}", "title": "", "text": f"tide pool note {i} " + "tide " * (i % 7)}
            for i in range(120)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "qbig", "text": "tide pool"}\n'
                                          '{"_id": "qsmall", "text": "note 3"}\n', encoding="utf-8")
    lines = [f"qbig\td{i:03d}\t{1 + i % 2}" for i in range(120) if i % 3 != 2]
    lines += ["qsmall\td003\t1", "qsmall\td013\t2", "qsmall\td050\t0"]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines) + "\n",
                                               encoding="utf-8")
    return folder


def test_more_than_62_requirements_run_and_agree_with_ir_measures(tmp_path):
    src = many_relevant(tmp_path / "many")
    qrels = beir_qrels(src)
    assert sum(1 for q in qrels if q.query_id == "qbig" and q.relevance >= 1) == 80
    run = import_and_run(src, tmp_path, "recall@10", "recall@50", "recall@100", "nDCG@10", "hit@5")
    export(tmp_path)
    ranked = list(ir_measures.read_trec_run(str(tmp_path / "trec" / "arm-bm25.trec")))
    measures = {"recall@10": ir_measures.R @ 10, "recall@50": ir_measures.R @ 50,
                "recall@100": ir_measures.R @ 100, "nDCG@10": ir_measures.nDCG @ 10}
    per_query = {(m.query_id, str(m.measure)): m.value for m in
                 ir_measures.iter_calc(list(measures.values()), qrels, ranked)}
    m = run.table("metrics")
    m = m[m["config_id"] == "arm-bm25"]
    for ours, theirs in measures.items():
        for qid in ("qbig", "qsmall"):
            value = float(m[(m["question_id"] == qid) & (m["metric"] == ours)]["value"].iloc[0])
            assert round(value, 4) == round(per_query[(qid, str(theirs))], 4), (qid, ours)
    big = m[(m["question_id"] == "qbig") & (m["metric"] == "recall@100")]["value"].iloc[0]
    found = {r.doc_id for r in ranked if r.query_id == "qbig"} & {q.doc_id for q in qrels
                                                                   if q.query_id == "qbig" and q.relevance >= 1}
    assert big == len(found) / 80 and 0 < big <= 1
