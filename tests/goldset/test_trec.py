"""``goldset import-trec``: TREC topics (SGML or TSV) + qrels + a JSONL/TSV corpus -> the
same gold set and corpus files ``import-beir`` writes for the same collection
(``tests/fixtures/trec/tidepool`` is the BEIR fixture's collection in TREC formats)."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core.errors import ValidationError
from rulegauge.goldset.beir import BeirImport, import_beir
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.trec import TrecImport, import_trec
from tests.helpers.common import FIXTURES

TREC = FIXTURES / "trec" / "tidepool"
BEIR = FIXTURES / "beir" / "tidepool"


def questions(path: Path, strip_q: bool = False) -> list[tuple[object, ...]]:
    gs = load_goldset(path)
    return [(q.question_id[1:] if strip_q else q.question_id, q.question,
             [[(str(r), r.grade) for r in req] for req in q.requirements],
             sorted((j.key, j.grade, j.judge_id) for j in q.judged)) for q in gs.questions]


@pytest.fixture(scope="module")
def beir(tmp_path_factory):
    return import_beir(BeirImport(BEIR, tmp_path_factory.mktemp("beir") / "out"))


@pytest.mark.parametrize("topics", ["topics.txt", "queries.tsv"])
@pytest.mark.parametrize("corpus", ["corpus.tsv", "jsonl"])
def test_trec_formats_give_what_beir_gives(tmp_path, beir, topics, corpus):
    corpus_path = BEIR / "corpus.jsonl" if corpus == "jsonl" else TREC / corpus
    r = import_trec(TrecImport(TREC / topics, TREC / "qrels.txt", corpus_path, tmp_path / "out"))
    assert (r.documents, r.questions, r.relevant, r.judged_zero) == (beir.documents, beir.questions,
                                                                      beir.relevant, beir.judged_zero)
    assert questions(r.goldset) == questions(beir.goldset, strip_q=True)  # topic 1 is BEIR's q1
    assert [p.read_bytes() for p in r.shards] == [p.read_bytes() for p in beir.shards]
    assert "imported by rulegauge goldset import-trec" in r.goldset.read_text(encoding="utf-8")


def test_sgml_details_multiline_titles_prefixes_and_negative_grades(tmp_path):
    (tmp_path / "topics").write_text(
        "<top>\n<num> Number: 7 \n<title> Topic: How do\n  crabs moult?\n<desc> Description:\nignored words\n"
        "</top>\n<top>\n<num>8\n<title>tides</title>\n</top>\n", encoding="utf-8")
    (tmp_path / "qrels").write_text("7 0 a 2\n7 0 b -2\n8 Q0 b 1\n", encoding="utf-8")
    (tmp_path / "c.tsv").write_text("docid\ttext\na\tCrabs moult in spring.\nb\tTides rise twice.\n",
                                    encoding="utf-8")
    r = import_trec(TrecImport(tmp_path / "topics", tmp_path / "qrels", tmp_path / "c.tsv", tmp_path / "out"))
    got = questions(r.goldset)
    assert got == [("7", "How do crabs moult?", [[("corpus-00001#1", 2)]], [("corpus-00001#2", 0, "qrels")]),
                   ("8", "tides", [[("corpus-00001#2", None)]], [])]
    assert r.documents == 2  # the header line is not a document


@pytest.mark.parametrize(("name", "text", "line", "message"), [
    ("qrels.txt", "1 0 tp02\n", 1, "expected 'qid iteration docid relevance'"),
    ("qrels.txt", "1 0 tp02 high\n", 1, "relevance must be an integer"),
    ("qrels.txt", "1 0 tp02 \u00b2\n", 1, "relevance must be an integer (ASCII digits), got '\u00b2'"),
    ("qrels.txt", "1 0 tp02 1_0\n", 1, "relevance must be an integer (ASCII digits), got '1_0'"),
    ("qrels.txt", "1 0 tp02 -" + "9" * 5000 + "\n", 1, "(5,001 characters) is outside -10..10"),
    ("qrels.txt", "1 0 tp02 1000000000000000000000000000000\n", 1, "is outside -10..10"),
    ("qrels.txt", "1 0 nope 1\n", 1, "document 'nope' is not in corpus.tsv"),
    ("qrels.txt", "77 0 tp02 1\n", 1, "query '77' is not in topics.txt"),
    ("topics.txt", "<top>\n<num> 1\n</top>\n", 1, "a topic needs a <num> and a non-empty <title>"),
    ("topics.txt", "<top>\n<num> 1\n<title> a\n", 1, "<top> without </top>"),
    ("corpus.tsv", "tp01\tx\ntp01\ty\n", 2, "id 'tp01' appears twice (first on line 1)"),
    ("corpus.tsv", "just one field\n", 1, "expected id<TAB>text or id<TAB>title<TAB>text"),
])
def test_bad_input_names_file_and_line_and_writes_nothing(tmp_path, name, text, line, message):
    src = Path(shutil.copytree(TREC, tmp_path / "src"))
    (src / name).write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        import_trec(TrecImport(src / "topics.txt", src / "qrels.txt", src / "corpus.tsv", tmp_path / "out"))
    assert f"{src / name}:{line}" in str(err.value) and message in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("name", ["topics.txt", "qrels.txt", "corpus.tsv"])
def test_non_utf8_is_named_and_a_bom_accepted_on_every_file(tmp_path, name):
    src = Path(shutil.copytree(TREC, tmp_path / "src"))
    body = (src / name).read_bytes()
    (src / name).write_bytes(b"\xef\xbb\xbf" + body)
    job = TrecImport(src / "topics.txt", src / "qrels.txt", src / "corpus.tsv", tmp_path / "out")
    assert import_trec(job).questions == 16
    (src / name).write_bytes(body.replace(b"\n", b"\xff\n", 1))
    with pytest.raises(ValidationError) as err:
        import_trec(TrecImport(src / "topics.txt", src / "qrels.txt", src / "corpus.tsv", tmp_path / "out2"))
    assert f"{src / name}:1: not UTF-8" in str(err.value)


def test_cli_imports_and_bad_input_exits_2(tmp_path):
    runner = CliRunner()
    args = ["goldset", "import-trec", str(TREC / "topics.txt"), str(TREC / "qrels.txt"),
            "--corpus", str(TREC / "corpus.tsv")]
    ok = runner.invoke(app, [*args, "-o", str(tmp_path / "o")])
    assert ok.exit_code == 0 and "16 questions" in ok.output and "42 documents in 1 corpus file(s)" in ok.output
    bad = runner.invoke(app, [*args[:3], str(tmp_path / "none"), "--corpus", str(TREC / "corpus.tsv"),
                              "-o", str(tmp_path / "p")])
    assert bad.exit_code == 2 and "none: file not found" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "p").exists()
