"""``goldset import-beir``: a BEIR-format folder -> gold set with graded requirements +
collection corpus files, streamed; bad input named with file and line, nothing written."""

import json
import shutil
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
from rulegauge.goldset.beir import BeirImport, import_beir
from rulegauge.goldset.parse import load_goldset
from tests.helpers.common import FIXTURES

TIDEPOOL = FIXTURES / "beir" / "tidepool"


def qrels_of(folder: Path) -> list[tuple[str, str, int]]:
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return [(q, d, int(s)) for q, d, s in (line.split("\t") for line in lines)]


def append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line)


def copy_fixture(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TIDEPOOL, tmp_path / "tidepool"))


def test_every_qrel_becomes_a_graded_requirement_or_a_judged_zero(tmp_path):
    r = import_beir(BeirImport(TIDEPOOL, tmp_path / "out", shard_size=10))
    gs = load_goldset(r.goldset)
    assert (r.documents, len(r.shards), r.questions) == (42, 5, 16)  # 42 documents, 10 a file
    corpus = build_corpus(gs.documents, ChunkingOptions(method="page"))
    by_label = {p.label: f"{p.doc_id}#{p.page}" for p in corpus.pages}
    assert len(by_label) == 42
    want_relevant: dict[str, dict[str, int]] = {}
    want_zero: dict[str, set[str]] = {}
    for qid, doc, score in qrels_of(TIDEPOOL):
        if score:
            want_relevant.setdefault(qid, {})[by_label[doc]] = score
        else:
            want_zero.setdefault(qid, set()).add(by_label[doc])
    assert [q.question_id for q in gs.questions] == list(dict.fromkeys(q for q, _, _ in qrels_of(TIDEPOOL)))
    assert "q99" not in {q.question_id for q in gs.questions}  # not in the split
    for q in gs.questions:
        got = {str(ref): ref.grade or 1 for req in q.requirements for ref in req}
        assert got == want_relevant[q.question_id]
        assert all(len(req) == 1 for req in q.requirements)  # one requirement per document
        assert {j.key for j in q.judged if j.grade == 0} == want_zero.get(q.question_id, set())
    assert r.relevant == sum(map(len, want_relevant.values()))
    assert r.judged_zero == sum(map(len, want_zero.values())) == 5
    texts = {p.label: p.text for p in corpus.pages}
    first = json.loads((TIDEPOOL / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert texts[first["_id"]] == f"{first['title']}\n\n{first['text']}"


def test_the_same_input_gives_the_same_files(tmp_path):
    a = import_beir(BeirImport(TIDEPOOL, tmp_path / "a"))
    b = import_beir(BeirImport(TIDEPOOL, tmp_path / "b"))
    for x, y in zip((a.goldset, *a.shards), (b.goldset, *b.shards), strict=True):
        assert x.read_bytes() == y.read_bytes()


def test_progress_is_reported_in_bytes(tmp_path):
    from contextlib import contextmanager

    seen: list[tuple[str, int, int]] = []

    @contextmanager
    def stage(description, total):
        done = [0]
        yield lambda n: done.__setitem__(0, done[0] + n)
        seen.append((description, total, done[0]))

    import_beir(BeirImport(TIDEPOOL, tmp_path / "out"), stage)
    size = (TIDEPOOL / "corpus.jsonl").stat().st_size
    assert seen == [("importing corpus.jsonl (bytes)", size, size)]


@pytest.mark.parametrize(("edit", "where", "message"), [
    (lambda d: (d / "qrels" / "test.tsv").unlink(), "qrels/test.tsv", "file not found"),
    (lambda d: (d / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\nnot json\n', encoding="utf-8"),
     "corpus.jsonl:2", "invalid JSON"),
    (lambda d: (d / "corpus.jsonl").write_bytes(b'{"_id": "a", "text": "x"}\n{"_id": "b", "text": "\xff"}\n'),
     "corpus.jsonl:2", "not UTF-8"),
    (lambda d: append(d / "qrels" / "test.tsv", "q1\tnope\t1\n"),
     "qrels/test.tsv:38", "document 'nope' is not in corpus.jsonl"),
    (lambda d: append(d / "qrels" / "test.tsv", "q1\ttp05\thigh\n"),
     "qrels/test.tsv:38", "score must be an integer (ASCII digits), got 'high'"),
    (lambda d: append(d / "qrels" / "test.tsv", "q1\ttp05\t\u00b2\n"),
     "qrels/test.tsv:38", "score must be an integer (ASCII digits), got '\u00b2'"),
    (lambda d: append(d / "qrels" / "test.tsv", "q1\ttp05\t" + "9" * 5000 + "\n"),
     "qrels/test.tsv:38", "(5,000 characters) is outside -10..10"),
    (lambda d: append(d / "qrels" / "test.tsv", "q1\ttp05\t11\n"),
     "qrels/test.tsv:38", "score 11 is outside -10..10"),
    (lambda d: (d / "queries.jsonl").write_bytes(b'{"_id": "q1", "text": "Caf\xe9?"}\n'),
     "queries.jsonl:1", "not UTF-8"),
    (lambda d: (d / "qrels" / "test.tsv").write_bytes(b"query-id\tcorpus-id\tscore\nq1\ttp01\t1\xff\n"),
     "qrels/test.tsv:2", "not UTF-8"),
    (lambda d: append(d / "qrels" / "test.tsv", "q\u200b1\ttp05\t1\n"),
     "qrels/test.tsv:38", "query id 'q\\u200b1' holds invisible characters (U+200B"),
    (lambda d: append(d / "qrels" / "test.tsv", "q77\ttp05\t1\n"),
     "qrels/test.tsv:38", "query 'q77' is not in queries.jsonl"),
])
def test_bad_input_names_file_and_line_and_writes_nothing(tmp_path, edit, where, message):
    src = copy_fixture(tmp_path)
    edit(src)
    before = sorted((p, p.read_bytes()) for p in src.rglob("*") if p.is_file())
    with pytest.raises(ValidationError) as err:
        import_beir(BeirImport(src, tmp_path / "out"))
    assert f"{src / where}" in str(err.value) and message in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tidepool"]  # no output, no temporary folder
    assert sorted((p, p.read_bytes()) for p in src.rglob("*") if p.is_file()) == before


def test_an_existing_output_folder_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(ValidationError, match="exists: choose a new output folder"):
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out"))


def test_cli_bad_input_exits_2_without_traceback(tmp_path):
    from typer.testing import CliRunner

    from rulegauge.cli import app

    res = CliRunner().invoke(app, ["goldset", "import-beir", str(tmp_path / "nowhere"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "corpus.jsonl: file not found" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_a_byte_order_mark_is_accepted_on_every_file(tmp_path, name):
    src = copy_fixture(tmp_path)
    (src / name).write_bytes(b"\xef\xbb\xbf" + (src / name).read_bytes())
    r = import_beir(BeirImport(src, tmp_path / "out"))
    assert (r.documents, r.questions, r.relevant) == (42, 16, 31)


def test_negative_scores_are_judged_non_relevant(tmp_path):
    src = copy_fixture(tmp_path)
    append(src / "qrels" / "test.tsv", "q1\ttp40\t-2\n")
    gs = load_goldset(import_beir(BeirImport(src, tmp_path / "out")).goldset)
    q1 = next(q for q in gs.questions if q.question_id == "q1")
    assert [j.grade for j in q1.judged if j.key.endswith("#40")] == [0]


def test_shards_are_cut_by_bytes_as_well_as_documents(tmp_path, monkeypatch):
    """A corpus file never exceeds what the loader reads (SHARD_BYTES), whatever --shard-size."""
    from rulegauge.goldset import collection_import

    lines = (TIDEPOOL / "corpus.jsonl").read_bytes().splitlines(keepends=True)
    monkeypatch.setattr(collection_import, "SHARD_BYTES", 1_000)
    r = import_beir(BeirImport(TIDEPOOL, tmp_path / "out", shard_size=50_000))
    sizes = [p.stat().st_size for p in r.shards]
    assert max(sizes) <= 1_000 and len(r.shards) >= sum(map(len, lines)) // 1_000
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in r.shards) == 42
    gs = load_goldset(r.goldset)
    assert len(gs.documents) == len(r.shards)


def test_a_document_too_long_for_a_corpus_line_is_named(tmp_path, monkeypatch):
    from rulegauge.goldset import collection_import

    monkeypatch.setattr(collection_import, "MAX_TEXT_LINE", 200)
    with pytest.raises(ValidationError) as err:
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out"))
    assert f"{TIDEPOOL / 'corpus.jsonl'}:" in str(err.value) and "above the limit of 200" in str(err.value)
    assert "tmp-" not in str(err.value) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("size", [0, 100_001])
def test_the_shard_size_is_bounded_by_what_the_loader_reads(tmp_path, size):
    with pytest.raises(ValidationError, match="--shard-size: shard size must be between 1 and 100,000"):
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out", shard_size=size))


def test_a_query_with_more_relevant_documents_than_a_question_holds_is_named(tmp_path, monkeypatch):
    from rulegauge.goldset import collection_import

    monkeypatch.setattr(collection_import, "MAX_REQUIREMENTS", 2)
    with pytest.raises(ValidationError) as err:
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out"))
    assert "query 'q10' has 3 relevant documents, above the limit of 2 requirements" in str(err.value)
    assert f"{TIDEPOOL / 'qrels' / 'test.tsv'}:" in str(err.value)


def test_a_refusal_of_what_was_written_never_names_the_temporary_folder(tmp_path, monkeypatch):
    from rulegauge.goldset import collection_import

    def refuse(path):
        raise ValidationError([collection_import.Problem(f"{path.parent / 'corpus-00001.jsonl'}:3", "bad")])

    monkeypatch.setattr(collection_import, "load_goldset", refuse)
    with pytest.raises(ValidationError) as err:
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out"))
    assert f"{tmp_path / 'out' / 'corpus-00001.jsonl'}:3: bad" in str(err.value)
    assert "tmp-" not in str(err.value) and sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_full_disk_names_the_corpus_file_as_it_would_be_named(tmp_path, monkeypatch):
    import errno

    from rulegauge.goldset import collection_import

    def full(self, line):
        raise OSError(errno.ENOSPC, "No space left on device", str(self.folder / "corpus-00001.jsonl"))

    monkeypatch.setattr(collection_import._Shards, "add", full)
    with pytest.raises(OSError) as err:
        import_beir(BeirImport(TIDEPOOL, tmp_path / "out"))
    assert err.value.filename == str(tmp_path / "out" / "corpus-00001.jsonl") and err.value.errno == errno.ENOSPC
    assert sorted(p.name for p in tmp_path.iterdir()) == []
