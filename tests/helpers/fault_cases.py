"""The fault tier's table: one row per hostile or broken input.

A row names an input builder (:mod:`tests.helpers.fault_inputs`), a command line
(``rulegauge ...`` or ``python ...``; ``{root}`` is the case folder, ``{url}`` the
hostile server's address), the exit code expected and a fragment the output must
hold. ``tests/faults/test_faults.py`` replays every row in a subprocess with a
timeout and also checks: no traceback, nothing written outside the case folder,
and (``no_runs``) no run folder left behind. A new loader, option or input joins
the tier with one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case


def _cfg(body: str) -> Callable[[Path], None]:
    return fi.with_config(body)


RUN = ("rulegauge", "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "--run-id", "r1",
       "-c", "{root}/c.toml")
RUN_LEX = ("rulegauge", "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "-c",
           "{root}/lexical.toml", "--run-id", "r1")
VALIDATE = ("rulegauge", "validate", "{root}/g.yaml")
QUERY = ("rulegauge", "query", "--runs-dir", "{root}/runs")
GRID = '[grid]\nk = [60]\narms = [["bm25", "boost"]]\n'
DOC_TXT = ("  - {id: rb, path: docs/rules.txt, kind: rulebook, game: Harbour, edition: en-1, "
           "language: en}\n")
Q1 = '  - {id: q1, language: en, question: "How far?", pages: [rb#2]}\n'

ASK = ("python", "-c",
       "import sys, time\n"
       "from rulegauge.answering.answerers.ollama import OllamaAnswerer\n"
       "from rulegauge.answering.requests import AnswerRequest, Passage\n"
       "a = OllamaAnswerer(model='m', base_url='{url}', timeout_s=2, retries=0)\n"
       "t = time.monotonic()\n"
       "r = a.answer(AnswerRequest('q1', 'How far?', 'en', (Passage(1, 'rb#2#0', 'rb', 2, 'Turn', 'Move three.'),)))\n"
       "took = time.monotonic() - t\n"
       "print(r.outcome, r.error, f'took {took:.1f}s')\n"
       "sys.exit(0 if took < 10 else 3)\n")

HTTP_ARM = ('[arms.live]\nkind = "http"\nurl = "http://127.0.0.1:9/search"\n'
            'body = { q = "{question}", k = "{depth}" }\nchunk = "chunk_id"\n'
            '[grid]\nk = [60]\narms = [["live"]]\n')
RUN_HTTP = (*RUN, "-p", "live.url={url}/search", "-p", "live.timeout_s=2",
            "-p", "live.max_body_bytes=100000")

BASE_CASES: tuple[Case, ...] = (
    # --- gold-set YAML -------------------------------------------------------
    Case("yaml-bomb", fi.with_goldset(fi.yaml_bomb()), VALIDATE, 2, "aliases expand to more than"),
    Case("yaml-recursive-alias", fi.with_goldset("a: &a [*a]\n" + fi.goldset_text()), VALIDATE, 2,
         "recursive alias"),
    Case("yaml-recursive-merge", fi.with_goldset("a: &a {b: 1, c: *a}\n" + fi.goldset_text()),
         VALIDATE, 2, "recursive alias"),
    Case("yaml-latin-1", fi.with_goldset(fi.goldset_text(
        questions='  - {id: q1, language: en, question: "Où va le bateau?", pages: [rb#2]}\n'
    ).encode("latin-1")), VALIDATE, 2, "g.yaml:6: not valid UTF-8"),
    Case("yaml-deep-nesting", fi.with_goldset("a: " + "[" * 20000 + "]" * 20000 + "\n"
                                              + fi.goldset_text()), VALIDATE, 2, "g.yaml"),
    Case("yaml-python-tag", fi.with_goldset("x: !!python/object/apply:os.system ['true']\n"
                                            + fi.goldset_text()), VALIDATE, 2, "not valid YAML"),
    Case("yaml-bad-date", fi.with_goldset(fi.goldset_text(head="when: 2024-13-45\n")), VALIDATE, 2,
         "not valid YAML"),
    Case("yaml-duplicate-key", fi.with_goldset(fi.goldset_text(head="version: 1\n")), VALIDATE, 2,
         "duplicate key 'version'"),
    Case("yaml-empty", fi.with_goldset(""), VALIDATE, 2, "empty file"),
    Case("yaml-top-list", fi.with_goldset("- a\n- b\n"), VALIDATE, 2, "top level must be a mapping"),
    Case("yaml-edition-number", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "en-1", "3.22"))), VALIDATE, 0, "'edition' read as text '3.22'"),
    Case("yaml-numeric-id", fi.with_goldset(fi.goldset_text(questions=Q1.replace("q1", "12"))),
         VALIDATE, 0, "'id' read as text '12'"),
    Case("yaml-missing-document", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "rules.txt", "gone.txt"))), VALIDATE, 2, "missing document file"),
    Case("goldset-outside-folder", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "docs/rules.txt", "/etc/hostname"))), VALIDATE, 2, "leads outside"),
    Case("goldset-outside-dotdot", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "docs/rules.txt", "../../../etc/passwd"))), (*RUN_LEX,), 2, "leads outside", no_runs=True),
    Case("goldset-outside-allowed", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "docs/rules.txt", "../outside/rules.txt")), {"../outside/rules.txt": fi.RULES}),
        (*VALIDATE, "--allow-outside"), 0, "OK"),
    Case("goldset-markup-in-path", fi.with_goldset(fi.goldset_text(documents=DOC_TXT.replace(
        "docs/rules.txt", "'docs/[/b]rules[red].txt'"))), VALIDATE, 2, "docs/[/b]rules[red].txt"),
    Case("goldset-markup-in-id", fi.with_goldset(fi.goldset_text(questions=Q1.replace(
        "q1", "'[/b]q[bold]1'") + Q1.replace("q1", "'[/b]q[bold]1'"))), VALIDATE, 2,
        "question [/b]q[bold]1"),
    # --- documents ------------------------------------------------------------
    Case("blank-only-document-validate", fi.with_document("blank.txt", "   \n\f  \n"), VALIDATE, 2,
         "gives no text"),
    Case("blank-only-document-run", fi.with_document("blank.txt", "   \n\f  \n"), RUN_LEX, 2,
         "gives no text", no_runs=True),
    Case("jsonl-lone-surrogate", fi.jsonl_document(['{"page": 1, "text": "bad \\ud800 text"}']),
         VALIDATE, 2, "pages.jsonl:1: 'text' holds a lone surrogate"),
    Case("jsonl-page-1e9-int", fi.jsonl_document(['{"page": 1000000000, "text": "far"}']), RUN_LEX,
         2, "pages.jsonl:1: 'page' 1000000000 is above", no_runs=True),
    Case("jsonl-page-1e9-float", fi.jsonl_document(['{"page": 1e9, "text": "far"}']), VALIDATE, 2,
         "'page' must be an integer"),
    Case("jsonl-bad-json", fi.jsonl_document(['{"page": 1, "text": "a"', '{"page": 2}']), VALIDATE,
         2, "pages.jsonl:1: invalid JSON"),
    Case("pdf-aes256-owner-only", fi.pdf_document(encrypt_owner="owner-secret"), VALIDATE, 0,
         "OK"),
    Case("pdf-aes256-user-password", fi.pdf_document(encrypt_user="user-secret",
                                                     encrypt_owner="owner-secret"),
         VALIDATE, 2, "needs a password"),
    Case("pdf-garbage", fi.with_document("rules.pdf", b"%PDF-1.7\n garbage \x00\xff"), VALIDATE, 2,
         "not a readable PDF"),
    Case("document-latin-1-text", fi.with_document("rules.txt", "Où?\n".encode("latin-1")),
         VALIDATE, 2, "rules.txt:1: not valid UTF-8"),
    # --- fusion config --------------------------------------------------------
    Case("config-k-nan", _cfg("[defaults]\nk = nan\n" + GRID), RUN, 2, "k must be > 0 and finite",
         no_runs=True),
    Case("config-k-inf", _cfg('[grid]\nk = [inf]\narms = [["bm25"]]\n'), RUN, 2, "k must be > 0 and finite",
         no_runs=True),
    Case("config-k-string", _cfg('[grid]\nk = ["sixty"]\narms = [["bm25"]]\n'), RUN, 2,
         "k must be a number > 0, got 'sixty'", no_runs=True),
    Case("config-weight-nan", _cfg(GRID + "weights = [{bm25 = nan}]\n"), RUN, 2,
         "weight must be > 0 and finite, got nan", no_runs=True),
    Case("config-weight-string", _cfg(GRID + 'weights = [{bm25 = "heavy"}]\n'), RUN, 2,
         "weight must be a number", no_runs=True),
    Case("config-misspelt-weight", _cfg('[[configs]]\narms = ["bm25", "boost"]\n'
                                        "weight = {boost = 0.5}\n"), RUN, 2,
         "unknown key 'weight'; allowed: name, method, k,", no_runs=True),
    Case("config-unknown-section", _cfg(GRID + "[grdi]\nk = [20]\n"), RUN, 2,
         "unknown key 'grdi'; allowed: defaults, arms, grid, configs", no_runs=True),
    Case("config-depth-float", _cfg("[defaults]\ndepth = 2.5\n" + GRID), RUN, 2,
         "depth must be an integer >= 1, got 2.5", no_runs=True),
    Case("config-unknown-arm-param", _cfg("[arms.bm25]\nbogus = 1\n" + GRID), RUN, 2,
         "arm bm25: unknown parameter 'bogus'; it accepts: k1, b, epsilon", no_runs=True),
    Case("config-arm-param-type", _cfg('[arms.bm25]\nk1 = "high"\n' + GRID), RUN, 2,
         "k1 must be a number, got 'high'", no_runs=True),
    Case("config-empty-brackets-kept", _cfg(""), RUN, 2, "give a [grid] or [[configs]]",
         no_runs=True),
    Case("config-not-utf8", fi.with_config_bytes(("# caf\u00e9\n" + GRID).encode("latin-1")),
         RUN, 2, "c.toml:1: not valid UTF-8", no_runs=True),
    Case("config-cartesian-duplicates", _cfg(
        '[grid]\nk = [60]\narms = [["bm25", "boost"], ["bm25"]]\nweights = [{}, {boost = 0.5}]\n'),
        RUN, 0, "2 grid combinations give the same config rrf_k60_bm25"),
    # --- --param ---------------------------------------------------------------
    Case("param-unknown", fi.tiny, (*RUN_LEX, "-p", "bm25.bogus=1"), 2,
         "arm bm25: unknown parameter 'bogus'", no_runs=True),
    Case("param-not-a-number", fi.tiny, (*RUN_LEX, "-p", "bm25.k1=abc"), 2,
         "k1 must be a number, got 'abc'", no_runs=True),
    Case("param-nan", fi.tiny, (*RUN_LEX, "-p", "bm25.k1=nan"), 2, "k1 must be a finite number",
         no_runs=True),
    Case("param-out-of-range", fi.tiny, (*RUN_LEX, "-p", "bm25.k1=-1"), 2, "need k1 >= 0",
         no_runs=True),
    Case("param-unknown-target", fi.tiny, (*RUN_LEX, "-p", "bm52.k1=1"), 2,
         "'bm52' is neither an arm of the config", no_runs=True),
    Case("param-answerer-timeout-nan", fi.tiny, (*RUN_LEX, "-a", "t1=ollama", "-p",
                                                 "t1.timeout_s=nan"), 2,
         "answerer t1: timeout_s must be a finite number", no_runs=True),
    Case("param-malformed", fi.tiny, (*RUN_LEX, "-p", "bm25k1=2"), 2, "expected NAME.KEY=VALUE",
         no_runs=True),
    # --- run store -----------------------------------------------------------
    Case("run-id-escape", fi.tiny, (*RUN_LEX[:-2], "--run-id", "../../x"), 2, "bad run id",
         no_runs=True),
    Case("run-id-absolute", fi.tiny, (*RUN_LEX[:-2], "--run-id", "/tmp/x"), 2, "bad run id",
         no_runs=True),
    Case("rulings-run-id-escape", fi.ruling_page, ("rulegauge", "rulings", "import",
                                                   "{root}/ruling.txt", "-o", "{root}/runs",
                                                   "--run-id", "../../x"), 2, "bad run id",
         no_runs=True),
    # --- rulegauge query -------------------------------------------------------
    Case("query-truncated-parquet", fi.runs_with_truncated_table,
         (*QUERY, "select run_id, count(*) as n from metrics group by 1"), 0, "left out"),
    Case("query-bad-manifest", fi.runs_with_bad_manifest,
         (*QUERY, "select count(*) as n from metrics"), 0, "not valid JSON"),
    Case("query-copy-to", fi.runs, (*QUERY, "copy (select 1) to '{root}/../leak.csv'"), 2,
         "query failed"),
    Case("query-read-csv", fi.runs, (*QUERY, "select * from read_csv('/etc/passwd')"), 2,
         "query failed"),
    Case("query-install", fi.runs, (*QUERY, "install httpfs"), 2, "query failed"),
    Case("query-attach", fi.runs, (*QUERY, "attach '{root}/../x.db' as x"), 2, "query failed"),
    Case("query-unlock", fi.runs, (*QUERY, "set enable_external_access = true"), 2,
         "query failed"),
    # --- answerer HTTP -------------------------------------------------------
    Case("http-trickle", lambda root: None, ASK, 0, "total deadline", server="trickle"),
    # --- the http arm: exit 2 before any run folder ---------------------------
    Case("http-arm-down", _cfg(HTTP_ARM), RUN, 2,
         "arm live (http): POST http://127.0.0.1:9/search, question q1: ", no_runs=True),
    Case("http-arm-trickle", _cfg(HTTP_ARM), RUN_HTTP, 2, "no complete reply within the total deadline",
         no_runs=True, server="trickle"),
    Case("http-arm-endless", _cfg(HTTP_ARM), RUN_HTTP, 2, "over the cap of 100000 bytes",
         no_runs=True, server="endless"),
    Case("http-arm-placeholder", _cfg(HTTP_ARM.replace("{question}", "{qestion}")), RUN, 2,
         "unknown placeholder {qestion}; allowed: {question}", no_runs=True),
    Case("http-endless", lambda root: None, ASK, 0, "over the cap of", server="endless"),
    # --- ingest --------------------------------------------------------------
    Case("ingest-unrelated-jsonl", fi.ingest_folder, ("rulegauge", "ingest", "{root}/folder"), 0,
         "analytics.jsonl: skipped"),
    Case("ingest-missing", lambda root: None, ("rulegauge", "ingest", "{root}/nothing"), 2,
         "no such file or folder"),
    # --- judgments, pools, qrels of judgments ----------------------------------
    Case("judged-grade-9", fi.with_goldset(fi.goldset_text(questions=(
        '  - {id: q1, language: en, question: "How far?", pages: [rb#2],\n'
        "     judged: [{ref: rb#1, grade: 9, kind: human, judge: ann}]}\n"))), VALIDATE, 2,
         "g.yaml:7: question q1: judged: grade must be an integer 0-3"),
    Case("judgments-bad-lines", lambda root: (fi.tiny(root), fi.write(
        root, "j.jsonl", '{"question_id": "q1", "page": "rb#2", "grade": 7, "judge_kind": '
        '"human", "judge_id": "ann"}\n[1]\n')), ("rulegauge", "goldset", "merge", "{root}/g.yaml",
         "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2, "j.jsonl:2: expected a JSON object"),
    Case("judgments-unknown-question", lambda root: (fi.tiny(root), fi.write(
        root, "j.jsonl", '{"question_id": "q9", "page": "rb#2", "grade": 1, "judge_kind": '
        '"human", "judge_id": "ann"}\n')), ("rulegauge", "goldset", "merge", "{root}/g.yaml",
         "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2, "j.jsonl:1: unknown question 'q9'"),
    Case("pool-not-a-pool", lambda root: fi.write(root, "p.jsonl", '{"type": "page"}\n'),
         ("rulegauge", "judge", "{root}/p.jsonl", "--port", "0"), 2, "p.jsonl:1: not a pool file"),
    # --- goldset migrate: a new edition that holds nothing, the same file, a bad option
    Case("migrate-empty-edition", lambda root: (fi.tiny(root), fi.write(root, "docs/rules-2.txt", "")),
         ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/docs/rules-2.txt",
          "-o", "{root}/g2.yaml"), 2, "has no text"),
    Case("migrate-same-file", fi.tiny, ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document",
                                        "rb={root}/docs/rules.txt", "-o", "{root}/g2.yaml"), 2,
         "same file as the gold set's"),
    Case("migrate-bad-option", fi.tiny, ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document",
                                         "rb", "-o", "{root}/g2.yaml"), 2, "expected ID=NEW_FILE"),
    Case("judgment-qrels-grade", lambda root: fi.write(root, "q.qrels", "q1 0 rb#2 7\n"),
         ("rulegauge", "judges", "import", "{root}/q.qrels", "--judge", "ann", "-o",
          "{root}/j.jsonl"), 2, "q.qrels:1: relevance 7 outside 0-3"),
)

from tests.helpers.fault_cases_cred import CRED  # noqa: E402
from tests.helpers.fault_cases_h_contracts import H_CONTRACTS  # noqa: E402
from tests.helpers.fault_cases_h_door import H_DOOR_CASES  # noqa: E402
from tests.helpers.fault_cases_h_foreign import H_FOREIGN  # noqa: E402
from tests.helpers.fault_cases_h_imports import H_IMPORTS  # noqa: E402
from tests.helpers.fault_cases_h_judging import H_JUDGING  # noqa: E402
from tests.helpers.fault_cases_h_outputs import H_OUTPUTS  # noqa: E402
from tests.helpers.fault_cases_h_stats import STATS  # noqa: E402
from tests.helpers.fault_cases_h_wheel import H_WHEEL  # noqa: E402
from tests.helpers.fault_cases_issue25 import ISSUE25  # noqa: E402 (the tables build on RUN etc.)
from tests.helpers.fault_cases_outputs import JSONL, OUTPUTS  # noqa: E402
from tests.helpers.fault_cases_plugins import PLUGIN_CASES  # noqa: E402
from tests.helpers.fault_cases_round2 import ROUND2  # noqa: E402
from tests.helpers.fault_cases_slices import SLICES  # noqa: E402

CASES: tuple[Case, ...] = (
    BASE_CASES + ISSUE25 + ROUND2 + OUTPUTS + JSONL + CRED + PLUGIN_CASES
    + H_IMPORTS
    + SLICES
    + H_DOOR_CASES
    + H_WHEEL
    + H_CONTRACTS
    + STATS
    + H_FOREIGN
    + H_JUDGING
    + H_OUTPUTS
)
