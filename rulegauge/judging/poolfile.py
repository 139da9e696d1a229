"""Pool files: what ``rulegauge pool`` writes and ``rulegauge judge`` serves (JSON lines).

Line 1 is the header, then each question followed by its pooled pages::

    {"pool": 1, "goldset": "sample", "goldset_path": "...", "goldset_sha256": "...",
     "runs": ["s1"], "depth": 10, "configs": ["rrf_k60_bm25+dense+boost"],
     "questions": 57, "pages": 212}
    {"type": "question", "question_id": "bw-01", "question": "...", "language": "en",
     "gold": [{"page": "bw-rules#3", "grade": 1, "text": "..."}]}
    {"type": "page", "question_id": "bw-01", "page": "bw-rules#4", "text": "...",
     "found_by": [{"run": "s1", "source": "bm25", "kind": "arm", "rank": 2}]}

The gold set's SHA-256 travels with the pool so that a judging session and a merge
can check they judge the gold set the pool was made from. Reading reports every
problem with ``file:line`` (bad JSON, a missing header, unknown keys or types, pages
of questions the pool does not hold, a page pooled twice for one question), and a
pool whose header counts (``questions``, ``pages``) are not what the file holds: a pool
cut short is never judged without a word.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core import atomic
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import dumps_lines, read_file_records
from rulegauge.corpus.records import split_page_key

POOL_VERSION = 1


@dataclass(frozen=True, order=True)
class FoundBy:
    """Which run and which config (``kind="config"``) or arm (``kind="arm"``) ranked a
    pooled page, at which page rank."""

    run: str
    source: str
    kind: str
    rank: int


@dataclass(frozen=True)
class PoolQuestion:
    question_id: str
    question: str
    language: str
    gold: tuple[tuple[str, int, str], ...]
    """(page id, grade, text) of the question's relevant pages, for reference."""


@dataclass(frozen=True)
class PoolPage:
    question_id: str
    page: str
    found_by: tuple[FoundBy, ...]
    text: str


@dataclass(frozen=True)
class Pool:
    goldset: str
    goldset_path: str
    goldset_sha256: str
    runs: tuple[str, ...]
    depth: int
    configs: tuple[str, ...]
    questions: tuple[PoolQuestion, ...]
    pages: tuple[PoolPage, ...]


def write_pool(pool: Pool, path: Path | str) -> Path:
    """Write ``pool`` atomically (module docstring's layout)."""
    lines: list[dict[str, Any]] = [{
        "pool": POOL_VERSION, "goldset": pool.goldset, "goldset_path": pool.goldset_path,
        "goldset_sha256": pool.goldset_sha256, "runs": list(pool.runs), "depth": pool.depth,
        "configs": list(pool.configs), "questions": len(pool.questions),
        "pages": len(pool.pages)}]
    by_q: dict[str, list[PoolPage]] = {}
    for p in pool.pages:
        by_q.setdefault(p.question_id, []).append(p)
    for q in pool.questions:
        lines.append({"type": "question", "question_id": q.question_id, "question": q.question,
                      "language": q.language,
                      "gold": [{"page": p, "grade": g, "text": t} for p, g, t in q.gold]})
        lines += [{"type": "page", "question_id": p.question_id, "page": p.page,
                   "found_by": [{"run": f.run, "source": f.source, "kind": f.kind,
                                 "rank": f.rank} for f in p.found_by], "text": p.text}
                  for p in by_q.get(q.question_id, [])]
    return atomic.write_text(path, dumps_lines(lines))


def _need(rec: dict[str, Any], keys: dict[str, type | tuple[type, ...]], where: str,
          problems: list[Problem]) -> bool:
    bad = [k for k, t in keys.items() if not isinstance(rec.get(k), t)]
    for k in bad:
        problems.append(Problem(where, f"{k!r} missing or of the wrong type"))
    return not bad


def read_pool(path: Path | str) -> Pool:
    """Read a pool file; one :class:`ValidationError` with every problem."""
    problems: list[Problem] = []
    records = read_file_records(path, problems, "pool")
    if not records or "pool" not in records[0].record:
        head_problem = Problem(f"{path}:1", "not a pool file (its first line must be the header "
                               "written by rulegauge pool)")
        raise ValidationError([*problems, head_problem], f"{path}: invalid pool")
    head = records[0].record
    if head.get("pool") != POOL_VERSION:
        problems.append(Problem(records[0].where, f"pool version {head.get('pool')!r}; this "
                                f"rulegauge reads version {POOL_VERSION}"))
    _need(head, {"goldset": str, "goldset_path": str, "goldset_sha256": str, "runs": list,
                 "depth": int, "configs": list}, records[0].where, problems)
    questions: dict[str, PoolQuestion] = {}
    pages: list[PoolPage] = []
    seen: dict[tuple[str, str], str] = {}
    for r in records[1:]:
        rec, where = r.record, r.where
        if rec.get("type") == "question":
            if not _need(rec, {"question_id": str, "question": str, "language": str,
                               "gold": list}, where, problems):
                continue
            gold = tuple((str(g.get("page")), int(g.get("grade", 1)), str(g.get("text", "")))
                         for g in rec["gold"] if isinstance(g, dict))
            questions[rec["question_id"]] = PoolQuestion(rec["question_id"], rec["question"],
                                                         rec["language"], gold)
        elif rec.get("type") == "page":
            if not _need(rec, {"question_id": str, "page": str, "found_by": list, "text": str},
                         where, problems):
                continue
            qid, page = rec["question_id"], rec["page"]
            try:
                split_page_key(page)
            except ValueError as exc:
                problems.append(Problem(where, str(exc)))
                continue
            if qid not in questions:
                problems.append(Problem(where, f"page {page} of question {qid!r}, which the pool "
                                        "does not hold (its question line must come first)"))
                continue
            if (qid, page) in seen:
                problems.append(Problem(where, f"question {qid}: {page} pooled twice (first at "
                                        f"{seen[(qid, page)]})"))
                continue
            seen[(qid, page)] = where
            try:
                found = tuple(FoundBy(str(f["run"]), str(f["source"]), str(f["kind"]),
                                      int(f["rank"])) for f in rec["found_by"])
            except (KeyError, TypeError, ValueError):
                problems.append(Problem(where, "found_by entries need run, source, kind, rank"))
                continue
            pages.append(PoolPage(qid, page, found, rec["text"]))
        else:
            problems.append(Problem(where, f"unknown line type {rec.get('type')!r} "
                                    "(question or page)"))
    for key, present in (("questions", len(questions)), ("pages", len(pages))):
        said = head.get(key)
        if isinstance(said, int) and not isinstance(said, bool) and said != present:
            problems.append(Problem(records[0].where, f"the header says {said} {key}, {present} "
                                    f"{'is' if present == 1 else 'are'} present: the file was cut "
                                    "short or edited; write it again with rulegauge pool"))
    if problems:
        raise ValidationError(problems, f"{path}: invalid pool")
    return Pool(head["goldset"], head["goldset_path"], head["goldset_sha256"],
                tuple(str(x) for x in head["runs"]), head["depth"],
                tuple(str(x) for x in head["configs"]), tuple(questions.values()), tuple(pages))
