"""Fault-tier rows of issue 33, item 4: no output over an input. Every command with ``-o``
is given one of its own inputs as its output (the same path, ``a/../b``, a symbolic link
or a hard link to it): exit 2 naming both, and the input unchanged afterwards.

``OUTPUT_ROWS`` maps each command (as ``rulegauge list`` spells it) to its rows' ids, so
``tests/cli/test_outputs.py`` can check that every command with ``-o`` has a row.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_issue25 import R

Build = Callable[[Path], None]
JUDGMENTS = ('{"question_id": "q1", "page": "rb#2", "grade": 2, "judge_kind": "human", '
             '"judge_id": "ann"}\n')
QRELS = "q1 0 rb#2 2\n"
QUESTIONS = "q1\tHow far does a boat move?\ten\n"
POOL = '{"kind": "pool", "questions": 0}\n'
PROPOSALS = '{"kind": "proposals"}\n'
SUITE = '[answerers.j]\nkind = "openai"\nmodel = "m"\n'
PDF = b"%PDF-1.4 not really\n"
FILES: dict[str, str | bytes] = {"j.jsonl": JUDGMENTS, "q.qrels": QRELS, "qs.tsv": QUESTIONS,
                                 "pool.jsonl": POOL, "p.jsonl": PROPOSALS, "d.jsonl": JUDGMENTS,
                                 "suite.toml": SUITE, "rules.pdf": PDF}


def inputs(root: Path) -> None:
    """The tiny gold set and one file of each kind the commands read."""
    fi.tiny(root)
    for name, body in FILES.items():
        fi.write(root, name, body)


def _linked(kind: str, alias: str, target: str, base: Build = inputs) -> Build:
    def build(root: Path) -> None:
        base(root)
        if kind == "symlink":
            (root / alias).symlink_to(root / target)
        else:
            os.link(root / target, root / alias)
    return build


def _run(root: Path) -> None:
    fr.real_run(root, "a1")


def intact(*names: str) -> Callable[[Path], None]:
    """After: each named input holds what :func:`inputs` wrote."""
    def check(root: Path) -> None:
        for name in names:
            expected = FILES.get(name, fi.goldset_text() if name == "g.yaml" else fi.RULES)
            got = (root / name).read_bytes()
            assert got == (expected if isinstance(expected, bytes) else expected.encode()), name
    return check


def _after_run(root: Path) -> None:
    fr.after_complete("a1")(root)
    intact("g.yaml")(root)


SAME = "is the input"
LINK = "by another name or through a link"
RUNS = ("--runs-dir", R)

OUTPUTS: tuple[Case, ...] = (
    Case("output-goldset-merge-judgments", inputs, ("rulegauge", "goldset", "merge", "{root}/g.yaml",
         "{root}/j.jsonl", "-o", "{root}/j.jsonl"), 2, SAME, after=intact("j.jsonl")),
    Case("output-goldset-merge-gold-symlink", _linked("symlink", "new.yaml", "g.yaml"),
         ("rulegauge", "goldset", "merge", "{root}/g.yaml", "{root}/j.jsonl", "-o",
          "{root}/new.yaml"), 2, LINK, after=intact("g.yaml", "j.jsonl")),
    Case("output-goldset-merge-dotdot", inputs, ("rulegauge", "goldset", "merge", "{root}/g.yaml",
         "{root}/j.jsonl", "-o", "{root}/docs/../g.yaml"), 2, SAME, after=intact("g.yaml")),
    Case("output-goldset-import-beir", inputs, ("rulegauge", "goldset", "import-beir", "{root}/docs", "-o",
         "{root}/docs"), 2, SAME, after=intact("docs/rules.txt")),
    Case("output-goldset-import-trec", inputs, ("rulegauge", "goldset", "import-trec", "{root}/qs.tsv",
         "{root}/q.qrels", "--corpus", "{root}/qs.tsv", "-o", "{root}/q.qrels"), 2, SAME,
         after=intact("q.qrels")),
    Case("output-goldset-from-qrels", inputs, ("rulegauge", "goldset", "from-qrels", "{root}/q.qrels",
         "{root}/qs.tsv", "--documents", "{root}/g.yaml", "-o", "{root}/qs.tsv"), 2, SAME,
         after=intact("qs.tsv")),
    Case("output-goldset-from-outline-hardlink", _linked("hard", "copy.pdf", "rules.pdf"),
         ("rulegauge", "goldset", "from-outline", "{root}/rules.pdf", "-o", "{root}/copy.pdf"), 2,
         LINK, after=intact("rules.pdf")),
    Case("output-goldset-migrate-over-new-edition", _linked("hard", "rules2.txt", "docs/rules.txt"),
         ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/rules2.txt",
          "-o", "{root}/rules2.txt"), 2, SAME, after=intact("docs/rules.txt", "g.yaml")),
    Case("output-goldset-migrate-over-gold-symlink", _linked("symlink", "new.yaml", "g.yaml"),
         ("rulegauge", "goldset", "migrate", "{root}/g.yaml", "--document", "rb={root}/docs/rules.txt",
          "-o", "{root}/new.yaml"), 2, LINK, after=intact("g.yaml", "docs/rules.txt")),
    Case("output-goldset-parallel", inputs, ("rulegauge", "goldset", "parallel", "--doc",
         "en={root}/docs/rules.txt", "--ask", "en", "-o", "{root}/docs/rules.txt"), 2, SAME,
         after=intact("docs/rules.txt")),
    Case("output-goldset-generate", inputs, ("rulegauge", "goldset", "generate",
         "{root}/docs/rules.txt", "-a", "extractive", "-o", "{root}/docs/rules.txt"), 2, SAME,
         after=intact("docs/rules.txt")),
    Case("output-goldset-generate-gold-document", inputs, ("rulegauge", "goldset", "generate",
         "{root}/g.yaml", "-a", "extractive", "-o", "{root}/docs/rules.txt"), 2, SAME,
         after=intact("docs/rules.txt", "g.yaml")),
    Case("output-goldset-accept", inputs, ("rulegauge", "goldset", "accept", "{root}/p.jsonl",
         "{root}/d.jsonl", "-o", "{root}/d.jsonl"), 2, SAME, after=intact("d.jsonl", "p.jsonl")),
    Case("output-judges-llm", inputs, ("rulegauge", "judges", "llm", "{root}/pool.jsonl", "--suite",
         "{root}/suite.toml", "-o", "{root}/pool.jsonl"), 2, SAME, after=intact("pool.jsonl")),
    Case("output-judges-llm-summary-over-suite", _linked("symlink", "x.summary.json", "suite.toml"),
         ("rulegauge", "judges", "llm", "{root}/pool.jsonl", "--suite", "{root}/suite.toml", "-o",
          "{root}/x"), 2, LINK, after=intact("suite.toml")),
    Case("output-judges-overlap", inputs, ("rulegauge", "judges", "overlap", "{root}/pool.jsonl", "-o",
         "{root}/pool.jsonl"), 2, SAME, after=intact("pool.jsonl")),
    Case("output-judges-export", inputs, ("rulegauge", "judges", "export", "{root}/j.jsonl", "-o",
         "{root}/j.jsonl"), 2, SAME, after=intact("j.jsonl")),
    Case("output-judges-import", inputs, ("rulegauge", "judges", "import", "{root}/q.qrels",
         "--judge", "ann", "-o", "{root}/q.qrels"), 2, SAME, after=intact("q.qrels")),
    Case("output-pool-over-goldset", _run, ("rulegauge", "pool", "a1", *RUNS, "-o", "{root}/g.yaml"),
         2, SAME, after=_after_run),
    Case("output-report-over-manifest", _run, ("rulegauge", "report", "a1", *RUNS, "-o",
         "{root}/runs/a1/manifest.json"), 2, SAME, after=_after_run),
    Case("output-report-over-goldset-hardlink", _linked("hard", "g2.yaml", "g.yaml", _run),
         ("rulegauge", "report", "a1", *RUNS, "-o", "{root}/g2.yaml"), 2, LINK, after=_after_run),
    Case("output-export-over-run", _run, ("rulegauge", "export", "a1", *RUNS, "-o", "{root}/runs/a1"),
         2, SAME, after=_after_run),
    Case("output-export-over-table-symlink", _linked("symlink", "t.parquet", "runs/a1/metrics.parquet",
                                                     _run),
         ("rulegauge", "export", "a1", *RUNS, "-o", "{root}/t.parquet"), 2, LINK, after=_after_run),
)



def _raw_break(char: str) -> Build:
    """Judgments whose note holds a raw Unicode line break (written by another tool)."""
    def build(root: Path) -> None:
        inputs(root)
        fi.write(root, "j.jsonl", JUDGMENTS.replace('"judge_id"', f'"note": "a{char}b", "judge_id"'))
    return build


# issue 33, item 3: JSON lines split on \n only (a raw U+2028 / U+2029 / U+0085 is text)
JSONL: tuple[Case, ...] = tuple(
    Case(f"jsonl-raw-{name}-in-a-note", _raw_break(char), ("rulegauge", "judges", "export",
         "{root}/j.jsonl", "-o", "{root}/out.qrels"), 0, "1 judged pairs")
    for name, char in (("u2028", "\u2028"), ("u2029", "\u2029"), ("u0085", "\x85")))

OUTPUT_ROWS: dict[str, tuple[str, ...]] = {}
for _case in OUTPUTS:
    _words = [w for w in _case.argv[1:3] if not w.startswith("{")]
    _command = " ".join(_words if _words[0] in ("goldset", "judges") else _words[:1])
    OUTPUT_ROWS[_command] = (*OUTPUT_ROWS.get(_command, ()), _case.id)
