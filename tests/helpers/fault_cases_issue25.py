"""Fault-tier rows for every case of issue 25 (numbered as in the issue; ``s-`` rows are
its "Smaller" list). Builders: :mod:`tests.helpers.fault_runs`, :mod:`tests.helpers.fault_inputs`.
"""

from __future__ import annotations

from tests.helpers import fault_inputs as fi
from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.hostile_server import SECRET

R = "{root}/runs"
RUN = ("rulegauge", "run", "-g", "{root}/g.yaml", "-o", R, "-c", "{root}/lexical.toml",
       "--run-id", "r1")
GATE = ("rulegauge", "gate", "--runs-dir", R, "-b", "base", "-p", "{root}/policy.toml", "-r")
QUERY = ("rulegauge", "query", "--runs-dir", R)
PREFLIGHT = (*RUN, "-a", "t1=ollama", "-p", "t1.model=m", "-p", "t1.base_url={url}")
ASK = ("python", "-c",
       "import sys, time\n"
       "from rulegauge.answering.answerers.ollama import OllamaAnswerer\n"
       "from rulegauge.answering.requests import AnswerRequest, Passage\n"
       "a = OllamaAnswerer(model='m', base_url='{url}', timeout_s=2, retries=0)\n"
       "t = time.monotonic()\n"
       "r = a.answer(AnswerRequest('q1', 'How far?', 'en', (Passage(1, 'rb#2#0', 'rb', 2, 'Turn', "
       "'Move three.'),)))\n"
       "took = time.monotonic() - t\n"
       "print(r.outcome, r.error, f'took {took:.1f}s')\n"
       "sys.exit(0 if took < 10 else 3)\n")
DOTS = "../../../../../outside/x"
BAD_ARM = f'[arms."{DOTS}"]\nkind = "bm25"\n[grid]\nk = [60]\narms = [["{DOTS}"]]\n'


def _tables(value: object) -> fr.Build:
    return fr.manifest_patch(lambda m: {**m, "tables": value})


