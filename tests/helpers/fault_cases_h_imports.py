"""Fault-tier rows of issue 43, items 3-7, 13 and 14: collection imports and their bounds.
Each id names the item it replays (``i43-04-...`` is item 4). Refusals exit 2 naming the
file and line (or the option, or the question) the user wrote, never the import's
temporary folder, and leave no output folder; what the issue found broken but is now
accepted (a BOM, a query with more than 62 relevant documents, a corpus over 64 MiB)
exits 0 with what it wrote checked afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case

Build = Callable[[Path], None]
BEIR = ("rulegauge", "goldset", "import-beir", "{root}/beir", "-o", "{root}/out")
TREC = ("rulegauge", "goldset", "import-trec", "{root}/trec/topics.txt", "{root}/trec/qrels.txt",
        "--corpus", "{root}/trec/corpus.tsv", "-o", "{root}/out")
VALIDATE = ("rulegauge", "validate", "{root}/g.yaml")
RUN = ("rulegauge", "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "--run-id", "r1", "-c",
       "{root}/lexical.toml")
BM25 = '[grid]\nk = [60]\narms = [["bm25"]]\n'
CORPUS = b'{"_id": "a", "text": "Boats move three spaces."}\n{"_id": "b", "text": "Cards."}\n'
QUERIES = b'{"_id": "q1", "text": "How far does a boat move?"}\n'
QRELS = b"query-id\tcorpus-id\tscore\nq1\ta\t1\n"
BOM = b"\xef\xbb\xbf"
TEMP = ".tmp-"  # the import's temporary folder (core/atomic.temp_name): never in a message


def beir(corpus: bytes = CORPUS, queries: bytes = QUERIES, qrels: bytes = QRELS) -> Build:
    def build(root: Path) -> None:
        fi.write(root, "beir/corpus.jsonl", corpus)
        fi.write(root, "beir/queries.jsonl", queries)
        fi.write(root, "beir/qrels/test.tsv", qrels)
    return build


def trec(topics: bytes = b"1\tHow far does a boat move?\n", qrels: bytes = b"1 0 a 1\n",
         corpus: bytes = b"a\tBoats move three spaces.\nb\tCards.\n") -> Build:
    def build(root: Path) -> None:
        fi.write(root, "trec/topics.txt", topics)
        fi.write(root, "trec/qrels.txt", qrels)
        fi.write(root, "trec/corpus.tsv", corpus)
    return build


def no_output(root: Path) -> None:
    """After a refusal: no output folder and no temporary beside it."""
    assert [p.name for p in root.iterdir() if p.name.startswith((".out", "out"))] == []


def not_written(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert not (root / name).exists(), name
    return check


def wrote(shards: int) -> Callable[[Path], None]:
    """After an import: its gold set and ``shards`` corpus files, each within the loader's 64 MiB."""
    def check(root: Path) -> None:
        files = sorted((root / "out").glob("corpus-*.jsonl"))
        assert (root / "out" / "goldset.yaml").is_file() and len(files) == shards, files
        assert all(p.stat().st_size <= 64 * 1024 * 1024 for p in files), [p.stat().st_size for p in files]
    return check


def many_relevant(n: int, docs: int) -> bytes:
    """Qrels judging the first ``n`` of ``docs`` documents relevant to q1."""
    return b"query-id\tcorpus-id\tscore\n" + b"".join(b"q1\td%05d\t1\n" % i for i in range(n))


def corpus_of(docs: int, text: str = "tide pool note") -> bytes:
    return b"".join(json.dumps({"_id": f"d{i:05d}", "text": f"{text} {i}"}).encode() + b"\n"
                    for i in range(docs))


def imported_with_many_relevant(root: Path) -> None:
    """A collection whose q1 has 70 relevant documents, imported, and a bm25 grid."""
    from rulegauge.goldset.beir import BeirImport, import_beir

    beir(corpus_of(100), b'{"_id": "q1", "text": "tide pool"}\n', many_relevant(70, 100))(root)
    import_beir(BeirImport(root / "beir", root / "imported"))
    fi.write(root, "bm25.toml", BM25)


def recall_of_70(root: Path) -> None:
    import pandas as pd

    m = pd.read_parquet(root / "runs" / "r1" / "metrics.parquet")
    ranks = pd.read_parquet(root / "runs" / "r1" / "arm_ranks.parquet")
    chunks = pd.read_parquet(root / "runs" / "r1" / "chunks.parquet")
    label = dict(zip(chunks["chunk_id"], chunks["page_label"], strict=True))
    found = {label[c] for c in ranks[ranks["rank"] <= 100]["chunk_id"]} & {f"d{i:05d}" for i in range(70)}
    value = m[(m["config_id"] == "arm-bm25") & (m["metric"] == "recall@100")]["value"].iloc[0]
    assert value == len(found) / 70 and value > 0, (value, len(found))


