"""The ``replay`` answerer: recorded answers from Parquet or JSONL, scored like live ones.

A recording has one row per answer with ``question_id`` and ``text``, and
optionally ``config_id``, ``outcome``, ``model_id``, ``latency_ms``,
``tokens_in``, ``tokens_out`` and ``error`` (other columns are ignored, so a
run's ``answers`` table or a production export can be replayed as is). The
format is chosen by the file suffix: ``.parquet``, or ``.jsonl`` / ``.ndjson``
(one JSON object per line; blank lines skipped).

Conventions
-----------
* With the ``config_id`` / ``answerer`` parameters only rows with that
  ``config_id`` / ``answerer`` (label) are used; the file must then have the
  column. After filtering a question must have exactly one row: two rows are a
  validation problem (a run's ``answers`` table holds one row per question,
  config and answerer, so replay it with both filters).
* :class:`rulegauge.answering.answerers.base.AnswerRequest` carries no config, so
  one replay answerer returns the same recorded answer whatever config's read
  it is asked about: replay one config at a time.
* ``outcome`` as recorded wins (a production export knows its own abstentions);
  when absent or null it is derived from ``text`` with
  :func:`rulegauge.answering.prompt.parse_outcome`. ``error`` rows keep their
  error and must have empty text.
* ``latency_ms`` and tokens are the recorded ones (the cost of the original
  call); a row without a latency gets the measured look-up time.
* A question with no recorded row becomes an ``error`` response naming the
  question and the file; it never raises.
* Every problem in the file is collected and raised together as
  :class:`rulegauge.core.errors.ValidationError` with the file, line (JSONL) or row
  (Parquet) and question id.

Reference: record/replay testing of model outputs, as in the "cassettes" of
VCR.py (https://vcrpy.readthedocs.io).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq

from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.prompt import parse_outcome
from rulegauge.answering.requests import OUTCOMES, AnswerRequest, AnswerResponse
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.core.jsonl import read_records

REQUIRED = ("question_id", "text")
OPTIONAL = ("config_id", "outcome", "model_id", "latency_ms", "tokens_in", "tokens_out", "error")


@dataclass(frozen=True)
class Recorded:
    """One recorded answer (``latency_ms`` None when not recorded)."""

    text: str
    outcome: str
    model_id: str
    latency_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    error: str | None


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _read_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` pairs; ``where`` names the line (JSONL) or row (Parquet)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
        return [(f"{path}: row {i + 1}", r) for i, r in enumerate(rows)]
    if suffix in (".jsonl", ".ndjson"):
        problems: list[Problem] = []
        out = [(r.where, r.record) for r in read_records(path, problems)]
        if problems:
            raise ValidationError(problems, f"replay recording {path} is invalid")
        return out
    raise ConfigError(f"replay: {path} has suffix {suffix!r}; use .parquet, .jsonl or .ndjson")


def _int_or_none(v: Any, field: str, where: str, problems: list[Problem]) -> int | None:
    if _missing(v):
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v < 0 or v != int(v):
        problems.append(Problem(where, f"{field}={v!r} is not a non-negative integer"))
        return None
    return int(v)


def load_recording(path: Path, config_id: str | None = None,
                   answerer: str | None = None) -> dict[str, Recorded]:
    """Recorded answers by question id (only rows matching the given filters)."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"replay: recording {path} does not exist")
    rows = _read_rows(path)
    problems: list[Problem] = []
    filters = {k: v for k, v in (("config_id", config_id), ("answerer", answerer))
               if v is not None}
    for column, value in filters.items():
        if rows and not any(column in r for _, r in rows):
            raise ConfigError(f"replay: {column}={value!r} given but {path} has no {column}")
    scope = "".join(f" and {k} {v}" for k, v in filters.items())
    out: dict[str, Recorded] = {}
    for where, row in rows:
        if any(row.get(k) != v for k, v in filters.items()):
            continue
        qid = row.get("question_id")
        if not isinstance(qid, str) or not qid:
            problems.append(Problem(where, "question_id is missing or not a string"))
            continue
        at = f"{where}: question {qid}"
        text = row.get("text")
        text = "" if _missing(text) else text
        if not isinstance(text, str):
            problems.append(Problem(at, f"text is {type(text).__name__}, not a string"))
            continue
        outcome = row.get("outcome")
        if _missing(outcome):
            if not text.strip():
                problems.append(Problem(at, "empty text and no outcome"))
                continue
            outcome = parse_outcome(text)
        if outcome not in OUTCOMES:
            problems.append(Problem(at, f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}"))
            continue
        error = None if _missing(row.get("error")) else str(row["error"])
        if outcome == "error" and text.strip():
            problems.append(Problem(at, "an error row must have empty text"))
        if outcome != "error" and not text.strip():
            problems.append(Problem(at, f"outcome {outcome} with empty text"))
        latency = row.get("latency_ms")
        if not _missing(latency) and (isinstance(latency, bool)
                                      or not isinstance(latency, int | float) or latency < 0):
            problems.append(Problem(at, f"latency_ms={latency!r} is not a non-negative number"))
            latency = None
        rec = Recorded(
            text=text, outcome=outcome,
            model_id=str(row["model_id"]) if not _missing(row.get("model_id")) else
            f"replay:{path.name}",
            latency_ms=float(latency) if isinstance(latency, int | float) else None,
            tokens_in=_int_or_none(row.get("tokens_in"), "tokens_in", at, problems),
            tokens_out=_int_or_none(row.get("tokens_out"), "tokens_out", at, problems),
            error=(error or "recorded as an error, without a message") if outcome == "error"
            else None,
        )
        if qid in out:
            problems.append(Problem(at, f"second recorded answer for question {qid}{scope}; "
                                    "filter with config_id / answerer"))
            continue
        out[qid] = rec
    if problems:
        raise ValidationError(problems, f"replay recording {path} is invalid")
    return out


@ANSWERERS.register("replay")
class ReplayAnswerer:
    """Returns recorded answers by question id."""

    name: ClassVar[str] = "replay"

    def __init__(self, *, path: str | Path, config_id: str | None = None,
                 answerer: str | None = None) -> None:
        self.path = Path(path)
        self.config_id = config_id
        self.answerer = answerer
        self.records = load_recording(self.path, config_id, answerer)

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        start = time.perf_counter()
        rec = self.records.get(request.question_id)
        measured = (time.perf_counter() - start) * 1000.0
        if rec is None:
            scope = "".join(f" {k} {v}" for k, v in (("config", self.config_id),
                                                      ("answerer", self.answerer)) if v)
            return AnswerResponse(text="", outcome="error", model_id=f"replay:{self.path.name}",
                                  latency_ms=measured,
                                  error=f"replay: no recorded answer for question "
                                        f"{request.question_id}{scope} in {self.path}")
        return AnswerResponse(
            text=rec.text, outcome=rec.outcome, model_id=rec.model_id,
            latency_ms=rec.latency_ms if rec.latency_ms is not None else measured,
            tokens_in=rec.tokens_in, tokens_out=rec.tokens_out, error=rec.error)

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "path": str(self.path), "config_id": self.config_id,
                "filter_answerer": self.answerer, "sha256": file_sha256(self.path),
                "answers": len(self.records),
                "model_ids": sorted({r.model_id for r in self.records.values()})}
