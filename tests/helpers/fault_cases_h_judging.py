"""Fault-tier rows of issue 46, items 1-3: the blind judging page's seed and the judgments
file's view, the automatic judges, prediction-powered intervals. Each id names the item
it replays (``i46-1-...`` is item 1). Every refusal exits 2 naming the file and line, the
option or the run, with nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_cred import cut_pool

HUMAN = {"question_id": "q1", "page": "rb#2", "grade": 1, "judge_kind": "human",
         "judge_id": "ann"}


def judged(extra: dict[str, object]):  # type: ignore[no-untyped-def]
    """Builder: two judgments files, the first line of ``a.jsonl`` carrying ``extra``."""
    def build(root: Path) -> None:
        fi.write(root, "a.jsonl", json.dumps({**HUMAN, **extra}) + "\n")
        fi.write(root, "b.jsonl", json.dumps({**HUMAN, "judge_id": "bob"}) + "\n")
    return build


def not_written(name: str):  # type: ignore[no-untyped-def]
    def check(root: Path) -> None:
        assert not (root / name).exists(), name
    return check


AGREEMENT = ("rulegauge", "judges", "agreement", "{root}/a.jsonl", "{root}/b.jsonl")

H_JUDGING: tuple[Case, ...] = (
    # --- item 1: the blind order's seed is bounded where it enters; a view is one of two -----
    Case("i46-1-judge-seed-negative", cut_pool(7), ("rulegauge", "judge", "{root}/p.jsonl",
                                                    "--seed", "-1", "--port", "0"),
         2, "--seed"),
    Case("i46-1-judge-seed-too-big", cut_pool(7), ("rulegauge", "judge", "{root}/p.jsonl",
                                                   "--seed", str(2**32), "--port", "0"),
         2, "--seed"),
    Case("i46-1-judgments-view-unknown", judged({"view": "peeking"}), AGREEMENT, 2,
         "a.jsonl:1: view must be one of blind, unblinded, got 'peeking'"),
    Case("i46-1-judgments-order-seed-huge", judged({"order_seed": 10**60}), AGREEMENT, 2,
         "a.jsonl:1: order_seed must be an integer 0..4294967295"),
    # --- item 2: the model-free judge reads pools as strictly as the others ----------------
    Case("i46-2-overlap-pool-cut-short", cut_pool(3), ("rulegauge", "judges", "overlap",
                                                       "{root}/p.jsonl", "-o", "{root}/o.jsonl"),
         2, "p.jsonl", after=not_written("o.jsonl")),
    Case("i46-2-overlap-output-over-its-pool", cut_pool(7), (
        "rulegauge", "judges", "overlap", "{root}/p.jsonl", "-o", "{root}/p.jsonl"), 2,
        "p.jsonl"),
    # --- item 3: PPI needs a run; --human and --auto go together in the report -------------
    Case("i46-3-ppi-unknown-run", judged({}), (
        "rulegauge", "judges", "ppi", "nope", "--human", "{root}/a.jsonl", "--auto",
        "{root}/b.jsonl", "--runs-dir", "{root}/runs"), 2, "nope"),
    Case("i46-3-ppi-level-out-of-range", judged({}), (
        "rulegauge", "judges", "ppi", "nope", "--human", "{root}/a.jsonl", "--auto",
        "{root}/b.jsonl", "--level", "1.5"), 2, "--level"),
)
