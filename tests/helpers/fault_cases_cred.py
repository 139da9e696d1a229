"""Fault-tier rows of issue 33, items 2 and 9: credentials (redaction keeps places) and
the smaller cases: a pool cut short, an unbounded pool depth, every problem of a
judgments file at once.

The echoing-endpoint case of item 2 (every file and all output searched for every
8-character piece of each planted secret) is ``tests/faults/test_credentials.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case

MERGE = ("rulegauge", "goldset", "merge", "{root}/g.yaml")
JUDGED = ('{{"question_id": "{q}", "page": "{page}", "grade": {grade}, "judge_kind": "{kind}", '
          '"judge_id": "{judge}"}}\n')
BAD_LINES = (JUDGED.format(q="q1", page="rb#2", grade=7, kind="human", judge="ann")
             + "[1]\n"
             + JUDGED.format(q="q9", page="rb#2", grade=1, kind="human", judge="ann")
             + JUDGED.format(q="q1", page="rb#9", grade=1, kind="human", judge="bob")
             + JUDGED.format(q="q1", page="rb#1", grade=1, kind="robot", judge="bob"))


def cut_pool(keep: int):  # type: ignore[no-untyped-def]
    """Builder: a pool of 1 question and 3 pages with only its first ``keep`` lines."""
    def build(root: Path) -> None:
        from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion, write_pool

        found = (FoundBy("r1", "bm25", "arm", 1),)
        pages = tuple(PoolPage("q1", f"rb#{n}", found, f"Page {n}.") for n in (1, 2, 3))
        pool = Pool("hostile", "g.yaml", "0" * 64, ("r1",), 10, (),
                    (PoolQuestion("q1", "How far?", "en", ()),), pages)
        write_pool(pool, root / "p.jsonl")
        lines = (root / "p.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        (root / "p.jsonl").write_text("".join(lines[:keep]), encoding="utf-8")
        fi.write(root, "s.toml", '[suite]\nname = "s"\n')
    return build


def judgments(name: str, text: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> None:
        fi.tiny(root)
        fi.write(root, name, text)
    return build


def goldset_in(folder: str):  # type: ignore[no-untyped-def]
    """Builder: the tiny gold set, with a duplicate key, inside ``folder``."""
    def build(root: Path) -> None:
        fi.tiny(root / folder, head="version: 1\n")
    return build


CRED: tuple[Case, ...] = (
    # --- item 9: a pool cut short is refused, naming the file and both counts ----------
    Case("pool-cut-short-judge", cut_pool(3), ("rulegauge", "judge", "{root}/p.jsonl", "--port",
                                               "0"), 2,
         "p.jsonl:1: the header says 3 pages, 1 is present: the file was cut short"),
    Case("pool-cut-short-judges-llm", cut_pool(2), ("rulegauge", "judges", "llm",
                                                    "{root}/p.jsonl", "--suite", "{root}/s.toml",
                                                    "-o", "{root}/llm.jsonl"), 2,
         "the header says 3 pages, 0 are present"),
    Case("pool-torn-last-line", lambda root: (cut_pool(5)(root), fi.write(
        root, "p.jsonl", (root / "p.jsonl").read_text(encoding="utf-8")[:-30])),
         ("rulegauge", "judge", "{root}/p.jsonl", "--port", "0"), 2,
         "the header says 3 pages, 2 are present"),
    # --- item 9: pool depth bounded like every depth (core/limits) ---------------------
    Case("pool-depth-1e9", fi.runs, ("rulegauge", "pool", "good", "--runs-dir", "{root}/runs",
                                     "--depth", "1000000000", "-o", "{root}/p.jsonl"), 2,
         "--depth: depth must be between 1 and 10,000, got 1,000,000,000"),
    # --- item 9: goldset merge reports every line's problems at once, in line order ------
    Case("merge-every-line-at-once", judgments("j.jsonl", BAD_LINES),
         (*MERGE, "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2,
         "cannot merge these judgments (5 problem(s)):"),
    Case("merge-checks-the-good-lines-too", judgments("j.jsonl", BAD_LINES),
         (*MERGE, "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2,
         "j.jsonl:4: question q1: page 9 out of range for rb (1-3)"),
    # --- item 9: redaction keeps the places in messages --------------------------------
    Case("redact-keeps-line-number", judgments("secret", '{"question_id": "q1"}\n[1]\n'),
         (*MERGE, "{root}/secret", "-o", "{root}/g2.yaml"), 2, "secret:2: expected a JSON object",
         absent="secret:***"),
    Case("redact-keeps-dated-folder", goldset_in("pk-20241203"),
         ("rulegauge", "validate", "{root}/pk-20241203/g.yaml"), 2,
         "pk-20241203/g.yaml:3: duplicate key 'version'", absent="pk-***"),
    Case("redact-still-masks-keys", judgments("j.jsonl", JUDGED.format(
        q="q1", page="sk-live4f9Qz81Lw#1", grade=1, kind="human", judge="ann")),
         (*MERGE, "{root}/j.jsonl", "-o", "{root}/g2.yaml"), 2, "'sk-***", absent="live4f9Qz81Lw"),
)
