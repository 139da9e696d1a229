"""Fault-tier rows of issue 43 (outputs, races, bounds, kills, migrate), one per item replayed;
each id names its item (``o43-NN-...``).

* item 1: ``-o`` over a document a gold set names (or inside an input folder): exit 2 naming
  both, the document intact;
* items 8, 9: two writers of one target, raced deterministically: the command under test is
  stopped at its rename (a hook on :func:`rulegauge.core.atomic.rename_noreplace`) while the
  same command runs whole in another process; ours then fails at the rename, exit 2, and the
  other's output is kept whole;
* items 10, 17, 18: numbers out of bounds (``power``, a gate policy): exit 2 naming the bound;
* items 15, 16: a SIGKILLed import or run (killed in a child at a hook) leaves temporaries;
  the next import into the same folder, or the resume, removes them;
* items 21-23: ``goldset migrate``'s exit codes and its ``--review`` rows;
* item 24: a file-size limit (``RLIMIT_FSIZE``, set in the child: EFBIG, as a full disk's
  ENOSPC) while writing: exit 2 naming the file, never a temporary.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers import fault_runs as fr
from tests.helpers.common import REPO
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_issue25 import GATE, R

Build = Callable[[Path], None]
SAME = "is the input"
TEMP = ".tmp-"  # no temporary's name in any message
MAIN = "from rulegauge.cli import main\nsys.argv = ['rulegauge', *ARGV]\nmain()\n"

# --- item 1: -o over a document the gold set names ---------------------------------------
FAQ = "Errata. A boat moves up to four harbour spaces.\fFAQ. Lanterns stay lit.\n"
TWO_DOCS = ("  - {id: rb, path: docs/rules.txt, kind: rulebook, game: Harbour, edition: en-1, language: en}\n"
            "  - {id: faq, path: docs/faq.txt, kind: faq, game: Harbour, edition: en-1, language: en}\n")
JUDGED = ('{"question_id": "q1", "page": "rb#2", "grade": 2, "judge_kind": "human", '
          '"judge_id": "ann"}\n')


def _documents(root: Path) -> None:
    """A gold set naming two documents, a second edition of one, judgments and qrels."""
    fi.tiny(root, documents=TWO_DOCS)
    fi.write(root, "docs/faq.txt", FAQ)
    fi.write(root, "rules2.txt", fi.RULES.replace("Scoring.", "Scoring (revised)."))
    fi.write(root, "j.jsonl", JUDGED)
    fi.write(root, "q.qrels", "q1 0 rb#2 2\n")


def _documents_and_run(root: Path) -> None:
    fr.real_run(root, "a1")


def _intact(*names: str) -> Build:
    def check(root: Path) -> None:
        bodies = {"docs/rules.txt": fi.RULES, "docs/faq.txt": FAQ, "j.jsonl": JUDGED}
        for name in names:
            assert (root / name).read_text(encoding="utf-8") == bodies[name], name
    return check


def _absent(path: Path) -> None:
    assert not path.exists(), f"{path} was written"


def _present(path: Path) -> None:
    assert path.is_file(), f"{path} was not written"


def _beir(root: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "beir" / "tidepool", root / "tidepool")


MIGRATE = ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/rules2.txt")
OUTPUTS: tuple[Case, ...] = (
    Case("o43-01-migrate-o-over-edition", _documents, (*MIGRATE, "-o", "{root}/docs/rules.txt"), 2,
         "(document rb of the gold set", after=_intact("docs/rules.txt")),
    Case("o43-01-migrate-o-over-another-document", _documents, (*MIGRATE, "-o", "{root}/docs/faq.txt"),
         2, "(document faq of the gold set", after=_intact("docs/faq.txt")),
    Case("o43-01-merge-o-over-document", _documents, ("rulegauge", "goldset", "merge", "{root}/g.yaml",
         "{root}/j.jsonl", "-o", "{root}/docs/faq.txt"), 2, SAME, after=_intact("docs/faq.txt")),
    Case("o43-01-pool-o-over-document", _documents_and_run, ("rulegauge", "pool", "a1", "--runs-dir", R,
         "-o", "{root}/docs/rules.txt"), 2, "read by run a1", after=_intact("docs/rules.txt")),
    Case("o43-01-judges-export-o-over-document", _documents, ("rulegauge", "judges", "export",
         "{root}/g.yaml", "-o", "{root}/docs/rules.txt"), 2, SAME, after=_intact("docs/rules.txt")),
    Case("o43-01-judges-import-o-over-document", _documents, ("rulegauge", "judges", "import",
         "{root}/q.qrels", "--judge", "ann", "-g", "{root}/g.yaml", "-o", "{root}/docs/faq.txt"), 2,
         SAME, after=_intact("docs/faq.txt")),
    Case("o43-01-from-qrels-o-over-document", _documents, ("rulegauge", "goldset", "from-qrels",
         "{root}/q.qrels", "{root}/j.jsonl", "--documents", "{root}/g.yaml", "-o",
         "{root}/docs/rules.txt"), 2, SAME, after=_intact("docs/rules.txt", "j.jsonl")),
    Case("o43-01-import-o-inside-source", _beir, ("rulegauge", "goldset", "import-beir",
         "{root}/tidepool", "-o", "{root}/tidepool/out"), 2, "lies inside the input",
         after=lambda root: _absent(root / "tidepool" / "out")),
)

# --- items 8, 9: two writers of one target at once, raced deterministically ---------------
RACE = ("import subprocess, sys\n"
        "from rulegauge.core import atomic\n"
        "ARGV = sys.argv[1:]\n"
        "real, fired = atomic.rename_noreplace, []\n"
        "def other_first(src, dst):\n"
        "    if not fired:  # stopped at our rename: the same command runs whole meanwhile\n"
        "        fired.append(1)\n"
        "        done = subprocess.run([sys.executable, '-c', 'from rulegauge.cli import main; main()',"
        " *ARGV], capture_output=True, text=True)\n"
        "        print('the other process exited', done.returncode, flush=True)\n"
        "    real(src, dst)\n"
        "atomic.rename_noreplace = other_first\n" + MAIN)


def _whole_import(root: Path) -> None:
    from rulegauge.goldset.parse import load_goldset

    assert load_goldset(root / "tp" / "goldset.yaml").questions
    assert not [p.name for p in root.iterdir() if p.name.startswith(".")], "a temporary is left"


def _whole_baseline(root: Path) -> None:
    manifest = json.loads((root / "b" / "b1" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["baseline"]["name"] == "b1" and manifest["status"] == "complete"
    assert sorted(p.name for p in (root / "b").iterdir()) == ["b1"]


RACES: tuple[Case, ...] = (
    Case("o43-08-two-imports-into-one-o", _beir, ("python", "-c", RACE, "goldset", "import-beir",
         "{root}/tidepool", "-o", "{root}/tp"), 2, "tp appeared while this command ran",
         after=_whole_import, absent=TEMP),
    Case("o43-09-two-baseline-saves-at-once", fr.gate_pair(), ("python", "-c", RACE, "baseline", "save",
         "base", "b1", "--runs-dir", R, "--dir", "{root}/b"), 2, "b1 appeared while this command ran",
         after=_whole_baseline, absent=TEMP),
)

# --- items 10, 17, 18: numbers bounded where they enter ----------------------------------
POWER = ("rulegauge", "power", "base", "--runs-dir", R)


def _policy(text: str) -> Build:
    def build(root: Path) -> None:
        fr.gate_pair()(root)
        fi.write(root, "policy.toml", fr.POLICY.replace("n_resamples = 200", text))
    return build


BOUNDS: tuple[Case, ...] = (
    Case("o43-10-power-resamples-unbounded", fr.gate_pair(), (*POWER, "--resamples", "1000000000"), 2,
         "--resamples: resamples must be between 1 and 1,000,000, got 1,000,000,000"),
    Case("o43-17-policy-n-resamples-1", _policy("n_resamples = 1"), (*GATE, "cand"), 2,
         "gate.n_resamples: 1 sign patterns: the permutation test's smallest two-sided p-value is "
         "2/(1+1) = 1, never below alpha 0.05, so its significance check could never fail; use at "
         "least 40"),
    Case("o43-17-policy-n-resamples-39", _policy("n_resamples = 39"), (*GATE, "cand"), 2,
         "use at least 40"),
    Case("o43-18-power-draws-unbounded", fr.gate_pair(), (*POWER, "--draws", "1000000000"), 2,
         "--draws: draws must be between 1 and 100,000, got 1,000,000,000"),
    Case("o43-18-power-sd-overflows", fr.gate_pair(), (*POWER, "--sd", "1e308"), 2,
         "--sd: sd must be a finite number > 0 and at most 1e+06, got 1e+308"),
    Case("o43-18-policy-sd-overflows", _policy('n_resamples = 200\n[metrics."mrr@10"]\nmax_drop = 0.5\n'
                                               "sd = 1e300"), (*GATE, "cand"), 2,
         "metrics.mrr@10.sd: sd must be a finite number > 0 and at most 1e+06"),
)

# --- items 15, 16: temporaries of killed processes, swept by the next taker --------------
KILLED = ("import os, signal, subprocess, sys\n"
          "from pathlib import Path\n"
          "ARGV, HOOK = sys.argv[2:], sys.argv[1]\n"
          "CHILD = ('import os, signal, sys\\n'\n"
          "         'from rulegauge.core import atomic\\n'\n"
          "         'def die(*a, **k): os.kill(os.getpid(), signal.SIGKILL)\\n'\n"
          "         + HOOK + '\\n' + 'from rulegauge.cli import main\\n'\n"
          "         'sys.argv = [\"rulegauge\", *sys.argv[1:]]\\nmain()\\n')\n"
          "for _ in range(2):\n"
          "    p = subprocess.run([sys.executable, '-c', CHILD, *ARGV], capture_output=True, text=True)\n"
          "    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr[-2000:])\n"
          "left = [str(p) for p in Path.cwd().rglob('.*.tmp-*')]\n"
          "print('temporaries left by two killed processes (the second swept the first):', len(left), flush=True)\n"
          "assert left\n" + MAIN)
AT_RENAME = "atomic.rename_noreplace = die  # killed with its folder written whole"
AT_METRICS = ("real = atomic.fsync_path\n"
              "atomic.fsync_path = lambda p: die() if p.name.startswith('.metrics.parquet.tmp-') "
              "else real(p)  # killed writing the metrics table")


SWEPT = "temporaries left by two killed processes (the second swept the first): 1"


def _imported_and_swept(root: Path) -> None:
    _whole_import(root)
    _no_temporaries(root)


def _no_temporaries(root: Path) -> None:
    left = [str(p) for p in root.rglob("*") if ".tmp-" in p.name]
    assert not left, left


def _resumed(root: Path) -> None:
    fr.after_complete("r1")(root)
    _no_temporaries(root)


def _tiny_run(root: Path) -> None:
    fi.tiny(root)


KILLS: tuple[Case, ...] = (
    Case("o43-15-killed-imports-swept-by-the-next", _beir, ("python", "-c", KILLED, AT_RENAME, "goldset",
         "import-beir", "{root}/tidepool", "-o", "{root}/tp"), 0,
         SWEPT, after=_imported_and_swept),
    Case("o43-16-killed-run-swept-by-the-resume", _tiny_run, ("python", "-c", KILLED, AT_METRICS, "run",
         "-g", "{root}/g.yaml", "-o", R, "-c", "{root}/lexical.toml", "--run-id", "r1", "--cache-dir",
         "{root}/.cache"), 0, SWEPT, after=_resumed),
)

# --- items 21-23: goldset migrate ---------------------------------------------------------
TWO_QUESTIONS = ('  - {id: q1, language: en, question: "How do I set up and take a turn?", '
                 "pages: [rb#1, rb#2]}\n"
                 '  - {id: q2, language: en, question: "What does a lit lantern score?", pages: [rb#3]}\n')
PAGES = fi.RULES.split("\f")


def _edition(text: str | bytes, questions: str = TWO_QUESTIONS, review: str = "") -> Build:
    def build(root: Path) -> None:
        fi.tiny(root, questions=questions)
        fi.write(root, "rules2.pdf" if isinstance(text, bytes) else "rules2.txt", text)
        if review:
            fi.write(root, "rev.jsonl", review)
    return build


def _zero_page_pdf() -> bytes:
    import io

    from pypdf import PdfWriter

    out = io.BytesIO()
    PdfWriter().write(out)
    return out.getvalue()


def _nothing_written(root: Path) -> None:
    assert not (root / "g2.yaml").exists() and not (root / "g2.review.jsonl").exists()


def _review(*rows: tuple[str, str]) -> str:
    return "".join(json.dumps({"question_id": q, "page": p, "grade": 3, "judge_kind": "human",
                               "judge_id": "ann"}) + "\n" for q, p in rows)


CHANGED = PAGES[0] + "\f" + PAGES[1].replace("three", "four") + "\f" + PAGES[2]  # q1's sentence changed
ONE_QUESTION = ('  - {id: q1, language: en, question: "How far does a boat move?", pages: [rb#2]}\n'
                '  - {id: q2, language: en, question: "What does a lit lantern score?", pages: [rb#3]}\n')
NEW_RB = ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/rules2.txt",
          "-o", "{root}/g2.yaml")
MIGRATES: tuple[Case, ...] = (
    Case("o43-21-migrate-onto-blank-pages", _edition("\f\f\n"), NEW_RB, 2,
         "rules2.txt has no text (", after=_nothing_written),
    Case("o43-21-migrate-onto-a-zero-page-pdf", _edition(_zero_page_pdf()),
         ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/rules2.pdf",
          "-o", "{root}/g2.yaml"), 2, "rules2.pdf has no text (0 page(s)", after=_nothing_written),
    Case("o43-22-migrate-holding-out-exits-1", _edition(PAGES[0] + " " + PAGES[1] + "\f" + PAGES[2]),
         NEW_RB, 1, "held out q1: two of its requirements now fall on one page (pages merged)",
         after=lambda root: _present(root / "g2.yaml")),
    Case("o43-23-review-row-on-a-page-not-in-the-edition", _edition(CHANGED, ONE_QUESTION,
                                                                    _review(("q1", "rb#9"))),
         (*NEW_RB, "--review", "{root}/rev.jsonl"), 2,
         "rev.jsonl:1: question q1: page rb#9 is not a page of the new edition (rb has 3 pages)",
         after=_nothing_written),
    Case("o43-23-review-row-on-an-unflagged-question", _edition(CHANGED, ONE_QUESTION,
                                                                _review(("q1", "rb#2"), ("q2", "rb#3"))),
         (*NEW_RB, "--review", "{root}/rev.jsonl"), 2,
         "rev.jsonl:2: question q2 has no flagged label in this migration", after=_nothing_written),
)

# --- item 24: a full disk names the file --------------------------------------------------
FULL = ("import resource, sys\n"
        "ARGV = sys.argv[2:]\n"
        "limit = int(sys.argv[1])\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # writes past it: EFBIG\n" + MAIN)
TOO_LARGE = "cannot write (file too large: a file-size limit (ulimit -f)"


def _nothing_new(*names: str) -> Build:
    def check(root: Path) -> None:
        for name in names:
            assert not (root / name).exists(), name
        _no_temporaries(root)
    return check


FULL_DISK: tuple[Case, ...] = (
    Case("o43-24-full-disk-merge", _documents, ("python", "-c", FULL, "64", "goldset", "merge",
         "{root}/g.yaml", "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2, f"g2.yaml: {TOO_LARGE}",
         after=_nothing_new("g2.yaml"), absent=TEMP),
    Case("o43-24-full-disk-judges-export", _documents, ("python", "-c", FULL, "8", "judges", "export",
         "{root}/j.jsonl", "-o", "{root}/out.qrels"), 2, f"out.qrels: {TOO_LARGE}",
         after=_nothing_new("out.qrels"), absent=TEMP),
    Case("o43-24-full-disk-pool", _documents_and_run, ("python", "-c", FULL, "64", "pool", "a1",
         "--runs-dir", R, "-c", "rrf_k60_bm25+boost", "-o", "{root}/pool.jsonl"), 2, f"pool.jsonl: {TOO_LARGE}",
         after=_nothing_new("pool.jsonl"), absent=TEMP),
    Case("o43-24-full-disk-import", _beir, ("python", "-c", FULL, "1024", "goldset", "import-beir",
         "{root}/tidepool", "-o", "{root}/tp"), 2, f"tp: {TOO_LARGE}", after=_nothing_new("tp"),
         absent=TEMP),
)

H_OUTPUTS: tuple[Case, ...] = OUTPUTS + RACES + BOUNDS + KILLS + MIGRATES + FULL_DISK
assert all(c.id.startswith("o43-") for c in H_OUTPUTS) and len({c.id for c in H_OUTPUTS}) == len(H_OUTPUTS)
