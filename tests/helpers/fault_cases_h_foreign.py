"""Fault-tier rows of issue 43, item 12 and issue 42, item 1: what an ``http`` arm's replay
journal may hold, and a service replying with ids that match no chunk.

Each row's ``http`` arm replays a journal the builder writes (``replay = ...``: nothing is
asked, so no server runs): one record per question of the tiny gold set, keyed on the request
the arm makes (:meth:`rulegauge.arms.http.HttpArm.prepare_request`). A record's ``latency_ms``
of -5000, ``Infinity`` or a 320-digit integer is exit 2 naming the journal file and line,
before any run folder exists (43.12: it was stored, and a ``search_p50_ms`` gate passed on it,
or a traceback); a record's ``latency_ms`` of null (a failed call, an older journal) is fine.
Ids that match no chunk under ``on_unmatched = "error"`` stop the run naming them; an id that
cannot be kept as a foreign hit (control characters) stops it under the default ``keep``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case

RUN = ("rulegauge", "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "--run-id", "r1", "-c", "{root}/c.toml")
URL = "http://127.0.0.1:9/search"  # never asked: every request is replayed


def _grid(root: Path, rule: str) -> str:
    return f'''[defaults]
k = 60
depth = 10
[arms.live]
kind = "http"
url = "{URL}"
body = {{ q = "{{question}}" }}
doc = "doc"
page = "page"
score = "score"
replay = "{root / "rec.jsonl"}"
{f'on_unmatched = "{rule}"' if rule else ""}
[grid]
k = [60]
arms = [["live"]]
'''


def _record(root: Path, hits: list[dict[str, Any]], latency: str) -> str:
    """The journal line of the tiny gold set's question ``q1`` (``latency``: its JSON text)."""
    from rulegauge.arms.http import HttpArm  # deferred: the builders run in the test process
    from rulegauge.arms.http_reply import fields_of
    from rulegauge.goldset.parse import load_goldset

    arm = HttpArm(url=URL, body={"q": "{question}"}, doc="doc", page="page", score="score")
    question = load_goldset(root / "g.yaml").questions[0]
    req = arm.prepare_request(question, 10)
    rec = {"key": req.key, "question_id": question.question_id, "request": dict(req.shown), "status": 200,
           "fields": fields_of(arm.shape), "hits": hits, "error": None, "attempts": 1, "elapsed_ms": 5.0}
    return json.dumps(rec)[:-1] + f', "latency_ms": {latency}}}\n'


def replayed(latency: str, hits: list[dict[str, Any]] | None = None, rule: str = "") -> Callable[[Path], None]:
    """Builder: the tiny gold set, a grid whose ``http`` arm replays ``rec.jsonl``, and that
    journal with one record (its hits, and ``latency`` as the JSON text of ``latency_ms``)."""
    def build(root: Path) -> None:
        fi.tiny(root)
        fi.write(root, "c.toml", _grid(root, rule))
        fi.write(root, "rec.jsonl", _record(root, hits or [{"id": "rb#2", "score": 1.0, "ranks": {}}], latency))
    return build


def _after_failed(root: Path) -> None:
    manifest = json.loads((root / "runs" / "r1" / "manifest.json").read_text())
    assert manifest["status"] == "failed", manifest.get("status")
    assert not (root / "runs" / "r1" / "arm_ranks.parquet").exists()


FOREIGN = [{"id": "other-game#5", "score": 2.0, "ranks": {}}, {"id": "rb#2", "score": 1.0, "ranks": {}}]
LINE = "rec.jsonl:1: latency_ms must be"

H_FOREIGN: tuple[Case, ...] = (
    Case("#43.12-replay-latency-negative", replayed("-5000"), RUN, 2,
         f"{LINE} a finite number within 0..3,600,000 ms, got -5000", no_runs=True),
    Case("#43.12-replay-latency-infinite", replayed("Infinity"), RUN, 2,
         f"{LINE} a finite number within 0..3,600,000 ms, got inf", no_runs=True),
    Case("#43.12-replay-latency-320-digits", replayed("1" * 320), RUN, 2,
         f"{LINE} within 0..3,600,000 ms, got an integer of 320 digits", no_runs=True),
    Case("#43.12-replay-latency-text", replayed('"fast"'), RUN, 2,
         f"{LINE} a number or null, got 'fast'", no_runs=True),
    Case("#43.12-replay-latency-null-is-unknown", replayed("null"), RUN, 0, "run directory"),
    Case("#42.1-http-foreign-ids-on-unmatched-error", replayed("12.5", FOREIGN, "error"), RUN, 2,
         "- question q1: id 'other-game#5' matches no chunk or page of the corpus", after=_after_failed),
    Case("#42.1-http-foreign-id-with-control-characters", replayed(
        "12.5", [{"id": "other\u0007game#5", "score": 2.0, "ranks": {}}, FOREIGN[1]]), RUN, 2,
         "id 'other\\x07game#5' holds invisible or control characters (U+0007", after=_after_failed),
    Case("#42.1-http-foreign-ids-kept", replayed("12.5", FOREIGN), RUN, 0,
         "kept at their ranks as non-relevant foreign hits"),
)