def big_corpus(root: Path) -> None:
    """17 documents of ~4.2 MB: 70 MB, above one corpus file's 64 MiB, each line below 4 MiB."""
    line = json.dumps({"_id": "d00", "title": "", "text": "tide pool words " * 260_000}).encode() + b"\n"
    fi.write(root, "beir/corpus.jsonl", b"".join(line.replace(b'"d00"', b'"d%02d"' % i) for i in range(17)))
    fi.write(root, "beir/queries.jsonl", b'{"_id": "q1", "text": "tide"}\n')
    fi.write(root, "beir/qrels/test.tsv", b"q1\td03\t1\n")


def tiny_with(*files: tuple[str, str]) -> Build:
    """The tiny gold set and the given files beside it."""
    def build(root: Path) -> None:
        fi.tiny(root)
        for name, body in files:
            fi.write(root, name, body)
    return build


def graded_goldset(grade: str) -> Build:
    return fi.with_goldset(fi.goldset_text(questions=(
        f'  - {{id: q1, language: en, question: "How far?", pages: [{{ref: rb#2, grade: {grade}}}]}}\n')))


def any_of_goldset(root: Path) -> None:
    """A 70-page rulebook and a question of 62 single pages and one any-of requirement."""
    pages = ", ".join([f"rb#{i}" for i in range(1, 63)] + ["[rb#63, rb#64]"])
    fi.tiny(root, questions=f'  - {{id: q-many, language: en, question: "Many?", pages: [{pages}]}}\n')
    fi.write(root, "docs/rules.txt", "\f".join(f"Page {i}: boats move {i} spaces." for i in range(1, 71)))


TEN_400 = "1" + "0" * 400
TEN_30 = "1" + "0" * 30
DIGITS = "9" * 5000
ONE_TOO_MANY = 10_001