ISSUE25: tuple[Case, ...] = (
    # --- writes outside --out, or through links ----------------------------------
    Case("i25-01-rescore-run-id-escape", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "run", "--from", "a1", "-c", "{root}/lexical.toml", "-o", R,
          "--run-id", "../../outside/esc"), 2, "bad run id"),
    Case("i25-02-arm-name-escape", fi.with_config(BAD_ARM),
         (*RUN[:-4], "-c", "{root}/c.toml", "--run-id", "r1"), 2, "bad arm name", no_runs=True),
    Case("i25-03-lock-symlink", fr.planted_link(".lock"), RUN, 2, "is a symbolic link",
         after=fr.after_victim_intact),
    Case("i25-04-partial-symlink", fr.planted_link(".partial", "outside", folder=True), RUN, 2,
         "is a symbolic link", after=fr.after_folder_empty("outside")),
    Case("i25-05-journal-symlink", fr.planted_link("answers-journal/extractive.jsonl", real="a1"),
         ("rulegauge", "answer", "a1", "-a", "extractive", "--runs-dir", R), 2,
         "is a symbolic link", after=fr.after_victim_intact),
    Case("i25-06-manifest-symlink", fr.planted_link("manifest.json"), RUN, 2, "is a symbolic link",
         after=fr.after_victim_intact),
    # --- trusting what was not checked ---------------------------------------------
    Case("i25-07-refused-rerun-keeps-complete", fr.edited_goldset, RUN, 2, "run does not match its inputs",
         after=fr.after_complete("r1")),
    Case("i25-08a-tables-empty-list-gate", _tables([]), (*GATE, "s1"), 2, "malformed manifest"),
    Case("i25-08b-tables-list-report", _tables(["metrics"]),
         ("rulegauge", "report", "s1", "--runs-dir", R, "-o", "{root}/r.html"), 2,
         "malformed manifest"),
    Case("i25-08c-tables-string-bands", _tables({"metrics": "abc"}),
         ("rulegauge", "bands", "s1", "--runs-dir", R), 2, "must be {\"sha256\""),
    Case("i25-08d-tables-string-export", fr.manifest_patch(lambda m: {**m, "tables": "x"}, "s1", real=True),
         ("rulegauge", "export", "s1", "--runs-dir", R, "-o", "{root}/trec"), 2, "'tables' must map"),
    Case("i25-08e-tables-list-compare", _tables([1, 2]),
         ("rulegauge", "compare", "base", "s1", "--runs-dir", R), 2, "malformed manifest"),
    Case("i25-09a-metrics-no-answerable-gate", fr.table_columns("metrics", drop=["answerable"]),
         (*GATE, "s1"), 2, "metrics.parquet lacks the declared column(s) answerable"),
    Case("i25-09b-fused-3-columns-report",
         fr.table_columns("fused", keep=["question_id", "config_id", "chunk_id"]),
         ("rulegauge", "report", "s1", "--runs-dir", R, "-o", "{root}/r.html"), 2,
         "fused.parquet lacks the declared column(s)"),
    Case("i25-09c-arm-ranks-columns-export",
         fr.table_columns("arm_ranks", drop=["rank"], real=True),
         ("rulegauge", "export", "s1", "--runs-dir", R, "-o", "{root}/trec"), 2,
         "arm_ranks.parquet lacks the declared column(s) rank"),
    Case("i25-10-journal-invalid-utf8", fr.journal_bytes(b'{"question_id": "q\xff"}\n'),
         ("rulegauge", "answer", "a1", "-a", "extractive", "--runs-dir", R), 2, "not valid UTF-8"),
    Case("i25-11-unrecorded-table-redone", fr.unrecorded_table, RUN, 0, "run directory",
         after=fr.after_metrics_recorded),
    # --- a gate that passes on missing data ----------------------------------------
    Case("i25-12-gate-missing-questions", fr.gate_pair(keep=1), (*GATE, "cand"), 2,
         "lacks 13 of the base's 14 questions"),
    Case("i25-13-gate-running-run", fr.gate_pair(status="running"), (*GATE, "cand"), 2,
         "is not complete (status 'running')"),
    # --- unbounded work --------------------------------------------------------------
    Case("i25-14a-preflight-endless", fi.tiny, PREFLIGHT, 2, "over the cap", server="endless",
         no_runs=True),
    Case("i25-14b-preflight-gzip-bomb", fi.tiny, PREFLIGHT, 2, "did not return a model list",
         server="gzip-bomb", no_runs=True),
    Case("i25-15a-answer-headers-trickle", lambda root: None, ASK, 0, "total deadline",
         server="headers-trickle"),
    Case("i25-15b-answer-body-trickle", lambda root: None, ASK, 0, "total deadline",
         server="trickle"),
    Case("i25-16-preflight-deep-json", fi.tiny, PREFLIGHT, 2, "did not return a model list",
         server="deep-json", no_runs=True),
    Case("i25-17a-query-endless-count", fi.runs,
         (*QUERY, "--timeout", "2", "select count(*) from range(1000000000000)"), 2,
         "ran longer than 2 s"),
    Case("i25-17b-query-self-join", fi.runs,
         (*QUERY, "--timeout", "20", "--memory-limit", "200MB",
          "select list(a.value + b.value + c.value) from metrics a, metrics b, metrics c"),
         2, "query stopped"),
    Case("i25-17c-query-many-rows", fi.runs, (*QUERY, "--max-rows", "1000",
                                              "select * from range(10000000)"), 0,
         "showing the first 1,000"),
    Case("i25-18a-document-1gib-sparse", fr.big_file("rules.txt", 1 << 30),
         ("rulegauge", "validate", "{root}/g.yaml"), 2, "above the limit"),
    Case("i25-18b-document-long-line", fi.with_document("rules.txt", b"x" * (8 << 20)),
         ("rulegauge", "validate", "{root}/g.yaml"), 2, "a line of 8,388,608 bytes"),
    Case("i25-19a-fused-depth", fi.tiny, (*RUN, "--fused-depth", "1000000000"), 2,
         "fused_depth must be between 0 and 10,000", no_runs=True),
    Case("i25-19b-config-depth", fi.with_config("[defaults]\ndepth = 1000000000\n[grid]\nk = [60]\n"
                                                'arms = [["bm25"]]\n'),
         (*RUN[:-4], "-c", "{root}/c.toml", "--run-id", "r1"), 2, "depth must be between 1 and 10,000",
         no_runs=True),
    Case("i25-19c-tune-folds", fi.runs, ("rulegauge", "tune", "good", "--runs-dir", R, "--folds",
                                         "1000000"), 2, "folds must be between 2 and 1,000"),
    Case("i25-19d-suite-concurrency", fr.suite(1_000_000),
         ("rulegauge", "answer", "a1", "-s", "{root}/suite.toml", "--runs-dir", R), 2,
         "concurrency: must be an integer between 1 and 256"),
    Case("i25-19e-workers", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "answer", "a1", "-a", "extractive", "-w", "100000", "--runs-dir", R), 2,
         "workers must be between 1 and 256"),
    Case("i25-19f-pool", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "answer", "a1", "-a", "extractive", "--pool", "100000000", "--runs-dir", R), 2,
         "pool must be between 1 and 10,000"),
    Case("i25-19g-resamples", fr.gate_pair(), ("rulegauge", "compare", "base", "cand", "--runs-dir", R, "--force",
                                               "--n-resamples", "1000000000"), 2,
         "resamples must be between 1 and 1,000,000"),
    # --- secrets and look-alikes ------------------------------------------------------
    Case("i25-20a-password-in-base-url", fi.tiny,
         (*RUN, "-a", "t1=ollama", "-p", "t1.model=m", "-p",
          "t1.base_url=http://alice:S3cretPW@{host}/ok"), 0, "run directory", server="ollama",
         absent="S3cretPW"),
    Case("i25-20b-401-echoes-bearer", fi.tiny, PREFLIGHT, 2, "Bearer ***", server="echo-401",
         absent=SECRET, no_runs=True),
    Case("i25-21a-nfc-nfd-ids", fi.with_goldset(fi.goldset_text(questions=(
        '  - {id: "caf\u00e9", language: en, question: "A?", pages: [rb#2]}\n'
        '  - {id: "cafe\u0301", language: en, question: "B?", pages: [rb#2]}\n'))),
        ("rulegauge", "validate", "{root}/g.yaml"), 2, "duplicate question id"),
    Case("i25-21b-zero-width-id", fi.with_goldset(fi.goldset_text(questions=(
        '  - {id: "q\u200b1", language: en, question: "A?", pages: [rb#2]}\n'))),
        ("rulegauge", "validate", "{root}/g.yaml"), 2, "U+200B ZERO WIDTH SPACE"),
    # --- smaller ------------------------------------------------------------------------
    Case("i25-s1-100k-questions-no-aliases", fr.many_questions(100_000),
         ("rulegauge", "validate", "{root}/g.yaml"), 0, "OK", timeout_s=300),
    Case("i25-s5a-nul-in-yaml", fi.with_goldset(fi.goldset_text(head="note: a\x00b\n")),
         ("rulegauge", "validate", "{root}/g.yaml"), 2, "g.yaml:3: a NUL byte"),
    Case("i25-s5b-linked-goldset", fr.linked_goldset, ("rulegauge", "validate", "{root}/g.yaml"), 0,
         "OK"),
    Case("i25-s5c-302-redirect", fi.tiny, PREFLIGHT, 2, "redirect (HTTP 302) to another host refused: http://elsewhere.invalid/api",
         server="redirect", no_runs=True),
)
