"""Fault-tier rows of the second round: hostile cases invented beyond issue 25, by family
(the family is the id's prefix): ``links-`` paths and links, ``tables-`` tables and
manifests, ``sizes-`` sizes and counts, ``http-`` HTTP, ``ids-`` unicode and ids,
``conc-`` concurrency, ``sql-`` SQL.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_issue25 import ASK, GATE, PREFLIGHT, QUERY, RUN, R
from tests.helpers.hostile_server import SECRET

VALIDATE = ("rulegauge", "validate", "{root}/g.yaml")
REPORT = ("rulegauge", "report", "s1", "--runs-dir", R, "-o", "{root}/r.html")


def _q(qid: str) -> fr.Build:
    return fi.with_goldset(fi.goldset_text(questions=(
        f'  - {{id: "{qid}", language: en, question: "A?", pages: [rb#2]}}\n')))


def _doc(doc_id: str, ref: str = "rb") -> fr.Build:
    return fi.with_goldset(fi.goldset_text(
        documents=(f'  - {{id: "{doc_id}", path: docs/rules.txt, kind: rulebook, game: Harbour, '
                   "edition: en-1, language: en}\n"),
        questions=f'  - {{id: q1, language: en, question: "A?", pages: ["{ref}#2"]}}\n'))


def _manifest(value: object) -> fr.Build:
    return fr.manifest_patch(lambda m: value)


def _patch(**kw: object) -> fr.Build:
    return fr.manifest_patch(lambda m: {**m, **kw})


def _sha(name: str, info: object) -> fr.Build:
    return fr.manifest_patch(lambda m: {**m, "tables": {**m["tables"], name: info}})


BEIR = ("rulegauge", "goldset", "import-beir", "{root}/beir", "-o", "{root}/out")


def _beir(corpus: str, qrels: str = "q1\ta\t1\n") -> fr.Build:
    def build(root: Path) -> None:
        fi.write(root, "beir/corpus.jsonl", corpus)
        fi.write(root, "beir/queries.jsonl", '{"_id": "q1", "text": "A?"}\n')
        fi.write(root, "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + qrels)
    return build


def _no_out(root: Path) -> None:
    assert not (root / "out").exists() and [p.name for p in root.iterdir() if p.name.startswith("out")] == []


ROUND2: tuple[Case, ...] = (
    # --- paths & links -----------------------------------------------------------------
    Case("links-run-folder-is-link", fr.planted_link("", "outside", folder=True), RUN, 2,
         "is a symbolic link", after=fr.after_folder_empty("outside")),
    Case("links-table-file-is-link", fr.linked_table, REPORT, 2, "is a symbolic link"),
    Case("links-answers-journal-folder", fr.planted_link("answers-journal", "outside", folder=True,
                                                         real="a1"),
         ("rulegauge", "answer", "a1", "-a", "extractive", "--runs-dir", R), 2, "is a symbolic link",
         after=fr.after_folder_empty("outside")),
    Case("links-run-id-dot", fi.tiny, (*RUN[:-2], "--run-id", "."), 2, "bad run id", no_runs=True),
    Case("links-run-id-long", fi.tiny, (*RUN[:-2], "--run-id", "r" * 200), 2, "bad run id",
         no_runs=True),
    Case("links-run-id-unicode", fi.tiny, (*RUN[:-2], "--run-id", "r\u2215x"), 2, "bad run id",
         no_runs=True),
    Case("links-run-id-nul", fi.tiny, (*RUN[:-2], "--run-id", "r\x01x"), 2, "bad run id",
         no_runs=True),
    Case("links-answerer-label-escape", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "answer", "a1", "-a", "../../x=extractive", "--runs-dir", R), 2,
         "answerer label"),
    Case("links-export-arm-dotdot", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "export", "a1", "--runs-dir", R, "-o", "{root}/trec", "--config", "../x"), 2,
         "no such config"),
    Case("links-out-is-a-file", lambda root: (fi.tiny(root), fi.write(root, "runs", "a file")),
         RUN, 2, "runs"),
    # --- tables & manifests ------------------------------------------------------------
    Case("tables-manifest-is-a-list", _manifest([]), REPORT, 2, "must be a JSON object"),
    Case("tables-manifest-deep-json", fr.manifest_bytes(b"[" * 100_000 + b"]" * 100_000), REPORT, 2,
         "not valid JSON"),
    Case("tables-manifest-not-utf8", fr.manifest_bytes(b'{"run_id": "caf\xe9"}'), REPORT, 2,
         "not valid JSON"),
    Case("tables-manifest-status-number", _patch(status=1), REPORT, 2, "'status' must be text"),
    Case("tables-sha-not-hex", _sha("metrics", {"sha256": "zz", "rows": 1}), REPORT, 2,
         "64 hex digits"),
    Case("tables-rows-negative", _sha("metrics", {"sha256": "0" * 64, "rows": -1}), REPORT, 2,
         "must be a count"),
    Case("tables-bad-table-name", _sha("../x", {"sha256": "0" * 64, "rows": 1}), REPORT, 2,
         "bad table name"),
    Case("tables-recorded-but-missing", _sha("answers", {"sha256": "0" * 64, "rows": 1}), REPORT, 2,
         "answers.parquet is missing"),
    Case("tables-hash-mismatch-gate", _sha("metrics", {"sha256": "0" * 64, "rows": 1}),
         (*GATE, "s1"), 2, "does not match the hash"),
    Case("tables-baseline-of-running-run", fr.gate_pair(status="running"),
         ("rulegauge", "baseline", "save", "cand", "b1", "--runs-dir", R, "--dir", "{root}/b"), 2,
         "not complete"),
    Case("tables-gate-base-failed", fr.gate_pair(status="failed"),
         ("rulegauge", "gate", "--runs-dir", R, "-b", "cand", "-p", "{root}/policy.toml", "-r",
          "base"), 2, "base run cand is not complete (status 'failed')"),
    Case("tables-questions-without-metrics", fr.table_columns("questions", drop=["answerable"]),
         REPORT, 2, "questions.parquet lacks the declared column(s) answerable"),
    # --- sizes & counts ------------------------------------------------------------------
    Case("sizes-goldset-300mib", fr.big_file("", 300 << 20, goldset=True), VALIDATE, 2,
         "the gold set is 314,572,800 bytes"),
    Case("sizes-jsonl-long-line", fi.jsonl_document(['{"page": 1, "text": "' + "a" * (5 << 20)
                                                     + '"}']), VALIDATE, 2, "a line of"),
    Case("sizes-retries", fi.tiny, (*RUN, "-a", "t1=ollama", "-p", "t1.retries=1000000"), 2,
         "retries=1000000 must be between 0 and 20", no_runs=True),
    Case("sizes-max-fused-rows", fi.tiny, (*RUN, "--max-fused-rows", "100000000000"), 2,
         "max_fused_rows must be between 0 and 1,000,000,000", no_runs=True),
    Case("sizes-policy-resamples", lambda root: (fr.gate_pair()(root), fi.write(
        root, "policy.toml", fr.POLICY.replace("n_resamples = 200", "n_resamples = 1000000000"))),
        (*GATE, "cand", "--force"), 2, "resamples must be between 1 and 1,000,000"),
    Case("sizes-query-max-rows-zero", fi.runs, (*QUERY, "--max-rows", "0", "select 1"), 2,
         "--max-rows must be between 1"),
    Case("sizes-query-timeout-negative", fi.runs, (*QUERY, "--timeout", "-1", "select 1"), 2,
         "--timeout must be within"),
    Case("sizes-query-memory-word", fi.runs, (*QUERY, "--memory-limit", "lots", "select 1"), 2,
         "give a size such as 2GB"),
    Case("sizes-deep-jsonl-page", fi.jsonl_document(["[" * 100_000 + "]" * 100_000]), VALIDATE, 2,
         "nested too deeply"),
    # --- HTTP ----------------------------------------------------------------------------
    Case("http-answer-deep-json", lambda root: None, ASK, 0, "nested too deeply",
         server="deep-json"),
    Case("http-answer-gzip-bomb", lambda root: None, ASK, 0, "error", server="gzip-bomb"),
    Case("http-answer-redirect", lambda root: None, ASK, 0, "redirect (HTTP 302) to another host refused",
         server="redirect"),
    Case("http-answer-401-echo", lambda root: None, ASK, 0, "Bearer ***", server="echo-401",
         absent=SECRET),
    Case("http-answer-not-utf8", lambda root: None, ASK, 0, "not valid UTF-8", server="not-utf8"),
    Case("http-answer-huge-length", lambda root: None, ASK, 0, "over the cap",
         server="huge-length"),
    Case("http-preflight-headers-trickle", fi.tiny, (*PREFLIGHT[:-2], "-p", "t1.base_url={url}",
                                                      "-p", "t1.timeout_s=2", "-p", "t1.retries=0"), 2,
         "total deadline", server="headers-trickle", no_runs=True, timeout_s=120),
    Case("http-preflight-not-utf8", fi.tiny, PREFLIGHT, 2, "did not return a model list",
         server="not-utf8", no_runs=True),
    # --- unicode & ids ---------------------------------------------------------------------
    Case("ids-bom-in-doc-id", _doc("r\ufeffb", "r\ufeffb"), VALIDATE, 2, "U+FEFF"),
    Case("ids-rtl-override-question", _q("q\u202e1"), VALIDATE, 2, "U+202E"),
    Case("ids-nfd-doc-ids-duplicate", lambda root: fi.with_goldset(fi.goldset_text(documents=(
        '  - {id: "caf\u00e9", path: docs/rules.txt, kind: rulebook, game: H, edition: e, '
        "language: en}\n"
        '  - {id: "cafe\u0301", path: docs/rules.txt, kind: errata, game: H, edition: e, '
        "language: en}\n")))(root), VALIDATE, 2, "duplicate document id"),
    Case("ids-nfd-reference-to-nfc-doc", _doc("caf\u00e9", "cafe\u0301"), VALIDATE, 0, "OK"),
    Case("ids-soft-hyphen", _q("q\u00ad1"), VALIDATE, 2, "U+00AD SOFT HYPHEN"),
    Case("ids-beir-doc-id-twice", _beir('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n'), BEIR, 2,
         "corpus.jsonl:2: _id 'a' appears twice", no_runs=True, after=_no_out),
    Case("ids-beir-qrel-unknown-doc", _beir('{"_id": "a", "text": "x"}\n', "q1\tzz\t1\n"), BEIR, 2,
         "test.tsv:2: document 'zz' is not in corpus.jsonl", no_runs=True, after=_no_out),
    Case("sizes-beir-deep-json", _beir("[" * 100_000 + "]" * 100_000 + "\n"), BEIR, 2,
         "corpus.jsonl:1", no_runs=True, after=_no_out),
    # --- concurrency -----------------------------------------------------------------------
    Case("conc-gate-on-locked-run", fr.held_lock(), (*GATE, "cand"), 2, "still being written",
         after=fr.after_stop_holder),
    # --- SQL -----------------------------------------------------------------------------------
    Case("sql-set-memory-limit", fi.runs, (*QUERY, "set memory_limit = '100GB'"), 2,
         "query failed"),
    Case("sql-read-parquet-outside", fi.runs, (*QUERY, "select * from read_parquet('/etc/x.parquet')"),
         2, "query failed"),
    Case("sql-recursive-cte", fi.runs, (*QUERY, "--timeout", "2", "with recursive t(n) as (select 1 "
                                        "union all select n + 1 from t) select count(*) from t"), 2,
         "query stopped"),
    Case("sql-temp-spill", fi.runs, (*QUERY, "--memory-limit", "50MB", "select count(*) from "
                                     "(select distinct range from range(50000000))"), 2,
         "needs more than 50MB"),
)
