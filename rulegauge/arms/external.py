"""The ``external`` arm: ranked lists captured elsewhere (a production search
service's full-text or vector query, another system) entering rulegauge as an
arm, so they go through the same fusion grid, metrics, bands and gate.

Formats (by suffix, or ``format``): a TREC run file (``.trec``/``.txt``), Parquet
or JSONL with columns ``question_id``, ``rank``, optional ``score``, and an id:
``chunk_id``, ``page_id`` (``doc#page``), or ``doc_id`` + ``page``.

Matching. A chunk id must exist in the corpus. A page id maps to that page's
first chunk (lowest chunk id): page-level metrics are unaffected, and fused
page order is what a page-level system would produce. Every id that matches no
chunk, and every question id not in the gold set, is listed in the manifest with its
file and line. ``on_unmatched`` (:mod:`rulegauge.arms.foreign`) says what becomes of a row
whose id matches no chunk: ``"keep"`` (default) keeps it at its place as a non-relevant
foreign hit under its id; ``"error"`` stops the run with the full list (file, line, id; rows
of questions not in the gold set too); ``"drop"`` leaves it out (the rows below move up)
with a warning saying how many moved. Rows of a question not in the gold set are left out
(listed) unless the rule is ``error``: they move no rank.

Order. Rows are re-ranked per question by score descending, then id ascending
(rulegauge's tie rule; a foreign row's id is its own); without a score column, by the
given rank. Ranks are renumbered 1..n after the rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from rulegauge.arms.base import ARMS, ArmContext
from rulegauge.arms.foreign import DEFAULT_UNMATCHED, ForeignCount, apply_rule, bad_foreign_ids, check_unmatched
from rulegauge.arms.results import ArmResult
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.core.jsonl import read_records
from rulegauge.core.ordering import order
from rulegauge.core.tablerows import rows
from rulegauge.corpus.records import Corpus, page_key
from rulegauge.goldset.records import Question
from rulegauge.interop.trec import read_run

NO_ROWS = "the ranked file has no matched rows for the question"


def read_ranked(path: Path, fmt: str | None = None) -> pd.DataFrame:
    """Rows (question_id, id, id_kind, rank, score, line) from a TREC/Parquet/JSONL file."""
    fmt = fmt or {".parquet": "parquet", ".jsonl": "jsonl"}.get(path.suffix.lower(), "trec")
    if fmt == "trec":
        lines = read_run(path)
        return pd.DataFrame({"question_id": [x.qid for x in lines], "id": [x.docid for x in lines],
                             "rank": [x.rank for x in lines], "score": [x.score for x in lines],
                             "line": [x.line for x in lines]})
    if fmt == "parquet":
        df = pd.read_parquet(path)
        df["line"] = np.arange(1, len(df) + 1)
    elif fmt == "jsonl":
        problems: list[Problem] = []
        recs = [{**r.record, "line": r.line} for r in read_records(path, problems)]
        if problems:
            raise ValidationError(problems, f"{path}: malformed JSONL")
        df = pd.DataFrame(recs)
    else:
        raise ConfigError(f"external arm: unknown format {fmt!r}; choose trec, parquet or jsonl")
    if "chunk_id" in df:
        df["id"] = df["chunk_id"]
    elif "page_id" in df:
        df["id"] = df["page_id"]
    elif {"doc_id", "page"} <= set(df.columns):
        df["id"] = df["doc_id"].astype(str) + "#" + df["page"].astype(str)
    else:
        raise ConfigError(f"{path}: needs a chunk_id, page_id, or doc_id + page column")
    missing = {"question_id", "rank"} - set(df.columns)
    if missing:
        raise ConfigError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    if "score" not in df:
        df["score"] = np.nan
    return df[["question_id", "id", "rank", "score", "line"]]


@ARMS.register("external")
class ExternalArm:
    """Arm reading ranked lists from a file. Params: path, format, on_unmatched."""

    name: ClassVar[str] = "external"

    def __init__(self, path: str, format: str | None = None, on_unmatched: str = DEFAULT_UNMATCHED) -> None:
        check_unmatched(on_unmatched, "external arm")
        self.path = Path(path)
        if not self.path.exists():
            raise ConfigError(f"external arm: file not found: {self.path}")
        self.format, self.on_unmatched = format, on_unmatched
        self.unmatched: list[str] = []
        self.count = ForeignCount(on_unmatched)
        self._rows: pd.DataFrame | None = None

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        df = read_ranked(self.path, self.format)
        first_chunk: dict[str, str] = {}
        for c in corpus.chunks:  # chunks are in id order: the first seen is the lowest id
            first_chunk.setdefault(page_key(c.doc_id, c.page), c.chunk_id)
        ids = corpus.chunk_by_id
        df["chunk_id"] = [i if i in ids else first_chunk.get(i) for i in df["id"]]
        df["foreign"] = df["chunk_id"].isna()
        self._rows = df

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._rows is None:
            raise RuntimeError("external arm: prepare() must run before search()")
        df = self._rows
        known = {q.question_id for q in questions}
        asked = df["question_id"].isin(known)
        problems = [Problem(f"{self.path}:{r.line}", f"id {r.id!r} matches no chunk or page of the corpus")
                    for r in rows(df[df["foreign"]], index=True)]
        problems += [Problem(f"{self.path}:{r.line}", f"question {r.question_id!r} is not in the gold set")
                     for r in rows(df[~asked], index=True)]
        self.unmatched = [str(p) for p in problems]
        if problems and self.on_unmatched == "error":
            raise ValidationError(problems, f"external arm {self.path}: unmatched ids")
        ok = df[asked].assign(key=df["chunk_id"].where(df["chunk_id"].notna(), df["id"].astype(str)))
        ok = ok.drop_duplicates(["question_id", "key"])
        out = []
        groups = dict(tuple(ok.groupby("question_id")))
        self.count = ForeignCount(self.on_unmatched)
        for q in questions:
            g = groups.get(q.question_id)
            if g is None:
                out.append(ArmResult(q.question_id, self.name, (), NO_ROWS))
                continue
            has_score = g["score"].notna().all()
            key = g["score"].to_numpy(float) if has_score else -g["rank"].to_numpy(float)
            ids = g["key"].to_numpy(dtype=object)
            idx = order(key, ids)
            sc, rk, outside = g["score"].to_numpy(float), g["rank"].to_numpy(), g["foreign"].to_numpy(bool)
            listed = apply_rule(((str(ids[i]), bool(outside[i]), float(sc[i]) if has_score else float(1.0 / rk[i]))
                                 for i in idx), depth, self.on_unmatched)
            self.count.add(listed)
            out.append(ArmResult(q.question_id, self.name, listed.hits,
                                 None if listed.hits else NO_ROWS, listed.foreign))
        kept = {(r.question_id, i) for r in out for i in r.foreign}
        bad = bad_foreign_ids((f"{self.path}:{r.line}", str(r.id)) for r in rows(ok[ok["foreign"]], index=True)
                              if (r.question_id, str(r.id)) in kept)
        if bad:
            raise ValidationError(bad, f"external arm {self.path}: ids that cannot be kept as foreign hits")
        return out

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "path": str(self.path), "sha256": file_sha256(self.path),
                "format": self.format, "on_unmatched": self.on_unmatched,
                "unmatched": self.unmatched[:100], "unmatched_count": len(self.unmatched),
                **self.count.manifest(), **({"warning": w} if (w := self.count.warning()) else {})}