H_IMPORTS: tuple[Case, ...] = (
    # --- item 3: non-UTF-8 bytes in queries and qrels, named by line ----------------------
    Case("i43-03-beir-queries-non-utf8", beir(queries=b'{"_id": "q1", "text": "Caf\xe9?"}\n'), BEIR, 2,
         "beir/queries.jsonl:1: not UTF-8", after=no_output, absent=TEMP),
    Case("i43-03-beir-qrels-non-utf8", beir(qrels=b"query-id\tcorpus-id\tscore\nq1\ta\t1\xe9\n"), BEIR, 2,
         "beir/qrels/test.tsv:2: not UTF-8", after=no_output, absent=TEMP),
    Case("i43-03-trec-topics-non-utf8", trec(topics=b"1\tCaf\xe9?\n"), TREC, 2,
         "trec/topics.txt:1: not UTF-8", after=no_output, absent=TEMP),
    Case("i43-03-trec-qrels-non-utf8", trec(qrels=b"1 0 a 1\xff\n"), TREC, 2,
         "trec/qrels.txt:1: not UTF-8", after=no_output, absent=TEMP),
    # --- item 4: scores that are not ASCII integers, or 5,000 digits ----------------------
    Case("i43-04-beir-score-superscript", beir(qrels="q1\ta\t\u00b2\n".encode()), BEIR, 2,
         "beir/qrels/test.tsv:1: score must be an integer (ASCII digits), got '\u00b2'", after=no_output),
    Case("i43-04-beir-score-5000-digits", beir(qrels=f"q1\ta\t{DIGITS}\n".encode()), BEIR, 2,
         "beir/qrels/test.tsv:1: score 99999999999999999999... (5,000 characters) is outside -10..10",
         after=no_output),
    Case("i43-04-trec-relevance-superscript", trec(qrels="1 0 a \u00b2\n".encode()), TREC, 2,
         "trec/qrels.txt:1: relevance must be an integer (ASCII digits), got '\u00b2'", after=no_output),
    Case("i43-04-trec-relevance-5000-digits", trec(qrels=f"1 0 a -{DIGITS}\n".encode()), TREC, 2,
         "trec/qrels.txt:1: relevance -9999999999999999999... (5,001 characters) is outside -10..10",
         after=no_output),
    # --- item 5: grades bounded where they enter --------------------------------------------
    Case("i43-05-beir-grade-1e400", beir(qrels=f"q1\ta\t{TEN_400}\n".encode()), BEIR, 2,
         "is outside -10..10", after=no_output),
    Case("i43-05-trec-grade-1e30", trec(qrels=f"1 0 a {TEN_30}\n".encode()), TREC, 2,
         f"trec/qrels.txt:1: relevance {TEN_30} is outside -10..10", after=no_output),
    Case("i43-05-goldset-grade-1e400-validate", graded_goldset(TEN_400), VALIDATE, 2,
         "question q1: bad graded page ref {'ref': 'rb#2', 'grade': '<huge>'}: expected {ref: doc#page, "
         "grade: n} with an integer grade 1..10"),
    Case("i43-05-goldset-grade-1e30-run", graded_goldset(TEN_30), RUN, 2,
         "with an integer grade 1..10", no_runs=True),
    Case("i43-05-from-qrels-grade-1e400", tiny_with(("q.qrels", f"q1 0 rb#2 {TEN_400}\n"),
                                                    ("qs.tsv", "q1\tHow far?\n")),
         ("rulegauge", "goldset", "from-qrels", "{root}/q.qrels", "{root}/qs.tsv", "--documents", "{root}/g.yaml",
          "-o", "{root}/new.yaml"), 2, "q.qrels:1: relevance 10000000000000000000... (401 characters) is outside",
         after=not_written("new.yaml")),
    Case("i43-05-merge-qrels-grade-5000-digits", tiny_with(("j.qrels", f"q1 0 rb#2 {DIGITS}\n")),
         ("rulegauge", "goldset", "merge", "{root}/g.yaml", "{root}/j.qrels", "-o", "{root}/merged.yaml"), 2,
         "j.qrels:1: relevance 99999999999999999999... (5,000 characters) is outside -10..10",
         after=not_written("merged.yaml")),
    Case("i43-05-merge-judgments-grade-5000-digits", tiny_with(("j.jsonl", (
        '{"question_id": "q1", "page": "rb#2", "grade": ' + DIGITS + ', "judge_kind": "human", '
        '"judge_id": "ann"}\n'))),
         ("rulegauge", "goldset", "merge", "{root}/g.yaml", "{root}/j.jsonl", "-o", "{root}/merged.yaml"), 2,
         "j.jsonl:1: invalid JSON: a number too long to read", after=not_written("merged.yaml")),
    Case("i43-04-beir-corpus-id-5000-digits", beir(corpus=b'{"_id": ' + DIGITS.encode() + b', "text": "x"}\n' + CORPUS),
         BEIR, 2, "beir/corpus.jsonl:1: invalid JSON: a number too long to read", after=no_output),
    Case("i43-05-judges-import-grade-5000-digits", lambda root: fi.write(root, "q.qrels", f"q1 0 rb#2 {DIGITS}\n"),
         ("rulegauge", "judges", "import", "{root}/q.qrels", "--judge", "ann", "-o", "{root}/j.jsonl"), 2,
         "q.qrels:1: relevance 99999999999999999999...", after=not_written("j.jsonl")),
    # --- item 6: more than 62 relevant documents a query --------------------------------
    Case("i43-06-beir-70-relevant-imports", beir(corpus_of(100), b'{"_id": "q1", "text": "tide"}\n',
                                                 many_relevant(70, 100)), BEIR, 0,
         "70 relevant and 0 judged-0 documents", after=wrote(1)),
    Case("i43-06-beir-70-relevant-runs", imported_with_many_relevant,
         ("rulegauge", "run", "-g", "{root}/imported/goldset.yaml", "-c", "{root}/bm25.toml", "--chunking", "page",
          "--depth-unit", "page", "-m", "recall@100", "-o", "{root}/runs", "--run-id", "r1"), 0, "arm-bm25",
         after=recall_of_70),
    Case("i43-06-beir-over-the-requirement-limit", beir(corpus_of(ONE_TOO_MANY), QUERIES,
                                                        many_relevant(ONE_TOO_MANY, ONE_TOO_MANY)), BEIR, 2,
         "beir/qrels/test.tsv:2: query 'q1' has 10,001 relevant documents, above the limit of 10,000",
         after=no_output, absent=TEMP),
    Case("i43-06-validate-any-of-over-62", any_of_goldset, VALIDATE, 2,
         "question q-many: 63 requirements with an any-of list among them: a question with alternative "
         "pages holds at most 62"),
    # --- item 7: corpus files cut by bytes; --shard-size bounded ---------------------------
    Case("i43-07-shards-cut-by-bytes", big_corpus, BEIR, 0, "17 documents in 2 corpus file(s)", after=wrote(2)),
    Case("i43-07-shard-size-above-the-loader", beir(), (*BEIR, "--shard-size", "100001"), 2,
         "--shard-size: shard size must be between 1 and 100,000", after=no_output),
    # --- item 13: a BOM accepted on every file --------------------------------------------
    Case("i43-13-beir-bom-queries", beir(queries=BOM + QUERIES), BEIR, 0, "1 relevant", after=wrote(1)),
    Case("i43-13-beir-bom-qrels", beir(qrels=BOM + QRELS), BEIR, 0, "1 relevant", after=wrote(1)),
    Case("i43-13-trec-bom-every-file", trec(BOM + b"1\tHow far?\n", BOM + b"1 0 a 1\n", BOM + b"a\tBoats.\nb\tC.\n"),
         TREC, 0, "1 relevant", after=wrote(1)),
    # --- item 14: refusals name the user's files, never the temporary folder -------------
    Case("i43-14-beir-ids-equal-once-normalised", beir(
        queries='{"_id": "caf\u00e9", "text": "A?"}\n{"_id": "cafe\u0301", "text": "B?"}\n'.encode(),
        qrels="caf\u00e9\ta\t1\ncafe\u0301\ta\t1\n".encode()), BEIR, 2,
         "out/goldset.yaml:23: question caf\u00e9: duplicate question id", after=no_output, absent=TEMP),
    Case("i43-14-beir-bad-language", beir(), (*BEIR, "--language", "e n"), 2,
         "--language: 'e n' is not a code like en", after=no_output, absent=TEMP),
)
